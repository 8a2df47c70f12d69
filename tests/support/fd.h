#pragma once
// Checking propagated velocities against a central finite difference of the op's own output.
//
// An op is wrapped in eval(t, out): it builds the op's inputs at time t (moved along their own
// velocities, weights and blend clocks advanced) and runs the op. The analytic velocities of
// eval(0) are compared with the Richardson-extrapolated central difference
// (4 D(h) - D(2h)) / 3, D(h) = (eval(+h) - eval(-h)) / 2h, whose truncation error is O(h^4):
// plain D(h) is O(h^2) and on 120 Hz mocap, whose cubic interpolant has large third
// derivatives, that alone is ~0.2 % at h = dt/32 (measured), more than the tolerance.
//
// Tolerance: |analytic - fd| <= rel * |fd| + floor, per joint and channel. rel is the issue's
// 1e-3. The floor is twice the finite difference's own float rounding noise: values carry
// ~1.2e-7 relative error, so D(h) carries ~2.4e-7 * |value| / (2h) and the extrapolation
// (4/3 D(h) + 1/3 D(2h)) about 1.5 times that; floors are 8e-7 * scale / (2h) with scale = the
// largest position magnitude (linear), 1 (angular, radians) and 1 (scalar, log scale). With
// h = 1e-3 s this is 4e-4 rad/s for angular velocity.
// The worst relative errors seen per op are printed at the end of the run (for the notes).

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/pose.h>

namespace ks::test {

struct ChannelWorst {
    double rel = 0.0;       // worst |a - fd| / |fd| among joints well above the floor
    double normalized = 0;  // worst |a - fd| / (rel_tol |fd| + floor): must stay <= 1
};

inline std::map<std::string, ChannelWorst>& fd_registry() {
    static std::map<std::string, ChannelWorst> r;
    return r;
}

// Other measured figures tests want in the notes (printed at the end of the run, worst kept).
inline std::map<std::string, double>& figure_registry() {
    static std::map<std::string, double> r;
    return r;
}
inline void record_figure(const std::string& name, double value) {
    auto [it, fresh] = figure_registry().emplace(name, value);
    if (!fresh) it->second = std::max(it->second, value);
}

struct FdTolerance {
    double rel_lin = 1e-3, rel_ang = 1e-3, rel_svl = 1e-3;
};

inline double pose_pos_scale(const Pose& p) {
    double s = 1.0;
    for (const vec3& v : p.pos) s = std::max(s, double(length(v)));
    return s;
}

// Compares one channel; returns the number of joints over tolerance.
inline int compare_channel(const std::string& key, const std::vector<vec3>& analytic, const std::vector<vec3>& fd,
                           double rel_tol, double floor) {
    ChannelWorst& w = fd_registry()[key];
    int bad = 0;
    for (size_t j = 0; j < analytic.size(); ++j) {
        const double err = length(analytic[j] - fd[j]);
        const double mag = length(fd[j]);
        const double norm = err / (rel_tol * mag + floor);
        w.normalized = std::max(w.normalized, norm);
        if (mag > 2.0 * floor / rel_tol) w.rel = std::max(w.rel, err / mag);
        if (norm > 1.0) {
            ++bad;
            if (bad <= 3)
                ADD_FAILURE() << key << ": joint " << j << " analytic (" << analytic[j].x << ", " << analytic[j].y << ", "
                              << analytic[j].z << ") vs finite difference (" << fd[j].x << ", " << fd[j].y << ", "
                              << fd[j].z << "), |err| " << err << " > " << rel_tol << " * " << mag << " + " << floor;
        }
    }
    return bad;
}

// eval(t, out) must fill `out` (sized) with the op's output at time t.
inline void expect_velocities_match_fd(const std::string& op, const std::function<void(float, Pose&)>& eval, int joints,
                                       float h = 1e-3f, FdTolerance tol = {}) {
    Pose at(joints), plus(joints), minus(joints), fd(joints), fd2(joints);
    eval(0.0f, at);
    eval(+h, plus);
    eval(-h, minus);
    op_finite_diff_central(fd, plus, minus, h);
    eval(+2 * h, plus);
    eval(-2 * h, minus);
    op_finite_diff_central(fd2, plus, minus, 2 * h);
    for (size_t j = 0; j < size_t(joints); ++j) {
        fd.vel[j] = (4.0f * fd.vel[j] - fd2.vel[j]) / 3.0f;
        fd.ang[j] = (4.0f * fd.ang[j] - fd2.ang[j]) / 3.0f;
        fd.svl[j] = (4.0f * fd.svl[j] - fd2.svl[j]) / 3.0f;
    }
    const double noise = 8e-7 / (2.0 * h);
    compare_channel(op + " vel", at.vel, fd.vel, tol.rel_lin, noise * pose_pos_scale(at));
    compare_channel(op + " ang", at.ang, fd.ang, tol.rel_ang, noise);
    compare_channel(op + " svl", at.svl, fd.svl, tol.rel_svl, noise);
}

}  // namespace ks::test
