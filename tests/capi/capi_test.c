/* The C API end to end, in C: a server (pumped) streams a 2-joint character of its own, a client
 * (pumped) on loopback shows it; events, poses, skeleton and the error paths are checked. */
#define _POSIX_C_SOURCE 200809L  /* nanosleep under -std=c99 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <kinesync/kinesync.h>

#include "check.h"


static void sleep_ms(int ms) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Root sliding along x at 1 m/s, a child 1 m above it. */
static void pose_at(double t, ks_kform* j) {
    memset(j, 0, 2 * sizeof *j);
    for (int i = 0; i < 2; ++i) {
        j[i].rot[0] = 1.0f;
        j[i].scl[0] = j[i].scl[1] = j[i].scl[2] = 1.0f;
    }
    j[0].pos[0] = (float)t;
    j[0].vel[0] = 1.0f;
    j[1].pos[1] = 1.0f;
}

int main(void) {
    ks_server_config sc;
    ks_server_config_init(&sc);
    sc.bind = "127.0.0.1";
    sc.port = 0;
    sc.io = KS_IO_PUMPED;
    ks_server* server = NULL;
    CHECK(ks_server_create(&sc, &server) == KS_OK, "server: %s", ks_last_error());
    if (!server) return 1;
    const int parents[2] = {-1, 0};
    const float offsets[6] = {0, 0, 0, 0, 1, 0};
    const char* names[2] = {"root", "top"};
    uint16_t skeleton = 99, character = 99;
    CHECK(ks_server_add_skeleton(server, "stick", 2, parents, names, offsets, 1.0f, &skeleton) == KS_OK, "%s", ks_last_error());
    CHECK(ks_server_add_character(server, skeleton, "c-stick", &character) == KS_OK, "%s", ks_last_error());
    ks_kform joints[2];
    pose_at(0.0, joints);
    CHECK(ks_server_set_pose(server, character, joints, 2) == KS_OK, "%s", ks_last_error());
    {
        /* A look-ahead 0.2 s ahead under plan 3; a horizon out of range is refused naming it. */
        ks_kform ahead[2];
        pose_at(0.2, ahead);
        CHECK(ks_server_set_look_ahead(server, character, ahead, 2, 0.2f, 3) == KS_OK, "%s", ks_last_error());
        CHECK(ks_server_set_look_ahead(server, character, ahead, 2, 3.0f, 3) == KS_ERROR_INVALID_ARGUMENT, "3 s accepted");
        CHECK(strstr(ks_last_error(), "seconds") != NULL, "look-ahead message: '%s'", ks_last_error());
        CHECK(ks_server_set_look_ahead(server, character, NULL, 2, 0.2f, 3) == KS_ERROR_INVALID_ARGUMENT, "NULL accepted");
    }

    /* Errors: a code and a message, never a crash or an exception. */
    CHECK(ks_server_set_pose(server, character, joints, 1) == KS_ERROR_INVALID_POSE, "wrong joint count accepted");
    CHECK(strstr(ks_last_error(), "expected 2") != NULL, "message names the joint count: '%s'", ks_last_error());
    {
        /* A NaN and a quaternion with w = 5: refused, naming the function, field and joint. */
        ks_kform bad_joints[2] = {joints[0], joints[1]};
        bad_joints[1].pos[1] = NAN;
        CHECK(ks_server_set_pose(server, character, bad_joints, 2) == KS_ERROR_INVALID_POSE, "NaN accepted");
        CHECK(strstr(ks_last_error(), "ks_server_set_pose") && strstr(ks_last_error(), "pose.pos") && strstr(ks_last_error(), "joint 1 (top)"),
              "NaN message: '%s'", ks_last_error());
        bad_joints[1] = joints[1];
        bad_joints[0].rot[0] = 5.0f;
        CHECK(ks_server_set_pose(server, character, bad_joints, 2) == KS_ERROR_INVALID_POSE, "w = 5 accepted");
        CHECK(strstr(ks_last_error(), "not a unit quaternion") != NULL, "w = 5 message: '%s'", ks_last_error());
        /* Two roots, and a parent after its child. */
        const int two_roots[2] = {-1, -1}, after[3] = {-1, 2, 0};
        uint16_t id = 0;
        CHECK(ks_server_add_skeleton(server, "two", 2, two_roots, NULL, offsets, 1.0f, &id) == KS_ERROR_INVALID_SKELETON, "two roots accepted");
        CHECK(strstr(ks_last_error(), "second root") != NULL, "two roots message: '%s'", ks_last_error());
        const float offsets3[9] = {0};
        CHECK(ks_server_add_skeleton(server, "after", 3, after, NULL, offsets3, 1.0f, &id) == KS_ERROR_INVALID_SKELETON, "late parent accepted");
        CHECK(ks_server_add_skeleton(server, "none", 0, after, NULL, offsets3, 1.0f, &id) == KS_ERROR_INVALID_SKELETON, "0 joints accepted");
        CHECK(strcmp(ks_result_name(KS_ERROR_INVALID_SKELETON), "invalid skeleton") == 0, "ks_result_name");
    }
    {
        /* Engine conventions round trip; derived velocities. */
        ks_kform k = joints[1], e, back;
        k.pos[0] = 0.5f, k.pos[1] = 1.0f, k.pos[2] = 2.0f;
        for (int engine = KS_ENGINE_UNREAL; engine <= KS_ENGINE_GODOT; ++engine) {
            CHECK(ks_pose_to_engine((ks_engine)engine, 0.01f, &k, &e, 1) == KS_OK, "to engine: %s", ks_last_error());
            CHECK(ks_pose_from_engine((ks_engine)engine, 0.01f, &e, &back, 1) == KS_OK, "from engine: %s", ks_last_error());
            for (int i = 0; i < 3; ++i) CHECK(fabsf(back.pos[i] - k.pos[i]) < 1e-5f, "engine %d round trip pos[%d]", engine, i);
            for (int i = 0; i < 4; ++i) CHECK(fabsf(back.rot[i] - k.rot[i]) < 1e-6f, "engine %d round trip rot[%d]", engine, i);
        }
        CHECK(ks_pose_to_engine(KS_ENGINE_UNREAL, 0.01f, &k, &e, 1) == KS_OK && fabsf(e.pos[2] - 1.0f) < 1e-5f,
              "Unreal: Y up in centimetres becomes Z up (%g)", e.pos[2]);
        CHECK(ks_pose_to_engine((ks_engine)9, 1.0f, &k, &e, 1) == KS_ERROR_INVALID_ARGUMENT, "unknown engine accepted");
        ks_kform nan_k = k;
        nan_k.vel[2] = NAN;
        CHECK(ks_pose_to_engine(KS_ENGINE_UNITY, 1.0f, &nan_k, &e, 1) == KS_ERROR_INVALID_POSE && strstr(ks_last_error(), "in.vel"),
              "NaN velocity converted: '%s'", ks_last_error());
        ks_kform pair[2] = {k, nan_k};
        CHECK(ks_pose_to_engine(KS_ENGINE_UNREAL, 1.0f, pair, pair, 2) == KS_ERROR_INVALID_POSE && pair[0].pos[1] == k.pos[1],
              "a refused in-place conversion changed joint 0");
        ks_kform a = joints[1], b = joints[1], v;
        const float half = 0.05f; /* 0.1 rad about Y in 0.1 s: 1 rad/s */
        b.rot[0] = cosf(half), b.rot[1] = 0, b.rot[2] = sinf(half), b.rot[3] = 0;
        b.pos[0] = a.pos[0] + 0.2f;
        CHECK(ks_derive_velocities(&a, &b, 1, 0.1f, &v) == KS_OK, "derive: %s", ks_last_error());
        CHECK(fabsf(v.ang[1] - 1.0f) < 1e-4f && fabsf(v.vel[0] - 2.0f) < 1e-4f, "derived velocities %g %g", v.ang[1], v.vel[0]);
        CHECK(ks_derive_velocities(&a, &b, 1, 0.0f, &v) == KS_ERROR_INVALID_ARGUMENT, "dt 0 accepted");
    }
    CHECK(ks_server_teleport(server, 4242) == KS_ERROR_UNKNOWN_ID, "unknown character accepted");
    CHECK(strstr(ks_last_error(), "4242") != NULL, "message names the id: '%s'", ks_last_error());
    CHECK(ks_server_add_character(NULL, 0, "x", &character) == KS_ERROR_INVALID_ARGUMENT, "NULL server accepted");
    CHECK(strstr(ks_last_error(), "ks_server_add_character: NULL server") != NULL, "NULL message names the function: '%s'", ks_last_error());
    CHECK(ks_client_connect(NULL) == KS_ERROR_INVALID_ARGUMENT && strstr(ks_last_error(), "ks_client_connect: NULL client") != NULL,
          "NULL client message: '%s'", ks_last_error());
    ks_client_config bad;
    ks_client_config_init(&bad);
    bad.strategy = "teleportation";
    ks_client* nothing = NULL;
    CHECK(ks_client_create(&bad, &nothing) == KS_ERROR_INVALID_CONFIG && nothing == NULL, "unknown strategy accepted");
    CHECK(strstr(ks_last_error(), "config.strategy") != NULL, "strategy message: '%s'", ks_last_error());
    {  /* a message longer than the per-thread buffer is cut at a character and says so */
        static char long_name[5001];
        for (int i = 0; i < 5000; i += 2) long_name[i] = (char)0xC3, long_name[i + 1] = (char)0xA9; /* e acute */
        bad.strategy = long_name;
        CHECK(ks_client_create(&bad, &nothing) == KS_ERROR_INVALID_CONFIG, "long strategy accepted");
        const char* e = ks_last_error();
        const size_t n = strlen(e);
        CHECK(n < 2048 && n > 1000 && strncmp(e, "ks_client_create: config.strategy", 33) == 0 && strcmp(e + n - 3, "...") == 0 &&
                  (unsigned char)e[n - 4] == 0xA9,
              "long message: %zu bytes, ends '%s'", n, n > 8 ? e + n - 8 : e);
    }
    bad.strategy = NULL;
    bad.io = (ks_io_mode)7;
    CHECK(ks_client_create(&bad, &nothing) == KS_ERROR_INVALID_CONFIG && nothing == NULL, "io mode 7 accepted");
    CHECK(strstr(ks_last_error(), "config.io = 7") != NULL, "io message: '%s'", ks_last_error());
    bad.io = KS_IO_PUMPED;
    CHECK(strcmp(ks_result_name((ks_result)99), "unknown") == 0, "ks_result_name of an unknown code");
    bad.host = "no-such-host.invalid";
    CHECK(ks_client_create(&bad, &nothing) == KS_ERROR_NETWORK && nothing == NULL, "unresolvable host accepted");

    ks_client_config cc;
    ks_client_config_init(&cc);
    cc.port = ks_server_port(server);
    ks_client* client = NULL;
    CHECK(ks_client_create(&cc, &client) == KS_OK, "client: %s", ks_last_error());
    if (!client) return 1;
    CHECK(ks_client_set_skeleton_cache(client, "/dev/null/skeletons") == KS_ERROR_INVALID_CONFIG, "a cache under a device accepted");
    CHECK(strstr(ks_last_error(), "skeleton_cache_dir") != NULL, "cache message: '%s'", ks_last_error());
    CHECK(ks_client_set_skeleton_cache(client, NULL) == KS_OK, "%s", ks_last_error());
    CHECK(ks_client_connect(client) == KS_OK, "%s", ks_last_error());
    CHECK(ks_client_set_viewpoint(client, 0.0f, 1.7f, 0.0f) == KS_OK, "%s", ks_last_error());
    CHECK(ks_client_set_viewpoint(client, NAN, 0.0f, 0.0f) == KS_ERROR_INVALID_ARGUMENT, "NaN viewpoint accepted");

    int connected = 0, added = 0, teleports = 0;
    double t = 0.0;
    for (int tick = 1; tick <= 150; ++tick) {
        t = tick / 60.0;
        if (tick == 100) CHECK(ks_server_teleport(server, character) == KS_OK, "%s", ks_last_error());
        pose_at(tick >= 100 ? t + 50.0 : t, joints);
        ks_server_set_pose(server, character, joints, 2);
        ks_server_end_tick(server, NULL);
        ks_client_update(client);
        ks_event e;
        while (ks_client_next_event(client, &e)) {
            connected += e.kind == KS_EVENT_CONNECTED;
            added += e.kind == KS_EVENT_CHARACTER_ADDED && e.character == character;
            teleports += e.kind == KS_EVENT_TELEPORT && e.character == character && e.epoch == 1;
        }
        sleep_ms(16);
    }
    CHECK(ks_client_get_state(client) == KS_CLIENT_CONNECTED, "state %d", (int)ks_client_get_state(client));
    CHECK(connected == 1 && added == 1 && teleports == 1, "events: connected %d, added %d, teleports %d", connected, added, teleports);
    CHECK(ks_server_client_count(server) == 1, "server sees %u clients", ks_server_client_count(server));
    CHECK(ks_client_character_count(client) == 1, "%d characters", ks_client_character_count(client));
    ks_character_info info;
    CHECK(ks_client_character_at(client, 0, &info) == KS_OK, "%s", ks_last_error());
    CHECK(info.id == character && info.joint_count == 2 && info.ready == 1 && info.epoch == 1, "info id %u joints %d ready %d epoch %u",
          info.id, info.joint_count, info.ready, info.epoch);
    CHECK(strcmp(info.name, "c-stick") == 0 && strcmp(info.skeleton_name, "stick") == 0, "names '%s' '%s'", info.name, info.skeleton_name);
    CHECK(info.newest_tick > 0 && info.snapshots > 10, "newest tick %u, %llu snapshots", info.newest_tick, (unsigned long long)info.snapshots);
    {
        ks_client_stats st;
        CHECK(ks_client_get_stats(client, NULL) == KS_ERROR_INVALID_ARGUMENT, "NULL stats accepted");
        CHECK(ks_client_get_stats(client, &st) == KS_OK, "%s", ks_last_error());
        CHECK(st.snapshots_received >= info.snapshots / 2 && st.bytes_in > 0 && st.datagrams_in >= st.snapshots_received &&
                  st.bytes_out > 0 && st.rtt_ms >= 0 && st.malformed == 0 && st.connect_requests >= 1 && st.challenges >= 1 &&
                  st.challenges <= st.connect_requests && st.challenges_forged == 0 && st.datagrams_lost <= st.datagrams_in &&
                  st.datagrams_late <= st.datagrams_in,
              "stats: %llu snapshots, %llu bytes in, %llu datagrams in, rtt %.2f, %llu connect requests, %llu challenges",
              (unsigned long long)st.snapshots_received, (unsigned long long)st.bytes_in, (unsigned long long)st.datagrams_in, st.rtt_ms,
              (unsigned long long)st.connect_requests, (unsigned long long)st.challenges);
        ks_client_skeleton_stats sk;
        CHECK(ks_client_get_skeleton_stats(client, NULL) == KS_ERROR_INVALID_ARGUMENT, "NULL skeleton stats accepted");
        CHECK(ks_client_get_skeleton_stats(client, &sk) == KS_OK, "%s", ks_last_error());
        CHECK(sk.in_full == 1 && sk.offered == 0 && sk.by_reference == 0 && sk.errors == 0 && sk.cache_refused == 0 &&
                  sk.cache_save_failures == 0,
              "skeleton stats: %llu in full, %llu offered, %llu errors", (unsigned long long)sk.in_full,
              (unsigned long long)sk.offered, (unsigned long long)sk.errors);
    }
    int got_parents[2] = {7, 7};
    float got_offsets[6] = {0};
    CHECK(ks_client_skeleton(client, character, got_parents, got_offsets, 2) == KS_OK, "%s", ks_last_error());
    CHECK(got_parents[0] == -1 && got_parents[1] == 0 && got_offsets[4] == 1.0f, "skeleton differs");
    ks_kform global[2];
    CHECK(ks_client_global_pose(client, character, global, 1) == KS_ERROR_INVALID_ARGUMENT, "capacity 1 accepted");
    CHECK(ks_client_global_pose(client, 555, global, 2) == KS_ERROR_UNKNOWN_ID, "unknown character 555 accepted");
    /* Where the truth is at the rendered time (root x = t + 50 after the teleport), within 5 cm;
     * the child 1 m above; the root's velocity 1 m/s. Once settled: on a loaded machine ticks and
     * snapshots come late and the client corrects for a while (60 s at most). */
    for (int tick = 151; tick < 151 + 3750; ++tick) {
        if (ks_client_global_pose(client, character, global, 2) == KS_OK &&
            fabs(global[0].pos[0] - (ks_client_render_time(client) + 50.0)) < 0.05 && fabs(global[0].vel[0] - 1.0) < 0.05)
            break;
        pose_at(tick / 60.0 + 50.0, joints);
        ks_server_set_pose(server, character, joints, 2);
        ks_server_end_tick(server, NULL);
        ks_client_update(client);
        ks_event e;
        while (ks_client_next_event(client, &e)) {
        }
        sleep_ms(16);
    }
    CHECK(ks_client_global_pose(client, character, global, 2) == KS_OK, "%s", ks_last_error());
    const double want_x = ks_client_render_time(client) + 50.0;
    CHECK(fabs(global[0].pos[0] - want_x) < 0.05, "root x %.3f, truth %.3f", global[0].pos[0], want_x);
    CHECK(fabs(global[1].pos[1] - 1.0) < 0.01 && fabs(global[1].pos[0] - global[0].pos[0]) < 0.01, "child not above root");
    CHECK(fabs(global[0].vel[0] - 1.0) < 0.05, "root velocity %.3f", global[0].vel[0]);

    CHECK(ks_client_disconnect(client) == KS_OK, "%s", ks_last_error());
    ks_client_destroy(client);
    for (int i = 0; i < 5; ++i) {
        ks_server_end_tick(server, NULL);
        sleep_ms(5);
    }
    CHECK(ks_server_client_count(server) == 0, "client still held after its goodbye");
    CHECK(ks_server_close(server) == KS_OK, "%s", ks_last_error());
    CHECK(ks_server_end_tick(server, NULL) == KS_ERROR_STATE, "end_tick after close accepted");
    ks_server_destroy(server);

    /* Connect tokens: a keyed server, a token from ks_token_issue, a sealed session; the same
     * token refused the second time, with a reason. */
    {
        const char* key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
        ks_server_config ks;
        ks_server_config_init(&ks);
        ks.port = 0;
        ks.io = KS_IO_PUMPED;
        ks.private_key_hex = key;
        ks_server* secure = NULL;
        CHECK(ks_server_create(&ks, &secure) == KS_OK, "keyed server: %s", ks_last_error());
        uint16_t sk2 = 0, ch2 = 0;
        CHECK(ks_server_add_skeleton(secure, "stick", 2, parents, names, offsets, 1.0f, &sk2) == KS_OK, "%s", ks_last_error());
        CHECK(ks_server_add_character(secure, sk2, "c", &ch2) == KS_OK, "%s", ks_last_error());
        char where[64];
        snprintf(where, sizeof where, "127.0.0.1:%u", (unsigned)ks_server_port(secure));
        const char* servers[1] = {where};
        uint8_t token[2048];
        size_t token_size = 0;
        CHECK(ks_token_issue(key, servers, 1, 99, 60, token, 8, &token_size) == KS_ERROR_INVALID_ARGUMENT && token_size > 8,
              "a small buffer accepted");
        CHECK(ks_token_issue("zz", servers, 1, 99, 60, token, sizeof token, &token_size) == KS_ERROR_INVALID_ARGUMENT, "bad key accepted");
        CHECK(ks_token_issue(key, servers, 1, 99, 60, token, sizeof token, &token_size) == KS_OK, "%s", ks_last_error());
        ks_client_config tc;
        ks_client_config_init(&tc);
        tc.host = "203.0.113.1"; /* not used: the token names the server */
        tc.connect_token = token;
        tc.connect_token_size = token_size;
        ks_client* tclient = NULL;
        CHECK(ks_client_create(&tc, &tclient) == KS_OK, "token client: %s", ks_last_error());
        CHECK(ks_client_connect(tclient) == KS_OK, "%s", ks_last_error());
        for (int i = 0; i < 12000 && ks_client_get_state(tclient) != KS_CLIENT_CONNECTED; ++i) { /* 60 s at least */
            ks_server_set_pose(secure, ch2, joints, 2);
            ks_server_end_tick(secure, NULL);
            ks_client_update(tclient);
            sleep_ms(5);
        }
        CHECK(ks_client_get_state(tclient) == KS_CLIENT_CONNECTED, "token client state %d", (int)ks_client_get_state(tclient));
        ks_server_end_tick(secure, NULL);
        CHECK(ks_server_client_count(secure) == 1, "keyed server sees %u clients", ks_server_client_count(secure));
        ks_client_disconnect(tclient);
        for (int i = 0; i < 5; ++i) {
            ks_server_end_tick(secure, NULL);
            sleep_ms(5);
        }
        CHECK(ks_client_connect_token(tclient, token, token_size) == KS_OK, "%s", ks_last_error());
        for (int i = 0; i < 3000 && ks_client_get_state(tclient) != KS_CLIENT_DISCONNECTED; ++i) {
            ks_server_end_tick(secure, NULL);
            ks_client_update(tclient);
            sleep_ms(20);
        }
        CHECK(ks_client_get_state(tclient) == KS_CLIENT_DISCONNECTED, "a used token connected");
        CHECK(strstr(ks_client_disconnect_reason(tclient), "already used") != NULL, "reason '%s'", ks_client_disconnect_reason(tclient));
        CHECK(ks_client_disconnect_code(tclient) == KS_DISCONNECT_TOKEN_USED, "code %d", (int)ks_client_disconnect_code(tclient));
        ks_client_destroy(tclient);
        /* A token issued with another key: refused, and the client says why. */
        const char* other = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";
        CHECK(ks_token_issue(other, servers, 1, 98, 60, token, sizeof token, &token_size) == KS_OK, "%s", ks_last_error());
        tc.connect_token = token;
        tc.connect_token_size = token_size;
        tc.timeout_s = 3.0; /* the refusal is only noted: the attempt ends at the timeout, reporting it */
        CHECK(ks_client_create(&tc, &tclient) == KS_OK && ks_client_connect(tclient) == KS_OK, "%s", ks_last_error());
        for (int i = 0; i < 6000 && ks_client_get_state(tclient) != KS_CLIENT_DISCONNECTED; ++i) {
            ks_server_end_tick(secure, NULL);
            ks_client_update(tclient);
            sleep_ms(10);
        }
        CHECK(ks_client_disconnect_code(tclient) == KS_DISCONNECT_TOKEN_INVALID, "wrong key: code %d, '%s'", (int)ks_client_disconnect_code(tclient),
              ks_client_disconnect_reason(tclient));
        ks_client_destroy(tclient);
        ks_server_destroy(secure);
    }
    ks_server_destroy(NULL);
    ks_client_destroy(NULL);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("C API: all checks passed (kinesync %s)\n", ks_version());
    return 0;
}
