#include <kinesync/common/anim/ops_ik.h>

#include "common/src/anim/op_checks.h"

#include <string>
#include <utility>

#include <cmath>

#include <kinesync/common/anim/ops_fk.h>

namespace ks {

namespace {
float safe_acos(float x) { return std::acos(clampf(x, -1.0f, 1.0f)); }
}  // namespace

void op_two_bone_ik_static(Pose& local, const Pose& global, int a, int b, int c, vec3 target,
                           vec3 bend_axis_local) {
    const int joints = detail::check_poses(__func__, {{"global", &global}, {"local", &local}});
    for (const auto& [name, j] : {std::pair<const char*, int>{"a", a}, {"b", b}, {"c", c}}) detail::check_joint(__func__, name, j, joints);
    if (a == b || b == c || a == c)
        throw Error(Errc::InvalidArgument, "op_two_bone_ik_static: joints a, b, c (" + std::to_string(a) + ", " + std::to_string(b) + ", " +
                                               std::to_string(c) + ") must differ", "b");
    detail::check_finite(__func__, "target", target);
    detail::check_finite(__func__, "bend_axis_local", bend_axis_local);
    const size_t ia = size_t(a), ib = size_t(b), ic = size_t(c);
    const vec3 pa = global.pos[ia], pb = global.pos[ib], pc = global.pos[ic];
    const float lab = length(pb - pa), lcb = length(pc - pb);
    const float eps = 1e-4f * (lab + lcb);
    const float lat = clampf(length(target - pa), std::fabs(lab - lcb) + eps, lab + lcb - eps);

    // Knee: the interior angle at b that puts c at distance lat from a (law of cosines).
    const float knee_now = safe_acos(dot(normalize(pa - pb), normalize(pc - pb)));
    const float knee_want = safe_acos((lab * lab + lcb * lcb - lat * lat) / (2.0f * lab * lcb));
    vec3 n = cross(pa - pb, pc - pb);  // rotating c-b positively about n opens the knee
    if (length(n) < 1e-6f * (lab * lcb + 1e-12f)) n = quat_mul_vec3(global.rot[ib], bend_axis_local);
    n = normalize(n);
    const quat knee_global = quat_from_angle_axis(knee_want - knee_now, n);
    const quat knee_local_axis = quat_from_angle_axis(knee_want - knee_now, quat_inv_mul_vec3(global.rot[ib], n));
    local.rot[ib] = quat_mul(local.rot[ib], knee_local_axis);

    // Hip: shortest rotation about a taking the new heel onto the target direction.
    const vec3 pc_new = pb + quat_mul_vec3(knee_global, pc - pb);
    const quat swing = quat_between(pc_new - pa, target - pa);
    // New global a = swing * a_global, so local a = a_local * (a_global^-1 swing a_global).
    local.rot[ia] = quat_mul(local.rot[ia], quat_mul(quat_inv_mul(global.rot[ia], swing), global.rot[ia]));
    local.rot[ia] = quat_normalize(local.rot[ia]);
    local.rot[ib] = quat_normalize(local.rot[ib]);
}

void op_two_bone_ik(Pose& local, Pose& local_prev, Pose& global, Pose& global_prev, Span<const int> parents,
                    int a, int b, int c, vec3 target_pos, vec3 target_vel, float delta, vec3 bend_axis_local) {
    const int joints =
        detail::check_poses(__func__, {{"local", &local}, {"local_prev", &local_prev}, {"global", &global}, {"global_prev", &global_prev}});
    detail::check_parents(__func__, parents, joints);
    for (const auto& [name, j] : {std::pair<const char*, int>{"a", a}, {"b", b}, {"c", c}}) detail::check_joint(__func__, name, j, joints);
    if (parents[size_t(b)] != a || parents[size_t(c)] != b)
        throw Error(Errc::InvalidArgument, "op_two_bone_ik: joints " + std::to_string(a) + ", " + std::to_string(b) + ", " + std::to_string(c) +
                                               " are not a chain (a parent of b, b parent of c)", "b", b);
    detail::check_finite(__func__, "target_vel", target_vel);
    detail::check_positive(__func__, "delta", delta);
    detail::check_finite(__func__, "target_pos", target_pos);
    detail::check_finite(__func__, "target_pos - target_vel * delta", target_pos - target_vel * delta);  // before writing anything
    op_integrate(local_prev, local, -delta);
    op_fk_static(global, local, parents);
    op_fk_static(global_prev, local_prev, parents);
    op_two_bone_ik_static(local, global, a, b, c, target_pos, bend_axis_local);
    op_two_bone_ik_static(local_prev, global_prev, a, b, c, target_pos - target_vel * delta, bend_axis_local);
    for (int j : {a, b})
        local.ang[size_t(j)] = quat_differentiate_angular_velocity(local.rot[size_t(j)], local_prev.rot[size_t(j)], delta);
}

}  // namespace ks
