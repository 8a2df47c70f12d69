// The C API's server half.
#include <cstdio>
#include <vector>

#include "capi/src/capi_support.h"
#include <kinesync/server/stream_server.h>

#include "common/src/net/connect_token.h"

using namespace ks;
using ks::capi::fail;
using ks::capi::guarded;

struct ks_server {
    StreamServer server;
    std::vector<int> joints;  // per skeleton id
    Pose scratch;
    explicit ks_server(const StreamServerConfig& cfg) : server(cfg) {}
};

#define KS_NEED(s) \
    if (!(s)) return fail(KS_ERROR_INVALID_ARGUMENT, std::string(ks::capi::current_function()) + ": NULL server")

extern "C" {

void ks_server_config_init(ks_server_config* cfg) {
    if (!cfg) return ks::capi::set_last_error("ks_server_config_init: NULL cfg");
    ks::capi::set_last_error({});
    const StreamServerConfig d;
    cfg->bind = "127.0.0.1";
    cfg->port = d.port;
    cfg->network = 1;
    cfg->tick_hz = d.tick_hz;
    cfg->snapshot_hz = d.snapshot_hz;
    cfg->bandwidth_bps = d.bandwidth_bps;
    cfg->max_clients = d.max_clients;
    cfg->timeout_s = d.timeout_s;
    cfg->io = KS_IO_OWN_THREAD;
    cfg->record_path = nullptr;
    cfg->private_key_hex = nullptr;
    cfg->public_address = nullptr;
    cfg->insecure_dev = 0;
    cfg->insecure_dev_public = 0;
}

ks_result ks_token_issue(const char* private_key_hex, const char* const* servers, int server_count, uint64_t client_id,
                         uint32_t valid_for_s, uint8_t* out, size_t capacity, size_t* out_size) {
    return guarded("ks_token_issue", [&] {
        if (!private_key_hex || !servers || server_count < 0 || !out_size || (!out && capacity))
            return fail(KS_ERROR_INVALID_ARGUMENT, "ks_token_issue: NULL argument");
        const std::optional<net::Key> key = net::key_from_hex(private_key_hex);
        if (!key) return fail(KS_ERROR_INVALID_ARGUMENT, "ks_token_issue: the private key is not 64 hex digits");
        net::TokenRequest r;
        r.client_id = client_id;
        r.valid_for_s = valid_for_s;
        for (int i = 0; i < server_count; ++i) {
            if (!servers[i]) return fail(KS_ERROR_INVALID_ARGUMENT, "ks_token_issue: NULL server name");
            r.servers.push_back(servers[i]);
        }
        std::vector<uint8_t> token;
        try {
            token = net::issue_connect_token(*key, r, net::unix_now_s());
        } catch (const std::invalid_argument& e) {
            return fail(KS_ERROR_INVALID_ARGUMENT, std::string("ks_token_issue: ") + e.what());
        }
        *out_size = token.size();
        if (token.size() > capacity)
            return fail(KS_ERROR_INVALID_ARGUMENT, "ks_token_issue: the token needs " + std::to_string(token.size()) + " bytes");
        std::copy(token.begin(), token.end(), out);
        return KS_OK;
    });
}

ks_result ks_server_create(const ks_server_config* cfg, ks_server** out) {
    return guarded("ks_server_create", [&] {
        if (!cfg || !out) return fail(KS_ERROR_INVALID_ARGUMENT, std::string("ks_server_create: NULL ") + (cfg ? "out" : "cfg"));
        *out = nullptr;
        StreamServerConfig c;
        if (cfg->bind) c.bind = cfg->bind;
        c.port = cfg->port;
        c.network = cfg->network != 0;
        c.tick_hz = cfg->tick_hz;
        c.snapshot_hz = cfg->snapshot_hz;
        c.bandwidth_bps = cfg->bandwidth_bps;
        c.max_clients = cfg->max_clients;
        c.timeout_s = cfg->timeout_s;
        c.io = IoMode(int(cfg->io));  // same values as ks_io_mode; StreamServer refuses others
        if (cfg->record_path) c.record_path = cfg->record_path;
        if (cfg->private_key_hex) {
            c.private_key = net::key_from_hex(cfg->private_key_hex);
            if (!c.private_key) return fail(KS_ERROR_INVALID_CONFIG, "ks_server_create: config.private_key_hex is not 64 hex digits");
        }
        if (cfg->public_address) c.public_address = cfg->public_address;
        c.insecure_dev = cfg->insecure_dev != 0;
        c.insecure_dev_public = cfg->insecure_dev_public != 0;
        *out = new ks_server(c);
        return KS_OK;
    });
}

void ks_server_destroy(ks_server* s) {
    guarded("ks_server_destroy", [&] {
        delete s;
        return KS_OK;
    });
}

uint16_t ks_server_port(const ks_server* s) {
    if (!s) return ks::capi::null_handle("ks_server_port", uint16_t(0));
    return ks::capi::value_or("ks_server_port", uint16_t(0), [&] { return s->server.port(); });
}

ks_result ks_server_add_skeleton(ks_server* s, const char* name, int joint_count, const int* parents, const char* const* joint_names,
                                 const float* offsets, float metres_per_unit, uint16_t* out_id) {
    return guarded("ks_server_add_skeleton", [&] {
        KS_NEED(s);
        if (joint_count <= 0 || joint_count > kMaxJoints)  // before reading joint_count entries of anything
            return fail(KS_ERROR_INVALID_SKELETON, "ks_server_add_skeleton: joint_count = " + std::to_string(joint_count) + ", not 1.." +
                                                       std::to_string(kMaxJoints));
        if (!parents || !offsets || !out_id)
            return fail(KS_ERROR_INVALID_ARGUMENT, std::string("ks_server_add_skeleton: NULL ") + (!parents ? "parents" : !offsets ? "offsets" : "out_id"));
        Skeleton sk;
        for (int j = 0; j < joint_count; ++j) {
            char fallback[16];
            std::snprintf(fallback, sizeof fallback, "j%d", j);  // not "j" + to_string: GCC 12's false -Wrestrict at -O3
            sk.names.push_back(joint_names && joint_names[j] ? joint_names[j] : fallback);
            sk.parents.push_back(parents[j]);
            sk.offsets.push_back({offsets[3 * j], offsets[3 * j + 1], offsets[3 * j + 2]});
        }
        *out_id = s->server.add_skeleton(name ? name : "", sk, metres_per_unit);
        if (s->joints.size() <= *out_id) s->joints.resize(size_t(*out_id) + 1);
        s->joints[*out_id] = joint_count;
        return KS_OK;
    });
}

ks_result ks_server_add_character(ks_server* s, uint16_t skeleton, const char* name, uint16_t* out_id) {
    return guarded("ks_server_add_character", [&] {
        KS_NEED(s);
        if (!out_id) return fail(KS_ERROR_INVALID_ARGUMENT, "ks_server_add_character: NULL out_id");
        *out_id = s->server.add_character(skeleton, name ? name : "");
        return KS_OK;
    });
}

ks_result ks_server_remove_character(ks_server* s, uint16_t character) {
    return guarded("ks_server_remove_character", [&] {
        KS_NEED(s);
        s->server.remove_character(character);
        return KS_OK;
    });
}

namespace {
// The caller's joints into s->scratch, or the refusal (naming `fn`) of a NULL array or a count out of range.
ks_result joints_to_scratch(ks_server* s, const ks_kform* joints, int joint_count, const char* fn) {
    if (!joints) return fail(KS_ERROR_INVALID_ARGUMENT, std::string(fn) + ": NULL joints");
    if (joint_count <= 0 || joint_count > kMaxJoints)
        return fail(KS_ERROR_INVALID_POSE, std::string(fn) + ": joint_count = " + std::to_string(joint_count) + ", not 1.." +
                                               std::to_string(kMaxJoints));
    s->scratch.resize(joint_count);
    for (int j = 0; j < joint_count; ++j) s->scratch.set(j, ks::capi::from_c(joints[j]));
    return KS_OK;
}
}  // namespace

ks_result ks_server_set_pose(ks_server* s, uint16_t character, const ks_kform* joints, int joint_count) {
    return guarded("ks_server_set_pose", [&] {
        KS_NEED(s);
        if (const ks_result r = joints_to_scratch(s, joints, joint_count, "ks_server_set_pose"); r != KS_OK) return r;
        s->server.set_pose(character, s->scratch);  // checks the id and the joint count
        return KS_OK;
    });
}

ks_result ks_server_set_look_ahead(ks_server* s, uint16_t character, const ks_kform* joints, int joint_count, float seconds,
                                   uint16_t plan) {
    return guarded("ks_server_set_look_ahead", [&] {
        KS_NEED(s);
        if (const ks_result r = joints_to_scratch(s, joints, joint_count, "ks_server_set_look_ahead"); r != KS_OK) return r;
        s->server.set_look_ahead(character, s->scratch, seconds, plan);  // checks the id, the pose and the seconds
        return KS_OK;
    });
}

ks_result ks_server_teleport(ks_server* s, uint16_t character) {
    return guarded("ks_server_teleport", [&] {
        KS_NEED(s);
        s->server.teleport(character);
        return KS_OK;
    });
}

ks_result ks_server_reset(ks_server* s, uint16_t character) {
    return guarded("ks_server_reset", [&] {
        KS_NEED(s);
        s->server.reset(character);
        return KS_OK;
    });
}

ks_result ks_server_end_tick(ks_server* s, uint32_t* out_tick) {
    return guarded("ks_server_end_tick", [&] {
        KS_NEED(s);
        const uint32_t t = s->server.end_tick();
        if (out_tick) *out_tick = t;
        return KS_OK;
    });
}

ks_result ks_server_poll(ks_server* s) {
    return guarded("ks_server_poll", [&] {
        KS_NEED(s);
        s->server.poll();
        return KS_OK;
    });
}

ks_result ks_server_close(ks_server* s) {
    return guarded("ks_server_close", [&] {
        KS_NEED(s);
        s->server.close();
        return KS_OK;
    });
}

uint32_t ks_server_client_count(const ks_server* s) {
    if (!s) return ks::capi::null_handle("ks_server_client_count", uint32_t(0));
    return ks::capi::value_or("ks_server_client_count", uint32_t(0), [&] { return uint32_t(s->server.stats().clients.size()); });
}

}  // extern "C"
