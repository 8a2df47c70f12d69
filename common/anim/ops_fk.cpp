#include "common/anim/ops_fk.h"

namespace ks {

void op_fk(Pose& global, const Pose& local, std::span<const int> parents) {
    assert(global.size() == local.size() && int(parents.size()) == local.size());
    for (int i = 0; i < local.size(); ++i) {
        const int p = parents[size_t(i)];
        assert(p < i);
        global.set(i, p < 0 ? local.get(i) : kform_mul(global.get(p), local.get(i)));
    }
}

void op_fk_static(Pose& global, const Pose& local, std::span<const int> parents) {
    assert(global.size() == local.size() && int(parents.size()) == local.size());
    for (size_t i = 0; i < parents.size(); ++i) {
        const int p = parents[i];
        if (p < 0) {
            global.pos[i] = local.pos[i];
            global.rot[i] = local.rot[i];
            global.scl[i] = local.scl[i];
        } else {
            const size_t q = size_t(p);
            global.pos[i] = quat_mul_vec3(global.rot[q], local.pos[i] * global.scl[q]) + global.pos[q];
            global.rot[i] = quat_mul(global.rot[q], local.rot[i]);
            global.scl[i] = local.scl[i] * global.scl[q];
        }
    }
}

void op_bk(Pose& local, const Pose& global, std::span<const int> parents) {
    assert(global.size() == local.size() && int(parents.size()) == local.size());
    for (int i = 0; i < global.size(); ++i) {
        const int p = parents[size_t(i)];
        local.set(i, p < 0 ? global.get(i) : kform_div(global.get(p), global.get(i)));
    }
}

void op_finite_diff(Pose& out, const Pose& curr, const Pose& prev, float dt) {
    for (size_t i = 0; i < size_t(curr.size()); ++i) {
        out.pos[i] = curr.pos[i];
        out.rot[i] = curr.rot[i];
        out.scl[i] = curr.scl[i];
        out.vel[i] = (curr.pos[i] - prev.pos[i]) / dt;
        out.ang[i] = quat_differentiate_angular_velocity(curr.rot[i], prev.rot[i], dt);
        out.svl[i] = log(curr.scl[i] / prev.scl[i]) / dt;
    }
}

void op_finite_diff_central(Pose& out, const Pose& plus, const Pose& minus, float h) {
    for (size_t i = 0; i < size_t(plus.size()); ++i) {
        out.vel[i] = (plus.pos[i] - minus.pos[i]) / (2.0f * h);
        out.ang[i] = quat_differentiate_angular_velocity(plus.rot[i], minus.rot[i], 2.0f * h);
        out.svl[i] = log(plus.scl[i] / minus.scl[i]) / (2.0f * h);
    }
}

void op_integrate(Pose& out, const Pose& in, float dt) {
    for (int i = 0; i < in.size(); ++i) out.set(i, kform_integrate(in.get(i), dt));
}

}  // namespace ks
