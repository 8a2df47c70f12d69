// The C API's client half (and what both halves share: errors, version).
#include <cmath>
#include <cstring>
#include <deque>

#include "capi/src/capi_support.h"
#include <kinesync/client/stream_client.h>

using namespace ks;
using ks::capi::fail;
using ks::capi::guarded;
using ks::capi::null_handle;
using ks::capi::value_or;

// The C enums mirror the C++ ones value for value.
static_assert(int(IoMode::OwnThread) == KS_IO_OWN_THREAD && int(IoMode::Pumped) == KS_IO_PUMPED);
static_assert(int(ConnectionState::Connected) == KS_CLIENT_CONNECTED && int(ConnectionState::Disconnected) == KS_CLIENT_DISCONNECTED);
static_assert(int(DisconnectCode::NoToken) == KS_DISCONNECT_NO_TOKEN && int(DisconnectCode::TokenInvalid) == KS_DISCONNECT_TOKEN_INVALID);
static_assert(int(DisconnectCode::SessionInUse) == KS_DISCONNECT_SESSION_IN_USE);
static_assert(int(Errc::InvalidToken) == KS_ERROR_INVALID_TOKEN && int(Errc::InvalidPose) == KS_ERROR_INVALID_POSE);
static_assert(int(Errc::Unsupported) == KS_ERROR_UNSUPPORTED);
static_assert(int(ClientEventKind::CharacterAdded) == KS_EVENT_CHARACTER_ADDED && int(ClientEventKind::Reset) == KS_EVENT_RESET);

struct ks_client {
    StreamClient client;
    std::deque<ClientEvent> events;
    std::string reason;  // ks_client_disconnect_reason's storage
    explicit ks_client(const StreamClientConfig& cfg) : client(cfg) {}
};

namespace ks::capi {
namespace {
thread_local char last_error_text[kLastErrorCapacity];
}
void set_last_error(std::string_view why) {
    size_t n = why.size();
    if (n >= kLastErrorCapacity) {
        n = kLastErrorCapacity - 4;
        while (n > 0 && (static_cast<unsigned char>(why[n]) & 0xC0) == 0x80) --n;  // not inside a UTF-8 sequence
    }
    why.copy(last_error_text, n);
    if (n < why.size()) std::memcpy(last_error_text + n, "...", 3), n += 3;
    last_error_text[n] = '\0';
}
const char* last_error() { return last_error_text; }
const char*& current_function() {
    thread_local const char* f = "";
    return f;
}
}  // namespace ks::capi

extern "C" {

const char* ks_last_error(void) { return ks::capi::last_error(); }
const char* ks_version(void) { return KS_VERSION; }

void ks_client_config_init(ks_client_config* cfg) {
    if (!cfg) return ks::capi::set_last_error("ks_client_config_init: NULL cfg");
    ks::capi::set_last_error({});
    cfg->host = "127.0.0.1";
    cfg->port = 40000;
    cfg->strategy = "deadblend+sod";
    cfg->io = KS_IO_PUMPED;
    cfg->timeout_s = 5.0;
    cfg->reconnect_after_s = -1.0;
    cfg->connect_token = nullptr;
    cfg->connect_token_size = 0;
}

ks_result ks_client_create(const ks_client_config* cfg, ks_client** out) {
    return guarded("ks_client_create", [&] {
        if (!cfg || !out) return fail(KS_ERROR_INVALID_ARGUMENT, std::string("ks_client_create: NULL ") + (cfg ? "out" : "cfg"));
        *out = nullptr;
        StreamClientConfig c;
        if (cfg->host) c.host = cfg->host;
        c.port = cfg->port;
        if (cfg->strategy && !strategy_from_name(cfg->strategy, c.reconstruct.strategy))
            return fail(KS_ERROR_INVALID_CONFIG, std::string("ks_client_create: config.strategy = '") + cfg->strategy +
                                                      "': not snap, interp, hermite, extrap, deadblend, deadblend+sod, hermite+ahead or deadblend+sod+ahead");
        c.io = IoMode(int(cfg->io));  // same values (static_assert above); StreamClient refuses others
        c.timeout_s = cfg->timeout_s;
        c.reconnect_after_s = cfg->reconnect_after_s;
        if (!cfg->connect_token != !cfg->connect_token_size)
            return fail(KS_ERROR_INVALID_ARGUMENT, std::string("ks_client_create: config.connect_token is ") +
                                                       (cfg->connect_token ? "set" : "NULL") + " with config.connect_token_size = " +
                                                       std::to_string(cfg->connect_token_size) + " (both set, or NULL and 0 for no token)");
        if (cfg->connect_token) c.connect_token.assign(cfg->connect_token, cfg->connect_token + cfg->connect_token_size);
        *out = new ks_client(c);
        return KS_OK;
    });
}

void ks_client_destroy(ks_client* c) {
    guarded("ks_client_destroy", [&] {
        delete c;
        return KS_OK;
    });
}

#define KS_NEED(c) \
    if (!(c)) return fail(KS_ERROR_INVALID_ARGUMENT, std::string(ks::capi::current_function()) + ": NULL client")

ks_result ks_client_connect(ks_client* c) {
    return guarded("ks_client_connect", [&] {
        KS_NEED(c);
        c->client.connect();
        return KS_OK;
    });
}

ks_result ks_client_connect_token(ks_client* c, const uint8_t* token, size_t size) {
    return guarded("ks_client_connect_token", [&] {
        KS_NEED(c);
        if (!token || !size)
            return fail(KS_ERROR_INVALID_ARGUMENT, std::string("ks_client_connect_token: ") + (token ? "size = 0" : "NULL token"));
        c->client.connect(std::vector<uint8_t>(token, token + size));
        return KS_OK;
    });
}

ks_disconnect_code ks_client_disconnect_code(const ks_client* c) {
    if (!c) return null_handle("ks_client_disconnect_code", KS_DISCONNECT_NONE);
    return value_or("ks_client_disconnect_code", KS_DISCONNECT_NONE, [&] { return ks_disconnect_code(int(c->client.disconnect_code())); });
}

const char* ks_client_disconnect_reason(ks_client* c) {
    if (!c) return null_handle("ks_client_disconnect_reason", "");
    return value_or("ks_client_disconnect_reason", "", [&] {
        c->reason = c->client.disconnect_reason();
        return c->reason.c_str();
    });
}

ks_result ks_client_disconnect(ks_client* c) {
    return guarded("ks_client_disconnect", [&] {
        KS_NEED(c);
        c->client.disconnect();
        return KS_OK;
    });
}

ks_result ks_client_update(ks_client* c) {
    return guarded("ks_client_update", [&] {
        KS_NEED(c);
        c->client.update();
        for (const ClientEvent& e : c->client.take_events()) c->events.push_back(e);
        return KS_OK;
    });
}

ks_result ks_client_poll(ks_client* c) {
    return guarded("ks_client_poll", [&] {
        KS_NEED(c);
        c->client.poll();
        return KS_OK;
    });
}

ks_client_state ks_client_get_state(const ks_client* c) {
    if (!c) return null_handle("ks_client_get_state", KS_CLIENT_IDLE);
    return value_or("ks_client_get_state", KS_CLIENT_IDLE, [&] { return ks_client_state(int(c->client.state())); });
}

ks_result ks_client_set_viewpoint(ks_client* c, float x, float y, float z) {
    return guarded("ks_client_set_viewpoint", [&] {
        KS_NEED(c);
        c->client.set_viewpoint(vec3{x, y, z});
        return KS_OK;
    });
}

ks_result ks_client_set_skeleton_cache(ks_client* c, const char* dir) {
    return guarded("ks_client_set_skeleton_cache", [&] {
        KS_NEED(c);
        c->client.set_skeleton_cache(dir ? dir : "");
        return KS_OK;
    });
}

int ks_client_next_event(ks_client* c, ks_event* out) {
    if (!c) return null_handle("ks_client_next_event", 0);
    if (!out) return ks::capi::fail(0, "ks_client_next_event: NULL out");
    ks::capi::set_last_error({});
    if (c->events.empty()) return 0;
    const ClientEvent e = c->events.front();
    c->events.pop_front();
    *out = {ks_event_kind(int(e.kind)), e.character, e.epoch, e.tick};
    return 1;
}

int ks_client_character_count(const ks_client* c) {
    if (!c) return null_handle("ks_client_character_count", 0);
    return value_or("ks_client_character_count", 0, [&] { return int(c->client.characters().size()); });
}

ks_result ks_client_character_at(const ks_client* c, int index, ks_character_info* out) {
    return guarded("ks_client_character_at", [&] {
        KS_NEED(c);
        if (!out) return fail(KS_ERROR_INVALID_ARGUMENT, "ks_client_character_at: NULL out");
        if (index < 0 || index >= int(c->client.characters().size()))
            return fail(KS_ERROR_INVALID_ARGUMENT, "ks_client_character_at: index " + std::to_string(index) + " out of range 0.." +
                                                       std::to_string(int(c->client.characters().size()) - 1));
        const RemoteCharacter& r = *c->client.characters()[size_t(index)];
        *out = {r.id,           r.skeleton_id,          r.skeleton.size(), r.ready ? 1 : 0,
                r.epoch,        r.metres_per_unit,      r.name.c_str(),    r.skeleton_name.c_str(),
                r.newest_tick,  r.snapshots,            r.look_ahead ? 1 : 0};
        return KS_OK;
    });
}

ks_result ks_client_get_stats(const ks_client* c, ks_client_stats* out) {
    return guarded("ks_client_get_stats", [&] {
        KS_NEED(c);
        if (!out) return fail(KS_ERROR_INVALID_ARGUMENT, "ks_client_get_stats: NULL out");
        const StreamClientStats s = c->client.stats();
        const ClientSessionStats& n = s.session;
        *out = {s.rtt_ms,          n.bytes_in,       n.bytes_out,      n.datagrams_in,      n.datagrams_out, n.snapshots_received,
                n.snapshots_lost,  n.snapshots_late, n.malformed,      n.entries_refused,   s.reconnects,
                n.connect_requests, n.challenges,    n.challenges_forged, n.entries_early,
                n.datagrams_lost,  n.datagrams_late};
        return KS_OK;
    });
}

ks_result ks_client_get_skeleton_stats(const ks_client* c, ks_client_skeleton_stats* out) {
    return guarded("ks_client_get_skeleton_stats", [&] {
        KS_NEED(c);
        if (!out) return fail(KS_ERROR_INVALID_ARGUMENT, "ks_client_get_skeleton_stats: NULL out");
        const StreamClientStats s = c->client.stats();
        const ClientSessionStats& n = s.session;
        *out = {n.skeletons_offered, n.skeletons_by_reference, n.skeletons_in_full, n.skeleton_errors,
                s.skeleton_cache_refused, s.skeleton_cache_save_failures};
        return KS_OK;
    });
}

namespace {
const RemoteCharacter* find(const ks_client* c, uint16_t id, int capacity, const char* fn) {
    const RemoteCharacter* r = c->client.character(id);
    if (!r) throw Error(Errc::UnknownId, std::string(fn) + ": unknown character " + std::to_string(id), "character");
    if (capacity < r->skeleton.size())
        throw Error(Errc::InvalidArgument, std::string(fn) + ": capacity " + std::to_string(capacity) + " < " +
                                               std::to_string(r->skeleton.size()) + " joints",
                    "capacity");
    return r;
}
ks_result copy_pose(const ks_client* c, uint16_t id, ks_kform* joints, int capacity, bool global, const char* fn) {
    return guarded(fn, [&] {
        KS_NEED(c);
        if (!joints) return fail(KS_ERROR_INVALID_ARGUMENT, std::string(fn) + ": NULL joints");
        const RemoteCharacter* r = find(c, id, capacity, fn);
        const Pose& p = global ? r->global : r->local;
        for (int j = 0; j < p.size(); ++j) joints[j] = ks::capi::to_c(p.get(j));
        return KS_OK;
    });
}
}  // namespace

ks_result ks_client_skeleton(const ks_client* c, uint16_t character, int* parents, float* offsets, int capacity) {
    return guarded("ks_client_skeleton", [&] {
        KS_NEED(c);
        const RemoteCharacter* r = find(c, character, capacity, "ks_client_skeleton");
        for (int j = 0; j < r->skeleton.size(); ++j) {
            if (parents) parents[j] = r->skeleton.parents[size_t(j)];
            if (offsets) {
                const vec3 o = r->skeleton.offsets[size_t(j)];
                offsets[3 * j] = o.x, offsets[3 * j + 1] = o.y, offsets[3 * j + 2] = o.z;
            }
        }
        return KS_OK;
    });
}

ks_result ks_client_local_pose(const ks_client* c, uint16_t character, ks_kform* joints, int capacity) {
    return copy_pose(c, character, joints, capacity, false, "ks_client_local_pose");
}

ks_result ks_client_global_pose(const ks_client* c, uint16_t character, ks_kform* joints, int capacity) {
    return copy_pose(c, character, joints, capacity, true, "ks_client_global_pose");
}

double ks_client_render_time(const ks_client* c) {
    if (!c) return null_handle("ks_client_render_time", 0.0);
    return value_or("ks_client_render_time", 0.0, [&] { return c->client.render_time(); });
}

}  // extern "C"
