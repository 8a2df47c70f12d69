#pragma once
// A pose: one kform per joint, stored as a structure of arrays in joint order (parents first).
// Ops write into poses the caller has sized; they never resize or allocate.

#include <cassert>
#include <vector>

#include "common/math/kform.h"

namespace ks {

struct Pose {
    std::vector<vec3> pos;  // positions
    std::vector<quat> rot;  // rotations
    std::vector<vec3> scl;  // scales
    std::vector<vec3> vel;  // linear velocities
    std::vector<vec3> ang;  // angular velocities (parent frame)
    std::vector<vec3> svl;  // scalar velocities, d(log scl)/dt

    Pose() = default;
    // n identity kforms at rest.
    explicit Pose(int n) { resize(n); }
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

}  // namespace ks
