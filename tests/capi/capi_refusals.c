/* Every public entry of kinesync.h, given what it cannot mean: a NULL handle, a NULL pointer with
 * a non-zero size, port 0, a count out of range. Each must refuse with its code (or, for the
 * entries that return a value, the sentinel kinesync.h names) and leave in ks_last_error() a
 * message naming the function and the field: never the previous call's message. No network. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <kinesync/kinesync.h>

#include "check.h"


/* Another function's message first, so a refusal that sets none is seen. */
static void stale(void) { (void)ks_client_create(NULL, NULL); }

static int names(const char* fn, const char* field) {
    const char* e = ks_last_error();
    return strstr(e, fn) != NULL && (field == NULL || strstr(e, field) != NULL);
}

/* A call returning a ks_result: its code, and a message naming fn (and field). */
#define REFUSES(call, code, fn, field)                                                                      \
    do {                                                                                                   \
        stale();                                                                                           \
        const ks_result r_ = (call);                                                                       \
        CHECK(r_ == (code), "%s: %s gave %d (%s), expected %d", fn, #call, (int)r_, ks_last_error(), (int)(code)); \
        CHECK(names(fn, field), "%s: %s: message '%s' does not name it", fn, #call, ks_last_error());      \
    } while (0)

/* A call returning a value: the sentinel, and a message naming fn. */
#define SENTINEL(call, value, fn)                                                                 \
    do {                                                                                         \
        stale();                                                                                 \
        CHECK((call) == (value), "%s: %s did not return its sentinel", fn, #call);               \
        CHECK(names(fn, "NULL"), "%s: %s: message '%s' does not name it", fn, #call, ks_last_error()); \
    } while (0)

static void unit_kform(ks_kform* k) {
    memset(k, 0, sizeof *k);
    k->rot[0] = 1.0f;
    k->scl[0] = k->scl[1] = k->scl[2] = 1.0f;
}

static void server_entries(void) {
    ks_server_config probe;
    ks_server_config_init(&probe);
    probe.network = 0;
    ks_server* none = NULL;
    if (ks_server_create(&probe, &none) == KS_ERROR_UNSUPPORTED) { /* a client-only build */
        stale();
        CHECK(ks_server_port(NULL) == 0 && names("ks_server_port", "client-only"), "client-only: '%s'", ks_last_error());
        stale();
        CHECK(ks_server_client_count(NULL) == 0 && names("ks_server_client_count", "client-only"), "client-only: '%s'", ks_last_error());
        return;
    }
    ks_server_destroy(none);
    stale();
    ks_server_config_init(NULL);
    CHECK(names("ks_server_config_init", "NULL"), "ks_server_config_init(NULL): '%s'", ks_last_error());

    const char* key = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    const char* good[] = {"127.0.0.1:40000"};
    const char* port0[] = {"127.0.0.1:0"};
    uint8_t token[2048];
    size_t size = 0;
    REFUSES(ks_token_issue(NULL, good, 1, 1, 60, token, sizeof token, &size), KS_ERROR_INVALID_ARGUMENT, "ks_token_issue", "NULL");
    REFUSES(ks_token_issue(key, NULL, 1, 1, 60, token, sizeof token, &size), KS_ERROR_INVALID_ARGUMENT, "ks_token_issue", "NULL");
    REFUSES(ks_token_issue(key, good, 1, 1, 60, NULL, 64, &size), KS_ERROR_INVALID_ARGUMENT, "ks_token_issue", "NULL");
    REFUSES(ks_token_issue(key, good, 1, 1, 60, token, sizeof token, NULL), KS_ERROR_INVALID_ARGUMENT, "ks_token_issue", "NULL");
    REFUSES(ks_token_issue(key, good, 0, 1, 60, token, sizeof token, &size), KS_ERROR_INVALID_ARGUMENT, "ks_token_issue", "servers");
    REFUSES(ks_token_issue(key, port0, 1, 1, 60, token, sizeof token, &size), KS_ERROR_INVALID_ARGUMENT, "ks_token_issue", "127.0.0.1:0");

    ks_server_config sc;
    ks_server_config_init(&sc);
    sc.network = 0;
    sc.io = KS_IO_PUMPED;
    ks_server* s = NULL;
    REFUSES(ks_server_create(NULL, &s), KS_ERROR_INVALID_ARGUMENT, "ks_server_create", "cfg");
    REFUSES(ks_server_create(&sc, NULL), KS_ERROR_INVALID_ARGUMENT, "ks_server_create", "out");
    CHECK(ks_server_create(&sc, &s) == KS_OK, "ks_server_create: %s", ks_last_error());

    const int parents[2] = {-1, 0};
    const float offsets[6] = {0, 0, 0, 0, 1, 0};
    uint16_t id = 0;
    SENTINEL(ks_server_port(NULL), 0, "ks_server_port");
    SENTINEL(ks_server_client_count(NULL), 0u, "ks_server_client_count");
    REFUSES(ks_server_add_skeleton(NULL, "s", 2, parents, NULL, offsets, 1.0f, &id), KS_ERROR_INVALID_ARGUMENT, "ks_server_add_skeleton", "NULL");
    REFUSES(ks_server_add_skeleton(s, "s", 2, NULL, NULL, offsets, 1.0f, &id), KS_ERROR_INVALID_ARGUMENT, "ks_server_add_skeleton", "parents");
    REFUSES(ks_server_add_skeleton(s, "s", 2, parents, NULL, NULL, 1.0f, &id), KS_ERROR_INVALID_ARGUMENT, "ks_server_add_skeleton", "offsets");
    REFUSES(ks_server_add_skeleton(s, "s", 2, parents, NULL, offsets, 1.0f, NULL), KS_ERROR_INVALID_ARGUMENT, "ks_server_add_skeleton", "out_id");
    uint16_t skeleton = 0, character = 0;
    CHECK(ks_server_add_skeleton(s, "s", 2, parents, NULL, offsets, 1.0f, &skeleton) == KS_OK, "%s", ks_last_error());
    REFUSES(ks_server_add_character(NULL, skeleton, "c", &id), KS_ERROR_INVALID_ARGUMENT, "ks_server_add_character", "NULL");
    REFUSES(ks_server_add_character(s, skeleton, "c", NULL), KS_ERROR_INVALID_ARGUMENT, "ks_server_add_character", "out_id");
    CHECK(ks_server_add_character(s, skeleton, "c", &character) == KS_OK, "%s", ks_last_error());
    ks_kform pose[2];
    unit_kform(&pose[0]);
    unit_kform(&pose[1]);
    REFUSES(ks_server_set_pose(NULL, character, pose, 2), KS_ERROR_INVALID_ARGUMENT, "ks_server_set_pose", "NULL");
    REFUSES(ks_server_set_pose(s, character, NULL, 2), KS_ERROR_INVALID_ARGUMENT, "ks_server_set_pose", "NULL");
    REFUSES(ks_server_set_look_ahead(NULL, character, pose, 2, 0.2f, 1), KS_ERROR_INVALID_ARGUMENT, "ks_server_set_look_ahead", "NULL");
    REFUSES(ks_server_set_look_ahead(s, character, NULL, 2, 0.2f, 1), KS_ERROR_INVALID_ARGUMENT, "ks_server_set_look_ahead", "NULL");
    REFUSES(ks_server_teleport(NULL, character), KS_ERROR_INVALID_ARGUMENT, "ks_server_teleport", "NULL");
    REFUSES(ks_server_reset(NULL, character), KS_ERROR_INVALID_ARGUMENT, "ks_server_reset", "NULL");
    REFUSES(ks_server_remove_character(NULL, character), KS_ERROR_INVALID_ARGUMENT, "ks_server_remove_character", "NULL");
    REFUSES(ks_server_end_tick(NULL, NULL), KS_ERROR_INVALID_ARGUMENT, "ks_server_end_tick", "NULL");
    REFUSES(ks_server_poll(NULL), KS_ERROR_INVALID_ARGUMENT, "ks_server_poll", "NULL");
    REFUSES(ks_server_close(NULL), KS_ERROR_INVALID_ARGUMENT, "ks_server_close", "NULL");
    stale();
    CHECK(ks_server_port(s) == 0 && ks_last_error()[0] == '\0', "ks_server_port of a server without a socket: 0, no error ('%s')",
          ks_last_error());
    ks_server_destroy(s);
    ks_server_destroy(NULL); /* like free(NULL) */
}

static void client_entries(void) {
    stale();
    ks_client_config_init(NULL);
    CHECK(names("ks_client_config_init", "NULL"), "ks_client_config_init(NULL): '%s'", ks_last_error());

    ks_client_config cc;
    ks_client_config_init(&cc);
    ks_client* c = NULL;
    REFUSES(ks_client_create(NULL, &c), KS_ERROR_INVALID_ARGUMENT, "ks_client_create", "cfg");
    REFUSES(ks_client_create(&cc, NULL), KS_ERROR_INVALID_ARGUMENT, "ks_client_create", "out");
    cc.connect_token_size = 50; /* NULL token, a size: not "no token" */
    REFUSES(ks_client_create(&cc, &c), KS_ERROR_INVALID_ARGUMENT, "ks_client_create", "connect_token");
    static const uint8_t bytes[4] = {1, 2, 3, 4};
    cc.connect_token = bytes;
    cc.connect_token_size = 0;
    REFUSES(ks_client_create(&cc, &c), KS_ERROR_INVALID_ARGUMENT, "ks_client_create", "connect_token_size");
    ks_client_config_init(&cc);
    cc.port = 0;
    REFUSES(ks_client_create(&cc, &c), KS_ERROR_INVALID_CONFIG, "ks_client_create", "port");
    ks_client_config_init(&cc);
    cc.strategy = "teleport+magic";
    REFUSES(ks_client_create(&cc, &c), KS_ERROR_INVALID_CONFIG, "ks_client_create", "strategy");
    ks_client_config_init(&cc);
    CHECK(ks_client_create(&cc, &c) == KS_OK, "ks_client_create: %s", ks_last_error());

    REFUSES(ks_client_connect(NULL), KS_ERROR_INVALID_ARGUMENT, "ks_client_connect", "NULL");
    REFUSES(ks_client_connect_token(NULL, bytes, 4), KS_ERROR_INVALID_ARGUMENT, "ks_client_connect_token", "NULL");
    REFUSES(ks_client_connect_token(c, NULL, 4), KS_ERROR_INVALID_ARGUMENT, "ks_client_connect_token", "NULL");
    REFUSES(ks_client_connect_token(c, bytes, 0), KS_ERROR_INVALID_ARGUMENT, "ks_client_connect_token", "size");
    REFUSES(ks_client_disconnect(NULL), KS_ERROR_INVALID_ARGUMENT, "ks_client_disconnect", "NULL");
    REFUSES(ks_client_update(NULL), KS_ERROR_INVALID_ARGUMENT, "ks_client_update", "NULL");
    REFUSES(ks_client_poll(NULL), KS_ERROR_INVALID_ARGUMENT, "ks_client_poll", "NULL");
    REFUSES(ks_client_set_viewpoint(NULL, 0, 0, 0), KS_ERROR_INVALID_ARGUMENT, "ks_client_set_viewpoint", "NULL");
    REFUSES(ks_client_set_skeleton_cache(NULL, "x"), KS_ERROR_INVALID_ARGUMENT, "ks_client_set_skeleton_cache", "NULL");
    SENTINEL(ks_client_disconnect_code(NULL), KS_DISCONNECT_NONE, "ks_client_disconnect_code");
    SENTINEL(strcmp(ks_client_disconnect_reason(NULL), ""), 0, "ks_client_disconnect_reason");
    SENTINEL(ks_client_get_state(NULL), KS_CLIENT_IDLE, "ks_client_get_state");
    SENTINEL(ks_client_character_count(NULL), 0, "ks_client_character_count");
    SENTINEL(ks_client_render_time(NULL), 0.0, "ks_client_render_time");
    ks_event e;
    SENTINEL(ks_client_next_event(NULL, &e), 0, "ks_client_next_event");
    SENTINEL(ks_client_next_event(c, NULL), 0, "ks_client_next_event");
    stale();
    CHECK(ks_client_next_event(c, &e) == 0 && ks_last_error()[0] == '\0', "no event: 0 and no error ('%s')", ks_last_error());

    ks_character_info info;
    REFUSES(ks_client_character_at(NULL, 0, &info), KS_ERROR_INVALID_ARGUMENT, "ks_client_character_at", "NULL");
    REFUSES(ks_client_character_at(c, 0, NULL), KS_ERROR_INVALID_ARGUMENT, "ks_client_character_at", "NULL");
    REFUSES(ks_client_character_at(c, -1, &info), KS_ERROR_INVALID_ARGUMENT, "ks_client_character_at", "index -1");
    int parents[4];
    ks_kform joints[4];
    REFUSES(ks_client_skeleton(NULL, 1, parents, NULL, 4), KS_ERROR_INVALID_ARGUMENT, "ks_client_skeleton", "NULL");
    REFUSES(ks_client_skeleton(c, 1, parents, NULL, 4), KS_ERROR_UNKNOWN_ID, "ks_client_skeleton", "character 1");
    REFUSES(ks_client_local_pose(NULL, 1, joints, 4), KS_ERROR_INVALID_ARGUMENT, "ks_client_local_pose", "NULL");
    REFUSES(ks_client_local_pose(c, 1, NULL, 4), KS_ERROR_INVALID_ARGUMENT, "ks_client_local_pose", "NULL");
    REFUSES(ks_client_global_pose(NULL, 1, joints, 4), KS_ERROR_INVALID_ARGUMENT, "ks_client_global_pose", "NULL");
    REFUSES(ks_client_global_pose(c, 1, NULL, 4), KS_ERROR_INVALID_ARGUMENT, "ks_client_global_pose", "NULL");
    ks_client_stats st;
    ks_client_skeleton_stats sk;
    REFUSES(ks_client_get_stats(NULL, &st), KS_ERROR_INVALID_ARGUMENT, "ks_client_get_stats", "NULL");
    REFUSES(ks_client_get_stats(c, NULL), KS_ERROR_INVALID_ARGUMENT, "ks_client_get_stats", "NULL");
    REFUSES(ks_client_get_skeleton_stats(NULL, &sk), KS_ERROR_INVALID_ARGUMENT, "ks_client_get_skeleton_stats", "NULL");
    REFUSES(ks_client_get_skeleton_stats(c, NULL), KS_ERROR_INVALID_ARGUMENT, "ks_client_get_skeleton_stats", "NULL");
    ks_client_destroy(c);
    ks_client_destroy(NULL); /* like free(NULL) */
}

static void convention_entries(void) {
    ks_kform k, out;
    unit_kform(&k);
    REFUSES(ks_pose_to_engine(KS_ENGINE_UNITY, 1.0f, NULL, &out, 1), KS_ERROR_INVALID_ARGUMENT, "ks_pose_to_engine", "NULL");
    REFUSES(ks_pose_to_engine(KS_ENGINE_UNITY, 1.0f, &k, NULL, 1), KS_ERROR_INVALID_ARGUMENT, "ks_pose_to_engine", "NULL");
    REFUSES(ks_pose_to_engine(KS_ENGINE_UNITY, 1.0f, &k, &out, -1), KS_ERROR_INVALID_ARGUMENT, "ks_pose_to_engine", "count");
    REFUSES(ks_pose_to_engine(KS_ENGINE_UNITY, NAN, &k, &out, 1), KS_ERROR_INVALID_ARGUMENT, "ks_pose_to_engine", "metres_per_unit");
    REFUSES(ks_pose_from_engine(KS_ENGINE_UNITY, 1.0f, NULL, &out, 1), KS_ERROR_INVALID_ARGUMENT, "ks_pose_from_engine", "NULL");
    REFUSES(ks_pose_from_engine(KS_ENGINE_UNITY, 1.0f, &k, &out, -1), KS_ERROR_INVALID_ARGUMENT, "ks_pose_from_engine", "count");
    REFUSES(ks_derive_velocities(NULL, &k, 1, 0.1f, &out), KS_ERROR_INVALID_ARGUMENT, "ks_derive_velocities", "NULL");
    REFUSES(ks_derive_velocities(&k, NULL, 1, 0.1f, &out), KS_ERROR_INVALID_ARGUMENT, "ks_derive_velocities", "NULL");
    REFUSES(ks_derive_velocities(&k, &k, 1, 0.1f, NULL), KS_ERROR_INVALID_ARGUMENT, "ks_derive_velocities", "NULL");
    REFUSES(ks_derive_velocities(&k, &k, -1, 0.1f, &out), KS_ERROR_INVALID_ARGUMENT, "ks_derive_velocities", "count");
    CHECK(ks_result_name((ks_result)999) != NULL, "ks_result_name of an unknown value is NULL");
}

int main(void) {
    server_entries();
    client_entries();
    convention_entries();
    if (failures) {
        fprintf(stderr, "%d of %d check(s) failed\n", failures, checks);
        return 1;
    }
    printf("C API refusals: %d checks passed\n", checks);
    return 0;
}
