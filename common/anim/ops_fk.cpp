#include "common/anim/ops_fk.h"

#if defined(__SSE2__)
#include "common/simd/vec.h"
#endif

namespace ks {

void op_fk(Pose& global, const Pose& local, std::span<const int> parents) {
    assert(global.size() == local.size() && int(parents.size()) == local.size());
    // kform_mul inline, on the arrays, with the two rotations of the linear velocity merged:
    // R (w.vel s) + R (w.pos s svl) = R ((w.vel + w.pos svl) s).
    for (size_t i = 0; i < parents.size(); ++i) {
        const int p = parents[i];
        assert(p < int(i));
        if (p < 0) {
            global.pos[i] = local.pos[i], global.rot[i] = local.rot[i], global.scl[i] = local.scl[i];
            global.vel[i] = local.vel[i], global.ang[i] = local.ang[i], global.svl[i] = local.svl[i];
            continue;
        }
        const size_t q = size_t(p);
        const quat vr = global.rot[q];
        const vec3 vs = global.scl[q], vsv = global.svl[q], vang = global.ang[q];
        const vec3 off = local.pos[i] * vs, lin = (local.vel[i] + local.pos[i] * vsv) * vs;
        vec3 r, rlin, rang;
#if defined(__SSE2__)
        // The three rotations by the parent's rotation at once: lanes offset, velocity, angular
        // velocity (quat_mul_vec3: v + 2w (u x v) + u x 2(u x v)).
        {
            using simd::F4;
            const vec3 la = local.ang[i];
            const F4 vx = _mm_set_ps(0.0f, la.x, lin.x, off.x), vy = _mm_set_ps(0.0f, la.y, lin.y, off.y),
                     vz = _mm_set_ps(0.0f, la.z, lin.z, off.z);
            const F4 ux(vr.x), uy(vr.y), uz(vr.z), w(vr.w), two(2.0f);
            const F4 tx = two * (uy * vz - uz * vy), ty = two * (uz * vx - ux * vz), tz = two * (ux * vy - uy * vx);
            alignas(16) float ox[4], oy[4], oz[4];
            (vx + w * tx + (uy * tz - uz * ty)).store(ox);
            (vy + w * ty + (uz * tx - ux * tz)).store(oy);
            (vz + w * tz + (ux * ty - uy * tx)).store(oz);
            r = {ox[0], oy[0], oz[0]};
            rlin = {ox[1], oy[1], oz[1]};
            rang = {ox[2], oy[2], oz[2]};
        }
#else
        r = quat_mul_vec3(vr, off);
        rlin = quat_mul_vec3(vr, lin);
        rang = quat_mul_vec3(vr, local.ang[i]);
#endif
        global.pos[i] = r + global.pos[q];
        global.rot[i] = quat_mul(vr, local.rot[i]);
        global.scl[i] = local.scl[i] * vs;
        global.vel[i] = rlin + global.vel[q] + cross(vang, r);
        global.ang[i] = rang + vang;
        global.svl[i] = local.svl[i] + vsv;
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
