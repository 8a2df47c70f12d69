#pragma once
// Who runs a stream server's or client's network I/O.

namespace ks {

enum class IoMode {
    OwnThread,  // a thread of the library's own: datagrams are handled as they arrive
    Pumped,     // the caller's thread: nothing happens between calls to poll() / update()
};

}  // namespace ks
