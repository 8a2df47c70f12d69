#include <gtest/gtest.h>

#include <cstring>

#include <kinesync/offline/builtin_motion.h>
#include <kinesync/offline/looping.h>
#include <kinesync/common/anim/ops_fk.h>

using namespace ks;

namespace {
// Global positions of frame f.
Pose fk_frame(const Clip& c, int f) {
    Pose local(c.joints()), global(c.joints());
    for (int j = 0; j < c.joints(); ++j) {
        local.pos[size_t(j)] = c.pos(f, j);
        local.rot[size_t(j)] = c.rot(f, j);
    }
    op_fk_static(global, local, c.skeleton.parents);
    return global;
}
}  // namespace

TEST(BuiltinMotion, SkeletonAndClipsAreWellFormedAndDeterministic) {
    const Skeleton s = builtin_skeleton();
    EXPECT_EQ(s.validate(), "");
    EXPECT_EQ(s.size(), 21);
    for (const auto& name : builtin_clip_names()) {
        const Clip a = builtin_clip(name), b = builtin_clip(name);
        ASSERT_GT(a.frames, 60) << name;
        EXPECT_EQ(std::memcmp(a.pos_.data(), b.pos_.data(), a.pos_.size() * sizeof(vec3)), 0) << name << " deterministic";
        EXPECT_EQ(std::memcmp(a.rot_.data(), b.rot_.data(), a.rot_.size() * sizeof(quat)), 0) << name << " deterministic";
        for (int f = 0; f < a.frames; ++f)
            for (int j = 0; j < a.joints(); ++j) ASSERT_TRUE(isfinite(a.pos(f, j)) && isfinite(a.rot(f, j))) << name;
    }
    EXPECT_THROW(builtin_clip("moonwalk"), std::invalid_argument);
}

TEST(BuiltinMotion, LoopsSeamlessly) {
    for (const auto& c : builtin_clips()) {
        const SeamReport s = measure_seam(c);
        EXPECT_LT(s.pos_m, 1e-4f) << c.name;
        EXPECT_LT(s.vel_excess_mps, 1e-3f) << c.name;
        EXPECT_LT(s.root_vel_mps, 1e-3f) << c.name;
        for (int j = 1; j < c.joints(); ++j)
            EXPECT_GT(std::fabs(quat_dot(c.rot(0, j), c.rot(c.frames - 1, j))), 1 - 1e-6f) << c.name << " joint " << j;
    }
}

TEST(BuiltinMotion, FeetAlternateAndStayNearTheGround) {
    for (const char* name : {"walk", "run", "turn"}) {
        const Clip c = builtin_clip(name);
        const int lf = c.skeleton.find("LeftFoot"), rf = c.skeleton.find("RightFoot"), hips = 0;
        ASSERT_GE(lf, 0);
        ASSERT_GE(rf, 0);
        // Foot position along the heading relative to the hips: left and right anti-correlated.
        std::vector<double> ls, rs;
        double min_y = 1e9;
        int left_ahead = 0, right_ahead = 0;
        for (int f = 0; f < c.frames; ++f) {
            const Pose g = fk_frame(c, f);
            const vec3 fwd = quat_mul_vec3(c.rot(f, hips), {0, 0, 1});
            const double l = dot(g.pos[size_t(lf)] - g.pos[0], fwd), r = dot(g.pos[size_t(rf)] - g.pos[0], fwd);
            ls.push_back(l);
            rs.push_back(r);
            (l > r ? left_ahead : right_ahead)++;
            min_y = std::min({min_y, double(g.pos[size_t(lf)].y), double(g.pos[size_t(rf)].y)});
        }
        // Pearson correlation of the two feet's forward offsets.
        double ml = 0, mr = 0;
        for (size_t i = 0; i < ls.size(); ++i) ml += ls[i] / double(ls.size()), mr += rs[i] / double(rs.size());
        double slr = 0, sll = 0, srr = 0;
        for (size_t i = 0; i < ls.size(); ++i) {
            slr += (ls[i] - ml) * (rs[i] - mr);
            sll += (ls[i] - ml) * (ls[i] - ml);
            srr += (rs[i] - mr) * (rs[i] - mr);
        }
        EXPECT_LT(slr / std::sqrt(sll * srr), -0.8) << name << ": feet swing in opposition";
        EXPECT_GT(left_ahead, c.frames / 3) << name;
        EXPECT_GT(right_ahead, c.frames / 3) << name;
        EXPECT_GT(min_y, -0.05) << name << ": feet never sink far into the floor";
        EXPECT_LT(min_y, 0.2) << name << ": feet reach the floor";
    }
}

TEST(BuiltinMotion, TravelMatchesTheGait) {
    const Clip walk = builtin_clip("walk"), run = builtin_clip("run"), idle = builtin_clip("idle"), turn = builtin_clip("turn");
    auto travel = [](const Clip& c) { return length(c.pos(c.frames - 1, 0) - c.pos(0, 0)); };
    EXPECT_NEAR(travel(walk) / walk.duration(), 1.4f, 0.01f);
    EXPECT_NEAR(travel(run) / run.duration(), 3.5f, 0.01f);
    EXPECT_LT(travel(idle), 1e-3f);
    // The turn walks an arc: heading changes by 0.6 rad/s.
    const vec3 f0 = quat_mul_vec3(turn.rot(0, 0), {0, 0, 1}), f1 = quat_mul_vec3(turn.rot(turn.frames - 1, 0), {0, 0, 1});
    EXPECT_NEAR(std::atan2(f1.x, f1.z) - std::atan2(f0.x, f0.z), 0.6f * turn.duration(), 0.05f);
}
