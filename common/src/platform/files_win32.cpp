// Windows: a file created with a protected ACL that grants its owner alone, flushed, then moved
// over the target.
#if defined(_WIN32)
#include "common/src/platform/files.h"

#include <windows.h>
#include <sddl.h>

#include <stdexcept>

namespace ks {

namespace {

std::string last_error_text() {
    char buf[256] = {};
    FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, GetLastError(), 0, buf, sizeof buf, nullptr);
    std::string s(buf);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

}  // namespace

void check_private_file(const std::string&) {}

void write_private_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    // "D:P(A;;FA;;;OW)": a protected DACL (nothing inherited) with one entry, full access for the owner.
    PSECURITY_DESCRIPTOR sd = nullptr;
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorA("D:P(A;;FA;;;OW)", SDDL_REVISION_1, &sd, nullptr))
        throw std::runtime_error(path + ": cannot make a private ACL (" + last_error_text() + ")");
    SECURITY_ATTRIBUTES sa{sizeof sa, sd, FALSE};
    const std::string tmp = path + ".tmp";
    HANDLE h = CreateFileA(tmp.c_str(), GENERIC_WRITE, 0, &sa, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    LocalFree(sd);
    if (h == INVALID_HANDLE_VALUE) throw std::runtime_error(path + ": cannot create (" + last_error_text() + ")");
    DWORD written = 0;
    bool ok = WriteFile(h, bytes.data(), DWORD(bytes.size()), &written, nullptr) && written == bytes.size();
    ok = FlushFileBuffers(h) && ok;
    ok = CloseHandle(h) && ok;
    if (!ok || !MoveFileExA(tmp.c_str(), path.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
        const std::string why = last_error_text();
        DeleteFileA(tmp.c_str());
        throw std::runtime_error(path + ": cannot write (" + why + ")");
    }
}

}  // namespace ks
#endif
