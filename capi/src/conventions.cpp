// The C API's conventions: engine conversions and velocities from two poses.
#include <vector>

#include <kinesync/common/anim/pose.h>
#include <kinesync/common/conventions.h>

#include "capi/src/capi_support.h"

using namespace ks;
using ks::capi::fail;
using ks::capi::guarded;

namespace {

bool engine_from_c(ks_engine e, Engine& out) {
    switch (e) {
        case KS_ENGINE_KINESYNC: out = Engine::Kinesync; return true;
        case KS_ENGINE_UNREAL: out = Engine::Unreal; return true;
        case KS_ENGINE_UNITY: out = Engine::Unity; return true;
        case KS_ENGINE_GODOT: out = Engine::Godot; return true;
        default: return false;
    }
}

// rot[] in the engine's order <-> kinesync's (w, x, y, z).
void reorder_to_engine(ks_kform& k, bool xyzw) {
    if (!xyzw) return;
    const float w = k.rot[0];
    k.rot[0] = k.rot[1], k.rot[1] = k.rot[2], k.rot[2] = k.rot[3], k.rot[3] = w;
}
ks_kform reorder_from_engine(ks_kform k, bool xyzw) {
    if (!xyzw) return k;
    const float w = k.rot[3];
    k.rot[3] = k.rot[2], k.rot[2] = k.rot[1], k.rot[1] = k.rot[0], k.rot[0] = w;
    return k;
}

ks_result convert(const char* fn, ks_engine engine, float metres_per_unit, const ks_kform* in, ks_kform* out, int count, bool to_engine) {
    return guarded(fn, [&] {
        Engine e;
        if (!engine_from_c(engine, e)) return fail(KS_ERROR_INVALID_ARGUMENT, std::string(fn) + ": unknown engine " + std::to_string(int(engine)));
        if (!in || !out) return fail(KS_ERROR_INVALID_ARGUMENT, std::string(fn) + ": NULL " + (in ? "out" : "in"));
        if (count < 0) return fail(KS_ERROR_INVALID_ARGUMENT, std::string(fn) + ": count = " + std::to_string(count) + " < 0");
        const bool xyzw = engine_convention(e).xyzw;
        // Through a Pose: pose_*_engine checks every joint before converting any, so out (which
        // may be in) is untouched by a refusal.
        Pose p(count);
        for (int j = 0; j < count; ++j) p.set(j, capi::from_c(to_engine ? in[j] : reorder_from_engine(in[j], xyzw)));
        if (to_engine) pose_to_engine(p, p, e, metres_per_unit);
        else pose_from_engine(p, p, e, metres_per_unit);
        for (int j = 0; j < count; ++j) {
            out[j] = capi::to_c(p.get(j));
            if (to_engine) reorder_to_engine(out[j], xyzw);
        }
        return KS_OK;
    });
}

}  // namespace

extern "C" {

ks_result ks_pose_to_engine(ks_engine engine, float metres_per_unit, const ks_kform* in, ks_kform* out, int count) {
    return convert("ks_pose_to_engine", engine, metres_per_unit, in, out, count, true);
}

ks_result ks_pose_from_engine(ks_engine engine, float metres_per_unit, const ks_kform* in, ks_kform* out, int count) {
    return convert("ks_pose_from_engine", engine, metres_per_unit, in, out, count, false);
}

ks_result ks_derive_velocities(const ks_kform* prev, const ks_kform* curr, int count, float dt, ks_kform* out) {
    return guarded("ks_derive_velocities", [&] {
        if (!prev || !curr || !out)
            return fail(KS_ERROR_INVALID_ARGUMENT, std::string("ks_derive_velocities: NULL ") + (!prev ? "prev" : !curr ? "curr" : "out"));
        if (count < 0) return fail(KS_ERROR_INVALID_ARGUMENT, "ks_derive_velocities: count = " + std::to_string(count) + " < 0");
        Pose p(count), c(count), o(count);
        for (int j = 0; j < count; ++j) p.set(j, capi::from_c(prev[j])), c.set(j, capi::from_c(curr[j]));
        derive_velocities(o, c, p, dt);
        for (int j = 0; j < count; ++j) out[j] = capi::to_c(o.get(j));
        return KS_OK;
    });
}

const char* ks_result_name(ks_result r) { return errc_name(Errc(int(r))); }

}  // extern "C"
