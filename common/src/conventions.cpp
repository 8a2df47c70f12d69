#include <kinesync/common/conventions.h>

#include <cmath>
#include <string>

#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/errors.h>

namespace ks {

EngineConvention engine_convention(Engine e) {
    switch (e) {
        case Engine::Unreal: return {{2, 0, 1}, {1, -1, 1}, 100.0f, true};  // X = forward, Y = right (-left), Z = up
        case Engine::Unity: return {{0, 1, 2}, {-1, 1, 1}, 1.0f, true};     // X = right (-left), Y = up, Z = forward
        case Engine::Godot: return {{0, 1, 2}, {1, 1, 1}, 1.0f, true};
        case Engine::Kinesync: return {{0, 1, 2}, {1, 1, 1}, 1.0f, false};
    }
    throw Error(Errc::InvalidArgument, "engine_convention: engine = " + std::to_string(int(e)) + ", not an Engine", "engine");
}

namespace {

float at(vec3 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : v.z; }
void put(vec3& v, int i, float x) { (i == 0 ? v.x : i == 1 ? v.y : v.z) = x; }

float det(const EngineConvention& c) {
    const int parity = (c.axis[0] == 0) ? (c.axis[1] == 1 ? 1 : -1) : (c.axis[0] == 1) ? (c.axis[1] == 2 ? 1 : -1) : (c.axis[1] == 0 ? 1 : -1);
    return float(parity) * c.sign[0] * c.sign[1] * c.sign[2];
}

// M v (signed) or the components permuted without signs (scales).
vec3 forward(const EngineConvention& c, vec3 v, bool signs) {
    vec3 o;
    for (int i = 0; i < 3; ++i) put(o, i, (signs ? c.sign[i] : 1.0f) * at(v, c.axis[i]));
    return o;
}
vec3 backward(const EngineConvention& c, vec3 v, bool signs) {
    vec3 o;
    for (int i = 0; i < 3; ++i) put(o, c.axis[i], (signs ? c.sign[i] : 1.0f) * at(v, i));
    return o;
}

float check_units(float metres_per_unit) {
    if (!(metres_per_unit > 0 && std::isfinite(metres_per_unit)))
        throw Error(Errc::InvalidArgument, "engine conversion: metres_per_unit = " + std::to_string(metres_per_unit) + ", must be finite and > 0",
                    "metres_per_unit");
    return metres_per_unit;
}

kform convert(const kform& k, const EngineConvention& c, float scale, bool to_engine) {
    const auto map = [&](vec3 v, bool signs) { return to_engine ? forward(c, v, signs) : backward(c, v, signs); };
    const float d = det(c);
    kform o;
    o.pos = map(k.pos, true) * scale;
    o.vel = map(k.vel, true) * scale;
    const vec3 axis = map(vec3{k.rot.x, k.rot.y, k.rot.z}, true) * d;
    o.rot = quat{k.rot.w, axis.x, axis.y, axis.z};
    o.ang = map(k.ang, true) * d;
    o.scl = map(k.scl, false);
    o.svl = map(k.svl, false);
    return o;
}

// Every joint checked first (out may be in, and a refusal leaves it as it was), then converted.
void convert_pose(Pose& out, const Pose& in, Engine e, float metres_per_unit, bool to_engine, const char* where) {
    const EngineConvention c = engine_convention(e);
    const float units = check_units(metres_per_unit) * c.units_per_metre;
    check_pose_values(in, where, "in");
    if (&out != &in) out.resize(in.size());
    for (int j = 0; j < in.size(); ++j) out.set(j, convert(in.get(j), c, to_engine ? units : 1.0f / units, to_engine));
}

}  // namespace

kform kform_to_engine(const kform& k, Engine e, float metres_per_unit) {
    const EngineConvention c = engine_convention(e);
    check_kform(k, "kform_to_engine", "k");
    return convert(k, c, check_units(metres_per_unit) * c.units_per_metre, true);
}

kform kform_from_engine(const kform& k, Engine e, float metres_per_unit) {
    const EngineConvention c = engine_convention(e);
    check_kform(k, "kform_from_engine", "k");
    return convert(k, c, 1.0f / (check_units(metres_per_unit) * c.units_per_metre), false);
}

void pose_to_engine(Pose& out, const Pose& in, Engine e, float metres_per_unit) {
    convert_pose(out, in, e, metres_per_unit, true, "pose_to_engine");
}

void pose_from_engine(Pose& out, const Pose& in, Engine e, float metres_per_unit) {
    convert_pose(out, in, e, metres_per_unit, false, "pose_from_engine");
}

void derive_velocities(Pose& out, const Pose& curr, const Pose& prev, float dt) {
    if (!(dt > 0 && std::isfinite(dt)))
        throw Error(Errc::InvalidArgument, "derive_velocities: dt = " + std::to_string(dt) + ", must be finite and > 0", "dt");
    check_pose_values(curr, "derive_velocities", "curr");
    check_pose_values(prev, "derive_velocities", "prev");
    check_pose_size(prev, curr.size(), "derive_velocities", "prev");
    op_finite_diff(out, curr, prev, dt);
}

}  // namespace ks
