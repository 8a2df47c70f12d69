/* A C API client of a server elsewhere, built for every platform (kinesync-capi-remote; the
 * Windows build's runs under Wine): it connects (with a connect token when given), shows every
 * character with the snap strategy, and each time a character's newest snapshot changes writes
 * its tick and global joint positions in metres, one line per character and snapshot:
 *   tick character x0 y0 z0 x1 y1 z1 ...
 * usage: kinesync-capi-remote HOST PORT SECONDS OUT [TOKEN_FILE]
 * Exit 0 when it connected and saw a character; 3 when the server refused it, with
 * "refused: <code> <reason>" on stdout; 1 otherwise. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kinesync/kinesync.h>

#if defined(_WIN32)
#include <windows.h>
static double now_s(void) { return (double)GetTickCount64() / 1000.0; }
static void sleep_ms(int ms) { Sleep((DWORD)ms); }
#else
#include <time.h>
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static void sleep_ms(int ms) {
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}
#endif

enum { kMaxJoints = 1024, kMaxCharacters = 64 };

static size_t read_file(const char* path, uint8_t* buf, size_t capacity) {
    FILE* f = fopen(path, "rb");
    if (!f) return 0;
    const size_t n = fread(buf, 1, capacity, f);
    fclose(f);
    return n;
}

/* The deliberately altered client (KS_REMOTE_ALTERED_FK=1 in the environment): world positions
 * from the local pose by FK of its own, whose quaternion products add left to right (the
 * library pairs the sums as the vector lanes do). What the interop test must catch. */
static void altered_fk(const ks_kform* local, const int* parents, int n, ks_kform* world) {
    for (int i = 0; i < n; ++i) {
        world[i] = local[i];
        if (parents[i] < 0) continue;
        const ks_kform* p = &world[parents[i]];
        const float* a = p->rot;
        const float* b = local[i].rot;
        world[i].rot[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
        world[i].rot[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
        world[i].rot[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
        world[i].rot[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
        float v[3], t[3], u[3] = {a[1], a[2], a[3]};
        for (int k = 0; k < 3; ++k) v[k] = local[i].pos[k] * p->scl[k];
        t[0] = 2.0f * (u[1] * v[2] - u[2] * v[1]);
        t[1] = 2.0f * (u[2] * v[0] - u[0] * v[2]);
        t[2] = 2.0f * (u[0] * v[1] - u[1] * v[0]);
        const float c[3] = {u[1] * t[2] - u[2] * t[1], u[2] * t[0] - u[0] * t[2], u[0] * t[1] - u[1] * t[0]};
        for (int k = 0; k < 3; ++k) {
            world[i].pos[k] = v[k] + a[0] * t[k] + c[k] + p->pos[k];
            world[i].scl[k] = local[i].scl[k] * p->scl[k];
        }
    }
}

int main(int argc, char** argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: kinesync-capi-remote HOST PORT SECONDS OUT [TOKEN_FILE]\n");
        return 2;
    }
    static uint8_t token[2048];
    static ks_kform joints[kMaxJoints];
    uint32_t written[kMaxCharacters] = {0};
    ks_client_config cfg;
    ks_client_config_init(&cfg);
    cfg.host = argv[1];
    cfg.port = (uint16_t)atoi(argv[2]);
    cfg.strategy = "snap";
    cfg.io = KS_IO_PUMPED;
    if (argc == 6) {
        cfg.connect_token = token;
        cfg.connect_token_size = read_file(argv[5], token, sizeof token);
        if (!cfg.connect_token_size) return fprintf(stderr, "cannot read %s\n", argv[5]), 1;
    }
    FILE* out = fopen(argv[4], "w");
    if (!out) return fprintf(stderr, "cannot write %s\n", argv[4]), 1;
    ks_client* c = NULL;
    if (ks_client_create(&cfg, &c) != KS_OK || ks_client_connect(c) != KS_OK)
        return fprintf(stderr, "client: %s\n", ks_last_error()), 1;
    const double seconds = atof(argv[3]), start = now_s();
    const char* altered_env = getenv("KS_REMOTE_ALTERED_FK");
    const int altered = altered_env && strcmp(altered_env, "1") == 0;
    int seen = 0, connected = 0;
    while (now_s() - start < seconds) {
        ks_client_update(c);
        ks_event e;
        while (ks_client_next_event(c, &e)) connected |= e.kind == KS_EVENT_CONNECTED;
        if (ks_client_get_state(c) == KS_CLIENT_DISCONNECTED && ks_client_disconnect_code(c) != KS_DISCONNECT_NONE) break;
        for (int i = 0; i < ks_client_character_count(c); ++i) {
            ks_character_info info;
            if (ks_client_character_at(c, i, &info) != KS_OK || !info.ready || info.id >= kMaxCharacters) continue;
            if (info.joint_count > kMaxJoints || written[info.id] == info.newest_tick) continue;
            if (altered) {
                static ks_kform local[kMaxJoints];
                static int parents[kMaxJoints];
                if (ks_client_local_pose(c, info.id, local, kMaxJoints) != KS_OK ||
                    ks_client_skeleton(c, info.id, parents, NULL, kMaxJoints) != KS_OK)
                    continue;
                altered_fk(local, parents, info.joint_count, joints);
            } else if (ks_client_global_pose(c, info.id, joints, kMaxJoints) != KS_OK) {
                continue;
            }
            written[info.id] = info.newest_tick;
            fprintf(out, "%u %u", (unsigned)info.newest_tick, (unsigned)info.id);
            for (int j = 0; j < info.joint_count; ++j)
                fprintf(out, " %.9g %.9g %.9g", joints[j].pos[0] * info.metres_per_unit, joints[j].pos[1] * info.metres_per_unit,
                        joints[j].pos[2] * info.metres_per_unit);
            fputc('\n', out);
            seen = 1;
        }
        sleep_ms(2);
    }
    fclose(out);
    const ks_disconnect_code code = ks_client_disconnect_code(c);
    if (code != KS_DISCONNECT_NONE && !seen) {
        printf("refused: %d %s\n", (int)code, ks_client_disconnect_reason(c));
        ks_client_destroy(c);
        return 3;
    }
    ks_client_stats stats;
    ks_client_get_stats(c, &stats);
    printf("connected %d, snapshots %llu, rtt %.2f ms\n", connected, (unsigned long long)stats.snapshots_received, stats.rtt_ms);
    ks_client_destroy(c);
    return seen ? 0 : 1;
}
