#pragma once
// A pose: one kform per joint, stored as a structure of arrays in joint order (parents first).
// Ops write into poses the caller has sized; they never resize or allocate. Each op checks the
// sizes of the poses it is given (every array, every build type) and throws ks::Error
// (Errc::InvalidPose) rather than read or write out of bounds.

#include <vector>

#include <kinesync/common/anim/skeleton.h>
#include <kinesync/common/errors.h>
#include <kinesync/common/math/kform.h>

namespace ks {

// How far |q| may be from 1 in a pose given to kinesync (a float quaternion renormalized by an
// engine is within 1e-6; one that was never normalized is not).
constexpr float kUnitQuatTolerance = 1e-3f;

struct Pose {
    std::vector<vec3> pos;  // positions
    std::vector<quat> rot;  // rotations
    std::vector<vec3> scl;  // scales
    std::vector<vec3> vel;  // linear velocities
    std::vector<vec3> ang;  // angular velocities (parent frame)
    std::vector<vec3> svl;  // scale velocities, d(log scl)/dt

    Pose() = default;
    // n identity kforms (every joint at its parent's origin): a buffer for an op to write.
    explicit Pose(int n) { resize(n); }
    // The skeleton's rest pose, local: each joint at its rest offset, no rotation, unit scale, at rest.
    explicit Pose(const Skeleton& skeleton) {
        resize(skeleton.size());
        for (int j = 0; j < skeleton.size() && size_t(j) < skeleton.offsets.size(); ++j) pos[size_t(j)] = skeleton.offsets[size_t(j)];
    }
    void resize(int n) {
        pos.assign(size_t(n), vec3{});
        rot.assign(size_t(n), quat{});
        scl.assign(size_t(n), vec3{1, 1, 1});
        vel.assign(size_t(n), vec3{});
        ang.assign(size_t(n), vec3{});
        svl.assign(size_t(n), vec3{});
    }
    int size() const { return int(pos.size()); }

    kform get(int i) const {
        return {pos[size_t(i)], rot[size_t(i)], scl[size_t(i)], vel[size_t(i)], ang[size_t(i)], svl[size_t(i)]};
    }
    void set(int i, const kform& k) {
        pos[size_t(i)] = k.pos;
        rot[size_t(i)] = k.rot;
        scl[size_t(i)] = k.scl;
        vel[size_t(i)] = k.vel;
        ang[size_t(i)] = k.ang;
        svl[size_t(i)] = k.svl;
    }
};

// True when all six arrays hold `joints` entries.
bool pose_has_size(const Pose& p, int joints);
// Throws ks::Error (Errc::InvalidPose, field "NAME") unless all six arrays hold `joints`
// entries: "WHERE: NAME has 30 joints (rot 29), expected 31".
void check_pose_size(const Pose& p, int joints, const char* where, const char* name = "pose");
// The checks at the boundary, for a pose a game hands over: the size, then every value finite,
// every rotation a unit quaternion (within kUnitQuatTolerance), every scale positive. Throws
// ks::Error (Errc::InvalidPose) naming the field, the joint (and its name) and the value.
void check_pose(const Pose& p, const Skeleton& skeleton, const char* where, const char* name = "pose");
// The same without a skeleton (any joint count; joints named by index), and for one kform.
void check_pose_values(const Pose& p, const char* where, const char* name = "pose");
void check_kform(const kform& k, const char* where, const char* name = "kform", int joint = 0);

}  // namespace ks
