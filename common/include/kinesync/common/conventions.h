#pragma once
// kinesync's conventions, and conversions to and from game engines'.
//
// kinesync: positions in the skeleton's units (metres_per_unit converts them to metres), right-
// handed, Y up, characters facing +Z with +X to their left (glTF's axes); quaternions (w, x, y, z)
// rotating parent-frame vectors; angular velocities in radians per second in the parent's frame;
// scale velocities d(log scale)/dt. Joint 0 is in the world, the others relative to their parent.
//
// Engines: Unreal (centimetres, Z up, X forward, Y right, left-handed), Unity (metres, Y up,
// Z forward, X right, left-handed), Godot (metres, Y up, right-handed, models facing +Z). Each is
// a change of basis M (a signed permutation) and a scale: positions and linear velocities become
// s M p, rotations M R M^T, angular velocities (axial vectors) det(M) M w, scales and their
// velocities the permuted components. A kform chain converts joint by joint, local or global alike.

#include <kinesync/common/anim/pose.h>
#include <kinesync/common/errors.h>
#include <kinesync/common/math/kform.h>

namespace ks {

enum class Engine { Kinesync, Unreal, Unity, Godot };

struct EngineConvention {
    int axis[3];            // engine axis i is sign[i] times kinesync axis axis[i]
    float sign[3];
    float units_per_metre;  // 100 for Unreal's centimetres
    bool xyzw;              // the engine stores quaternions x, y, z, w
};
EngineConvention engine_convention(Engine e);

// Throws ks::Error (Errc::InvalidArgument) unless metres_per_unit is finite and > 0.
kform kform_to_engine(const kform& k, Engine e, float metres_per_unit);
kform kform_from_engine(const kform& k, Engine e, float metres_per_unit);
// Every joint; out is sized like in (it may be in).
void pose_to_engine(Pose& out, const Pose& in, Engine e, float metres_per_unit);
void pose_from_engine(Pose& out, const Pose& in, Engine e, float metres_per_unit);

// For engines without velocities: out gets curr's values with the velocities that take prev to
// curr in dt seconds: (curr - prev) / dt for positions, the shortest-arc rotation log
// log(curr prev^-1) * 2 / dt in the parent frame, log(curr / prev) / dt for scales. out may be
// curr. Throws ks::Error on sizes that differ or dt not finite and > 0.
void derive_velocities(Pose& out, const Pose& curr, const Pose& prev, float dt);

}  // namespace ks
