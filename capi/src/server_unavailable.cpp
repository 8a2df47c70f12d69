// The C API's server half in a client-only build (KS_CLIENT_ONLY: the Windows build): every
// function is exported, and each one that returns a ks_result refuses with KS_ERROR_UNSUPPORTED
// and a message naming the build, so a plugin finds out at its first call, not by a missing symbol.
#include <cstring>
#include <string>

#include "capi/src/capi_support.h"

using ks::capi::fail;

namespace {

ks_result unsupported(const char* fn) {
    return fail(KS_ERROR_UNSUPPORTED, std::string(fn) +
                                          ": this kinesync library was built client-only (KS_CLIENT_ONLY, the Windows build: "
                                          "no server and no token issuing); a game's server links a full build");
}

}  // namespace

extern "C" {

void ks_server_config_init(ks_server_config* cfg) {
    if (cfg) std::memset(cfg, 0, sizeof *cfg);
    unsupported("ks_server_config_init");
}
ks_result ks_token_issue(const char*, const char* const*, int, uint64_t, uint32_t, uint8_t*, size_t, size_t* out_size) {
    if (out_size) *out_size = 0;
    return unsupported("ks_token_issue");
}
ks_result ks_server_create(const ks_server_config*, ks_server** out) {
    if (out) *out = nullptr;
    return unsupported("ks_server_create");
}
void ks_server_destroy(ks_server*) {}
uint16_t ks_server_port(const ks_server*) {
    unsupported("ks_server_port");
    return 0;
}
ks_result ks_server_add_skeleton(ks_server*, const char*, int, const int*, const char* const*, const float*, float, uint16_t*) {
    return unsupported("ks_server_add_skeleton");
}
ks_result ks_server_add_character(ks_server*, uint16_t, const char*, uint16_t*) { return unsupported("ks_server_add_character"); }
ks_result ks_server_remove_character(ks_server*, uint16_t) { return unsupported("ks_server_remove_character"); }
ks_result ks_server_set_pose(ks_server*, uint16_t, const ks_kform*, int) { return unsupported("ks_server_set_pose"); }
ks_result ks_server_set_look_ahead(ks_server*, uint16_t, const ks_kform*, int, float, uint16_t) {
    return unsupported("ks_server_set_look_ahead");
}
ks_result ks_server_teleport(ks_server*, uint16_t) { return unsupported("ks_server_teleport"); }
ks_result ks_server_reset(ks_server*, uint16_t) { return unsupported("ks_server_reset"); }
ks_result ks_server_end_tick(ks_server*, uint32_t*) { return unsupported("ks_server_end_tick"); }
ks_result ks_server_poll(ks_server*) { return unsupported("ks_server_poll"); }
ks_result ks_server_close(ks_server*) { return unsupported("ks_server_close"); }
uint32_t ks_server_client_count(const ks_server*) {
    unsupported("ks_server_client_count");
    return 0;
}

}  // extern "C"
