// POSIX: mode bits, mkstemp (created 0600), fsync, rename.
#if !defined(_WIN32)
#include "common/src/platform/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace ks {

void check_private_file(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
        throw std::runtime_error(path + ": the key file is open to group or others (mode " + mode + "): chmod 600 " + path);
    }
}

void write_private_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::string tmp = path + ".XXXXXX";
    const int fd = ::mkstemp(tmp.data());  // mode 0600, created new, whatever the umask
    if (fd < 0) throw std::runtime_error(path + ": cannot create (" + std::strerror(errno) + ")");
    bool ok = ::fchmod(fd, 0600) == 0;
    for (size_t done = 0; ok && done < bytes.size();) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        if (ok) done += size_t(n);
    }
    ok = ::fsync(fd) == 0 && ok;
    const int err = errno;
    ok = ::close(fd) == 0 && ok;
    if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(ok ? errno : err);
        ::unlink(tmp.c_str());
        throw std::runtime_error(path + ": cannot write (" + why + ")");
    }
}

}  // namespace ks
#endif
