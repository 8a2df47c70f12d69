/* kinesync.h: the C API of kinesync, for engine plugins (Unity P/Invoke, Unreal, Godot) and any
 * language with a C FFI. Library: libkinesync (CMake target kinesync::c).
 *
 * Conventions
 *  - Opaque handles: ks_server, ks_client. Create with *_create, free with *_destroy (NULL is fine).
 *  - Every function that can fail returns a ks_result; KS_OK is 0. Every argument is checked (in
 *    every build): a refusal returns its code, and ks_last_error() a message for the calling
 *    thread naming the function, the field, the joint and the value (valid until that thread's
 *    next kinesync call). No C++ exception ever crosses this API. A pointer with a size must be
 *    non-NULL when the size is not 0 (and NULL with 0 means "none" only where a field says so).
 *  - The functions that return a value instead (ks_server_port, ks_server_client_count,
 *    ks_client_get_state, ks_client_disconnect_code, ks_client_disconnect_reason,
 *    ks_client_next_event, ks_client_character_count, ks_client_render_time) return 0, "",
 *    KS_CLIENT_IDLE or KS_DISCONNECT_NONE for a NULL handle and set ks_last_error() naming the
 *    function; on success they clear it. *_config_init(NULL) does nothing but set it;
 *    *_destroy(NULL) does nothing (like free(NULL), it is not an error).
 *  - Units and axes: positions in the skeleton's units (metres_per_unit converts), right-handed,
 *    Y up (glTF's axes); ks_pose_to_engine converts to Unreal's, Unity's or Godot's.
 *  - Poses are arrays of ks_kform, one per joint in the skeleton's order (parents first). Joint 0 is
 *    the root in the world; the others are relative to their parent ("local"), except in
 *    ks_client_global_pose where every joint is in the world. Quaternions are (w, x, y, z);
 *    angular velocities are in the parent's frame, radians per second; scale velocities are
 *    d(log scale)/dt.
 *  - A handle is used from one thread at a time (the game's); with KS_IO_OWN_THREAD the library
 *    runs its own network thread internally.
 */
#ifndef KINESYNC_H
#define KINESYNC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#if defined(KS_BUILDING_LIBRARY)
#define KS_API __declspec(dllexport)
#else
#define KS_API __declspec(dllimport)
#endif
#else
#define KS_API __attribute__((visibility("default")))
#endif

typedef enum ks_result {
    KS_OK = 0,
    KS_ERROR_INVALID_ARGUMENT = 1, /* a NULL pointer, a buffer too small, a value out of range, ... */
    KS_ERROR_NETWORK = 2,          /* cannot bind, cannot resolve */
    KS_ERROR_IO = 3,               /* a file (the recording) */
    KS_ERROR_STATE = 4,            /* not possible now (e.g. after close) */
    KS_ERROR_INTERNAL = 5,
    KS_ERROR_INVALID_SKELETON = 6, /* no joints, not exactly one root (joint 0), a parent not before its child, > 1024 joints, ... */
    KS_ERROR_INVALID_POSE = 7,     /* wrong joint count, a value not finite, a rotation not unit, a scale not positive */
    KS_ERROR_INVALID_CONFIG = 8,   /* a configuration field out of range (the message names it) */
    KS_ERROR_UNKNOWN_ID = 9,       /* no such skeleton or character */
    KS_ERROR_INVALID_TOKEN = 10,   /* not a connect token, or one that names another server */
    KS_ERROR_UNSUPPORTED = 11,     /* not in this build: the server functions of a client-only build (Windows) */
    KS_RESULT_MAX_ENUM = 0x7FFFFFFF
} ks_result;
/* "invalid pose", ... */
KS_API const char* ks_result_name(ks_result r);

/* Enums a caller passes in end with a _MAX_ENUM value so that any int is a value of the type
 * (an unknown one is refused with KS_ERROR_INVALID_CONFIG or KS_ERROR_INVALID_ARGUMENT). */
typedef enum ks_io_mode { KS_IO_OWN_THREAD = 0, KS_IO_PUMPED = 1, KS_IO_MAX_ENUM = 0x7FFFFFFF } ks_io_mode;

typedef struct ks_kform {
    float pos[3];
    float rot[4]; /* w, x, y, z */
    float scl[3];
    float vel[3];
    float ang[3];
    float svl[3];
} ks_kform;

/* The calling thread's last error message ("" if none): at most 2,047 bytes of UTF-8, a longer
 * one cut at a character and ending in "...". */
KS_API const char* ks_last_error(void);
/* "0.1.0" */
KS_API const char* ks_version(void);

/* ---- server ---- */
typedef struct ks_server ks_server;

typedef struct ks_server_config {
    const char* bind;        /* "127.0.0.1"; a public address needs private_key_hex, or insecure_dev and insecure_dev_public */
    uint16_t port;           /* 40000; 0: any free port */
    int network;             /* 1; 0: no socket (an offline run that only records) */
    float tick_hz;           /* 60 */
    float snapshot_hz;       /* 30 */
    float bandwidth_bps;     /* 256000, per client, wire bits (UDP payload + IPv4/UDP headers) */
    int max_clients;         /* 32 */
    double timeout_s;        /* 5 */
    ks_io_mode io;           /* KS_IO_OWN_THREAD */
    const char* record_path; /* NULL: no recording */
    /* Connect tokens: the private key shared with the game's backend, 64 hex digits (NULL: dev
     * mode, no authentication). With it only token holders get in and sessions are sealed. */
    const char* private_key_hex;
    const char* public_address; /* "address:port" tokens name; NULL: bind and port */
    int insecure_dev;           /* 1: allow dev mode on a non-loopback bind (anyone can connect)... */
    int insecure_dev_public;    /* ...with this 1 too: a second, explicit yes */
} ks_server_config;

KS_API void ks_server_config_init(ks_server_config* cfg);
/* What a game's backend does: a connect token for one player (client_id) good for `valid_for_s`
 * seconds on the servers named ("address:port", numeric; 1 to 8). Writes at most `capacity` bytes
 * to out and the token's size to *out_size (KS_ERROR_INVALID_ARGUMENT, with the size needed, when
 * it does not fit; 2048 always does). */
KS_API ks_result ks_token_issue(const char* private_key_hex, const char* const* servers, int server_count, uint64_t client_id,
                                uint32_t valid_for_s, uint8_t* out, size_t capacity, size_t* out_size);
KS_API ks_result ks_server_create(const ks_server_config* cfg, ks_server** out);
KS_API void ks_server_destroy(ks_server* s);
KS_API uint16_t ks_server_port(const ks_server* s);
/* A skeleton: joint_count joints, parents[j] < j (-1 for the root), names (may be NULL: "j0",
 * "j1", ...), rest offsets (3 floats per joint) in the skeleton's units. */
KS_API ks_result ks_server_add_skeleton(ks_server* s, const char* name, int joint_count, const int* parents,
                                        const char* const* joint_names, const float* offsets, float metres_per_unit,
                                        uint16_t* out_id);
KS_API ks_result ks_server_add_character(ks_server* s, uint16_t skeleton, const char* name, uint16_t* out_id);
KS_API ks_result ks_server_remove_character(ks_server* s, uint16_t character);
KS_API ks_result ks_server_set_pose(ks_server* s, uint16_t character, const ks_kform* joints, int joint_count);
/* Optional, after ks_server_set_pose in the same tick: the pose `seconds` (0..2] ahead that the
 * game's animation reaches if nothing is decided meanwhile (its graph run forward with the inputs
 * held), and the plan number, which the game increments at each decision its earlier look-aheads
 * could not know. Sent to clients instead of the pose and recorded beside it (docs/FIDELITY.md,
 * "Look-ahead"). The contract: computed at this tick from the game's state now, never from a
 * decision taken later (two runs that part at a decision at tick T pass bit-identical look-aheads
 * before T; `kinesync-replay A.ksrec --honesty B.ksrec --decision-tick T` checks two recordings).
 * KS_ERROR_INVALID_ARGUMENT for seconds out of range, KS_ERROR_STATE before any pose of the
 * character. */
KS_API ks_result ks_server_set_look_ahead(ks_server* s, uint16_t character, const ks_kform* joints, int joint_count, float seconds,
                                          uint16_t plan);
KS_API ks_result ks_server_teleport(ks_server* s, uint16_t character);
KS_API ks_result ks_server_reset(ks_server* s, uint16_t character);
/* Publishes the tick; *out_tick (may be NULL) receives its number. */
KS_API ks_result ks_server_end_tick(ks_server* s, uint32_t* out_tick);
KS_API ks_result ks_server_poll(ks_server* s);
/* Goodbye to clients, recording closed (its error reported here). */
KS_API ks_result ks_server_close(ks_server* s);
KS_API uint32_t ks_server_client_count(const ks_server* s);

/* ---- client ---- */
typedef struct ks_client ks_client;

typedef struct ks_client_config {
    const char* host;     /* "127.0.0.1" */
    uint16_t port;        /* 40000; 0 is refused (no server listens there) unless a connect token is given */
    /* How the client turns late, lossy snapshots into the pose shown now (NULL: the default).
     * Measured against each other in docs/FIDELITY.md; settings in kinesync/client/reconstruct_config.h.
     *   "snap"                the newest snapshot as it arrived
     *   "interp"              linear/slerp interpolation between snapshots, shown 100 ms in the past
     *   "hermite"             the same delay, cubic Hermite interpolation with the snapshots' velocities
     *   "extrap"              dead reckoning from the newest snapshot with its velocities; corrections
     *                         at once
     *   "deadblend"           the displayed pose, extrapolated with decaying velocities, dead-blended
     *                         into each newer snapshot's extrapolation
     *   "deadblend+sod"       the default: the newest snapshot extrapolated with decaying velocities,
     *                         plus a per-joint correction that absorbs each newer snapshot's jump and
     *                         decays as second-order dynamics (sod): no step in position or velocity
     *   "hermite+ahead"       for snapshots carrying the server's look-ahead (ks_server_set_look_ahead):
     *                         its expected future interpolated at the present, no display delay (the
     *                         newest held when they run out)
     *   "deadblend+sod+ahead" the same with deadblend+sod: the look-ahead while it brackets the
     *                         present, the newest extrapolated otherwise, the correction absorbing each
     *                         change of the expected future
     * With "hermite" or "deadblend+sod" a character is shown by the "+ahead" form once the server
     * sends its look-ahead (ks_character_info.look_ahead). */
    const char* strategy; /* "deadblend+sod"; or any name above */
    ks_io_mode io;        /* KS_IO_PUMPED */
    double timeout_s;     /* 5 */
    double reconnect_after_s; /* -1: never reconnect on its own (a token opens one session) */
    /* A connect token as the backend issued it (NULL: a dev-mode server). With one, the client
     * connects to the token's first server; host and port are not used. Copied at create.
     * The bytes are the raw token, exactly what ks_token_issue writes; a .kstoken file written by
     * `kinesync-token issue --out` holds those same bytes and nothing else: read it whole, in
     * binary, and pass its contents and size as they are (no decoding, no trailing newline). */
    const uint8_t* connect_token;
    size_t connect_token_size;
} ks_client_config;

typedef enum ks_client_state {
    KS_CLIENT_IDLE = 0,
    KS_CLIENT_CONNECTING = 1,
    KS_CLIENT_CHALLENGED = 2,
    KS_CLIENT_CONNECTED = 3,
    KS_CLIENT_DISCONNECTED = 4
} ks_client_state;

typedef enum ks_event_kind {
    KS_EVENT_CONNECTED = 0,
    KS_EVENT_DISCONNECTED = 1,
    KS_EVENT_CHARACTER_ADDED = 2,
    KS_EVENT_CHARACTER_REMOVED = 3,
    KS_EVENT_TELEPORT = 4,
    KS_EVENT_RESET = 5
} ks_event_kind;

typedef struct ks_event {
    ks_event_kind kind;
    uint16_t character;
    uint16_t epoch;
    uint32_t tick;
} ks_event;

typedef struct ks_character_info {
    uint16_t id;
    uint16_t skeleton_id;
    int joint_count;
    int ready;      /* 1 once a snapshot arrived */
    uint16_t epoch; /* of the motion shown */
    float metres_per_unit;
    const char* name;          /* valid until the next ks_client_update */
    const char* skeleton_name; /* likewise */
    uint32_t newest_tick;      /* server tick of the newest snapshot of it */
    uint64_t snapshots;        /* snapshots of it received so far */
    int look_ahead;            /* 1 once the server sends its look-ahead (shown by the strategy's "+ahead" form) */
} ks_character_info;

/* A client's counters since it was created. */
typedef struct ks_client_stats {
    double rtt_ms;
    uint64_t bytes_in, bytes_out, datagrams_in, datagrams_out;
    /* Snapshot ticks received, lost and late (reordered). A tick the server did not send (nothing
     * moved, its budget) is not lost: ticks count as lost only as far as datagrams are missing. */
    uint64_t snapshots_received, snapshots_lost, snapshots_late;
    uint64_t malformed;       /* datagrams that were not kinesync's, or damaged */
    uint64_t entries_refused; /* snapshot entries refused alone (and resynchronised) */
    uint64_t reconnects;
    /* Handshakes, every attempt: ConnectRequests sent, Challenges taken (challenges /
     * connect_requests is the share answered: under a flood the server answers a share of
     * everyone's), and Challenges refused because the token's keys did not make them (forged). */
    uint64_t connect_requests, challenges, challenges_forged;
    /* Snapshot entries of characters whose skeleton the client does not hold yet (expected while
     * joining: snapshots travel right behind the definitions). */
    uint64_t entries_early;
    /* The server's datagrams lost on the way (gaps in their sequence, less late ones), and late. */
    uint64_t datagrams_lost, datagrams_late;
} ks_client_stats;

/* Skeletons, over every connection: offered to the server as already held (the skeleton cache),
 * taken by reference, received in full, refused (errors: a part contradicting another, a reference
 * to a skeleton not offered; their characters are never shown); cache files refused (damaged or not
 * what their names say: deleted) and skeletons the cache failed to keep. */
typedef struct ks_client_skeleton_stats {
    uint64_t offered, by_reference, in_full, errors;
    uint64_t cache_refused, cache_save_failures;
} ks_client_skeleton_stats;

KS_API void ks_client_config_init(ks_client_config* cfg);
KS_API ks_result ks_client_create(const ks_client_config* cfg, ks_client** out);
KS_API void ks_client_destroy(ks_client* c);
KS_API ks_result ks_client_connect(ks_client* c);
/* Connects again with a fresh connect token (a token opens one session): the same raw bytes as
 * config.connect_token. */
KS_API ks_result ks_client_connect_token(ks_client* c, const uint8_t* token, size_t size);
/* Why the last session ended or the handshake failed ("" while none did); valid until the next
 * call on this client. */
KS_API const char* ks_client_disconnect_reason(ks_client* c);
/* The same as a code a program can act on. */
typedef enum ks_disconnect_code {
    KS_DISCONNECT_NONE = 0,
    KS_DISCONNECT_UNSPECIFIED = 1,
    KS_DISCONNECT_CLIENT_CLOSED = 2,
    KS_DISCONNECT_SERVER_SHUTDOWN = 3,
    KS_DISCONNECT_TIMED_OUT = 4,
    KS_DISCONNECT_NO_ANSWER = 5,        /* server down, wrong address or port, UDP blocked */
    KS_DISCONNECT_SERVER_FULL = 6,
    KS_DISCONNECT_TOO_MANY_FROM_ADDRESS = 7,
    KS_DISCONNECT_TOKEN_EXPIRED = 8,
    KS_DISCONNECT_TOKEN_INVALID = 9,    /* issued with another key, or damaged */
    KS_DISCONNECT_TOKEN_WRONG_SERVER = 10,
    KS_DISCONNECT_TOKEN_USED = 11,
    KS_DISCONNECT_TOKEN_REQUIRED = 12,
    KS_DISCONNECT_VERSION_MISMATCH = 13,
    KS_DISCONNECT_NOT_ACKNOWLEDGING = 14,
    KS_DISCONNECT_NO_TOKEN = 15,
    KS_DISCONNECT_SESSION_IN_USE = 16   /* a session from this address (or player) is live: retry once it ends */
} ks_disconnect_code;
KS_API ks_disconnect_code ks_client_disconnect_code(const ks_client* c);
KS_API ks_result ks_client_disconnect(ks_client* c);
/* Once per render frame: network (when pumped), characters in and out, every character rendered. */
KS_API ks_result ks_client_update(ks_client* c);
KS_API ks_result ks_client_poll(ks_client* c);
KS_API ks_client_state ks_client_get_state(const ks_client* c);
/* Where the player watches from (metres, world): the nearest characters come first. */
KS_API ks_result ks_client_set_viewpoint(ks_client* c, float x, float y, float z);
/* A directory (UTF-8; created when missing) where the client keeps the skeletons it receives, offering
 * them to the server by hash from the next connect on: the server then sends references instead of
 * definitions, and joining again is quicker. NULL or "": none. KS_ERROR_INVALID_CONFIG when the
 * directory cannot be made or used. */
KS_API ks_result ks_client_set_skeleton_cache(ks_client* c, const char* dir);
/* Events since the last update, one at a time: returns 1 and fills *out, or 0 when none is left. */
KS_API int ks_client_next_event(ks_client* c, ks_event* out);
/* Characters known after the last update: index 0 .. count-1 (ordered by id). */
KS_API int ks_client_character_count(const ks_client* c);
KS_API ks_result ks_client_character_at(const ks_client* c, int index, ks_character_info* out);
/* A character's skeleton: parents (joint_count ints) and rest offsets (3 x joint_count floats);
 * either pointer may be NULL. */
KS_API ks_result ks_client_skeleton(const ks_client* c, uint16_t character, int* parents, float* offsets, int capacity);
/* The rendered pose of a character into joints[0 .. capacity): local (joint 0 in the world) or
 * global (every joint in the world). capacity must be at least the joint count. */
KS_API ks_result ks_client_local_pose(const ks_client* c, uint16_t character, ks_kform* joints, int capacity);
KS_API ks_result ks_client_global_pose(const ks_client* c, uint16_t character, ks_kform* joints, int capacity);
KS_API ks_result ks_client_get_stats(const ks_client* c, ks_client_stats* out);
KS_API ks_result ks_client_get_skeleton_stats(const ks_client* c, ks_client_skeleton_stats* out);
/* The server time (seconds) the last update rendered at. */
KS_API double ks_client_render_time(const ks_client* c);

/* ---- conventions ---- */

/* Engines' conventions: Unreal (centimetres, Z up, X forward, left-handed, quaternion x y z w),
 * Unity (metres, Y up, Z forward, left-handed, x y z w), Godot (metres, Y up, right-handed,
 * x y z w). KS_ENGINE_KINESYNC: kinesync's own (metres, Y up, Z forward, X left, right-handed,
 * w x y z). */
typedef enum ks_engine {
    KS_ENGINE_KINESYNC = 0,
    KS_ENGINE_UNREAL = 1,
    KS_ENGINE_UNITY = 2,
    KS_ENGINE_GODOT = 3,
    KS_ENGINE_MAX_ENUM = 0x7FFFFFFF
} ks_engine;
/* count kforms (local or global alike) from kinesync's conventions, in a skeleton of
 * metres_per_unit, into the engine's: positions and velocities moved to its axes and units,
 * rotations and angular velocities to its axes and handedness, scales to its axes; rot[] in the
 * engine's order. in and out may be the same array. */
KS_API ks_result ks_pose_to_engine(ks_engine engine, float metres_per_unit, const ks_kform* in, ks_kform* out, int count);
/* The inverse: an engine's kforms (rot[] in its order) into kinesync's, in units of metres_per_unit. */
KS_API ks_result ks_pose_from_engine(ks_engine engine, float metres_per_unit, const ks_kform* in, ks_kform* out, int count);
/* For engines without velocities: out gets curr's values and the velocities that take prev to curr
 * in dt seconds (linear: finite difference; angular: the shortest-arc rotation log, in the parent
 * frame; scale: log ratio). Poses in kinesync's conventions (rot w x y z). out may be curr. */
KS_API ks_result ks_derive_velocities(const ks_kform* prev, const ks_kform* curr, int count, float dt, ks_kform* out);

#ifdef __cplusplus
}
#endif

#endif /* KINESYNC_H */
