// BVH export: round trips through load_bvh of every shared clip (their own layout and the default
// one), synthetic clips with position channels below the root, gimbal lock in every rotation order,
// angle wraps, units, layout additions and errors.

#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <kinesync/offline/bvh.h>
#include <kinesync/offline/bvh_export.h>
#include "tests/support/clips.h"
#include "tests/support/mocap.h"
#include "tests/support/scratch.h"

namespace ks {
namespace {

constexpr double kRotTol = 1e-4;  // rad
constexpr double kPosTol = 1e-4;  // relative to max(1, |pos|)

struct RoundTripError {
    double rot = 0;  // worst angle of q1 q0^-1, rad
    double pos = 0;  // worst |diff| / max(1, |pos|)
    int rot_frame = -1, rot_joint = -1;
};

double rotation_angle(quat a, quat b) {
    const quat d = quat_mul_inv(a, b);
    const double v = std::sqrt(double(d.x) * d.x + double(d.y) * d.y + double(d.z) * d.z);
    return 2.0 * std::atan2(v, std::fabs(double(d.w)));
}

// Same skeleton and timing, every frame's local positions and rotations within tolerance.
RoundTripError compare_clips(const Clip& a, const Clip& b) {
    RoundTripError e;
    EXPECT_EQ(a.skeleton.names, b.skeleton.names);
    EXPECT_EQ(a.skeleton.parents, b.skeleton.parents);
    EXPECT_EQ(a.frames, b.frames);
    EXPECT_EQ(a.frame_dt, b.frame_dt);  // written as the shortest text that reads back to the same float
    if (a.joints() != b.joints() || a.frames != b.frames) {
        e.rot = e.pos = 1e30;
        return e;
    }
    for (int j = 0; j < a.joints(); ++j) {
        const vec3 oa = a.skeleton.offsets[size_t(j)], ob = b.skeleton.offsets[size_t(j)];
        EXPECT_TRUE(oa.x == ob.x && oa.y == ob.y && oa.z == ob.z) << "OFFSET of " << a.skeleton.names[size_t(j)];
    }
    for (int f = 0; f < a.frames; ++f)
        for (int j = 0; j < a.joints(); ++j) {
            const double r = rotation_angle(a.rot(f, j), b.rot(f, j));
            if (r > e.rot) {
                e.rot = r;
                e.rot_frame = f;
                e.rot_joint = j;
            }
            const vec3 pa = a.pos(f, j), pb = b.pos(f, j);
            const double scale = std::max(1.0, double(length(pa)));
            e.pos = std::max({e.pos, std::fabs(double(pa.x) - pb.x) / scale, std::fabs(double(pa.y) - pb.y) / scale,
                              std::fabs(double(pa.z) - pb.z) / scale});
        }
    return e;
}

void expect_within(const RoundTripError& e, const std::string& what) {
    EXPECT_LE(e.rot, kRotTol) << what << ": rotation error at frame " << e.rot_frame << ", joint " << e.rot_joint;
    EXPECT_LE(e.pos, kPosTol) << what << ": position error";
}

// The MOTION values of a BVH text, one vector per frame.
std::vector<std::vector<double>> motion_values(const std::string& text) {
    std::vector<std::vector<double>> rows;
    const size_t ft = text.find("Frame Time:");
    EXPECT_NE(ft, std::string::npos);
    std::istringstream in(text.substr(text.find('\n', ft) + 1));
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::vector<double> row;
        for (double v; ls >> v;) row.push_back(v);
        if (!row.empty()) rows.push_back(std::move(row));
    }
    return rows;
}

// Largest change of any channel between consecutive frames (degrees for rotation channels).
double max_frame_jump(const std::vector<std::vector<double>>& rows, size_t first_col, size_t ncols) {
    double jump = 0;
    for (size_t f = 1; f < rows.size(); ++f)
        for (size_t c = first_col; c < first_col + ncols; ++c) jump = std::max(jump, std::fabs(rows[f][c] - rows[f - 1][c]));
    return jump;
}

// ---------------------------------------------------------------------------------------------
// Shared clips

TEST(BvhExport, SharedClipsRoundTripWithTheirOwnLayout) {
    KS_REQUIRE_MOCAP();
    for (const auto& info : test::shared_clip_infos()) {
        SCOPED_TRACE(info.file);
        const BvhFile in = load_bvh(test::mocap_path(info.file));
        // The Clip + layout API.
        const std::string text = save_bvh_text(in.clip, &in.layout);
        const BvhFile back = parse_bvh(text, "export");
        const RoundTripError e = compare_clips(in.clip, back.clip);
        expect_within(e, info.file);
        std::printf("[ export ] %-42s own layout:     rot %.3g rad, pos %.3g (relative)\n", info.file, e.rot, e.pos);
        ASSERT_EQ(back.layout.size(), in.layout.size());
        for (size_t j = 0; j < in.layout.size(); ++j) EXPECT_EQ(back.layout[j].channels, in.layout[j].channels) << in.layout[j].joint;
        EXPECT_EQ(back.detected_metres_per_unit, in.detected_metres_per_unit);
        // Without End Sites given, every leaf gets a zero End Site.
        EXPECT_EQ(back.end_sites.size(), in.end_sites.size()) << "every End Site of these files hangs from a leaf";
        for (const vec3& s : back.end_sites) EXPECT_TRUE(s.x == 0 && s.y == 0 && s.z == 0);

        // The BvhFile overload keeps the file's own End Sites.
        const BvhFile whole = parse_bvh(save_bvh_text(in), "export-file");
        expect_within(compare_clips(in.clip, whole.clip), std::string(info.file) + " (BvhFile)");
        ASSERT_EQ(whole.end_sites.size(), in.end_sites.size());
        EXPECT_EQ(whole.end_site_parents, in.end_site_parents);
        for (size_t k = 0; k < in.end_sites.size(); ++k)
            EXPECT_TRUE(whole.end_sites[k].x == in.end_sites[k].x && whole.end_sites[k].y == in.end_sites[k].y &&
                        whole.end_sites[k].z == in.end_sites[k].z);
    }
}

TEST(BvhExport, SharedClipsRoundTripWithTheDefaultLayout) {
    KS_REQUIRE_MOCAP();
    for (const auto& info : test::shared_clip_infos()) {
        SCOPED_TRACE(info.file);
        const Clip& clip = test::shared_clip(info.file);
        const std::string text = save_bvh_text(clip);
        const BvhFile back = parse_bvh(text, "export");
        const RoundTripError e = compare_clips(clip, back.clip);
        expect_within(e, info.file);
        std::printf("[ export ] %-42s default layout: rot %.3g rad, pos %.3g (relative)\n", info.file, e.rot, e.pos);
        // Root: 6 channels; others: ZYX only (no joint below the root moves in these files).
        ASSERT_EQ(back.layout.size(), size_t(clip.joints()));
        EXPECT_EQ(back.layout[0].channels, (std::vector<std::string>{"Xposition", "Yposition", "Zposition", "Zrotation",
                                                                     "Yrotation", "Xrotation"}));
        for (size_t j = 1; j < back.layout.size(); ++j)
            EXPECT_EQ(back.layout[j].channels, (std::vector<std::string>{"Zrotation", "Yrotation", "Xrotation"}));
        EXPECT_EQ(back.clip.metres_per_unit, clip.metres_per_unit) << "the units rule finds the same unit again";
    }
}

std::string read_text(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    EXPECT_NE(f, nullptr) << path;
    std::string s;
    if (!f) return s;
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    std::fclose(f);
    return s;
}

// The files' own angles are continuous Euler angles; the export picks, frame by frame, the solution
// nearest the previous one, so it must never be less continuous than the file, and mostly gives the
// file's very numbers back.
TEST(BvhExport, SharedClipAnglesAreAsContinuousAsTheFiles) {
    KS_REQUIRE_MOCAP();
    for (const auto& info : test::shared_clip_infos()) {
        SCOPED_TRACE(info.file);
        const std::string path = test::mocap_path(info.file);
        const BvhFile in = load_bvh(path);
        const auto src = motion_values(read_text(path));
        const auto out = motion_values(save_bvh_text(in));
        ASSERT_EQ(src.size(), out.size());
        ASSERT_EQ(src[0].size(), out[0].size());
        // Rotation columns: every column except the root's first three.
        const size_t ncol = src[0].size();
        double src_jump = 0, out_jump = 0, diff = 0;
        size_t differ = 0;
        for (size_t f = 0; f < src.size(); ++f)
            for (size_t c = 3; c < ncol; ++c) {
                const double d = std::fabs(src[f][c] - out[f][c]);
                diff = std::max(diff, d);
                differ += d > 1e-3;
                if (f > 0) {
                    src_jump = std::max(src_jump, std::fabs(src[f][c] - src[f - 1][c]));
                    out_jump = std::max(out_jump, std::fabs(out[f][c] - out[f - 1][c]));
                }
            }
        std::printf("[ export ] %-42s largest frame-to-frame change %.2f deg in the file, %.2f exported; "
                    "%zu of %zu values differ from the file's by > 1e-3 deg (max %.3g)\n",
                    info.file, src_jump, out_jump, differ, src.size() * (ncol - 3), diff);
        EXPECT_LE(out_jump, src_jump + 1e-3);
    }
}

// ---------------------------------------------------------------------------------------------
// Synthetic clips

// Root (yaw through three full turns, translating), a spine with position channels of its own,
// an arm whose middle Euler angle sweeps through +-90 degrees (gimbal lock), a static hand.
Clip synthetic_clip(const char* arm_order) {
    Clip c;
    c.name = "synthetic";
    c.skeleton.names = {"pelvis", "spine", "arm", "hand", "tail"};
    c.skeleton.parents = {-1, 0, 1, 2, 0};
    c.skeleton.offsets = {{0, 90, 0}, {0, 10, 0}, {15, 20, 0}, {0, 25, 0}, {0, -5, -8}};
    c.frame_dt = 1.0f / 60.0f;
    c.metres_per_unit = 0.01f;
    c.resize(361);
    constexpr float deg = kPi / 180.0f;
    const bool proper = arm_order[0] == arm_order[2];
    for (int f = 0; f < c.frames; ++f) {
        const float t = float(f) / float(c.frames - 1);
        const float yaw = 1080.0f * t * deg;  // three turns about Y
        c.pos(f, 0) = {200.0f * t, 90.0f + 5.0f * std::sin(12.0f * t), -30.0f * t};
        c.rot(f, 0) = quat_from_angle_axis(yaw, {0, 1, 0});
        c.pos(f, 1) = c.skeleton.offsets[1] + vec3{2.0f * std::sin(7.0f * t), 1.5f * t, -std::cos(5.0f * t)};
        c.rot(f, 1) = quat_from_angle_axis(0.3f * std::sin(9.0f * t), normalize(vec3{1, 0.2f, 0.1f}));
        c.pos(f, 2) = c.skeleton.offsets[2];
        c.pos(f, 3) = c.skeleton.offsets[3];
        c.pos(f, 4) = c.skeleton.offsets[4];
        c.rot(f, 4) = quat_from_angle_axis(0.5f * t, {0, 0, 1});
        // The arm's middle angle goes -120 .. +120 degrees, through the lock angles (Tait-Bryan: -90 at
        // f = 45 and +90 at f = 315; proper Euler: 0 at f = 180), and stays exactly locked for six
        // frames there while the first and third angles keep moving.
        float mid = -120.0f + 240.0f * t;
        if (proper && f >= 175 && f <= 180) mid = 0.0f;
        if (!proper && f >= 40 && f <= 45) mid = -90.0f;
        if (!proper && f >= 310 && f <= 315) mid = 90.0f;
        const float angles[3] = {40.0f * std::sin(6.0f * t) * deg, mid * deg, (30.0f + 200.0f * t) * deg};
        c.rot(f, 2) = quat_from_euler(arm_order, angles);
    }
    return c;
}

std::vector<BvhChannels> layout_with_arm_order(const Clip& c, const std::string& order) {
    std::vector<BvhChannels> l = bvh_export_layout(c);
    l[2].channels.clear();
    for (char a : order) l[2].channels.push_back(std::string(1, a) + "rotation");
    return l;
}

TEST(BvhExport, DefaultLayoutAddsPositionChannelsOnlyWhereNeeded) {
    const Clip c = synthetic_clip("ZYX");
    const std::vector<BvhChannels> l = bvh_export_layout(c);
    ASSERT_EQ(l.size(), 5u);
    const std::vector<std::string> six{"Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"};
    const std::vector<std::string> three{"Zrotation", "Yrotation", "Xrotation"};
    EXPECT_EQ(l[0].channels, six);
    EXPECT_EQ(l[1].channels, six) << "the spine moves away from its OFFSET";
    EXPECT_EQ(l[2].channels, three);
    EXPECT_EQ(l[3].channels, three);
    EXPECT_EQ(l[4].channels, three);
    EXPECT_EQ(l[1].joint, "spine");

    const std::string text = save_bvh_text(c);
    EXPECT_NE(text.find("JOINT spine"), std::string::npos);
    EXPECT_NE(text.find("CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation"), std::string::npos);
    // Leaves (hand, tail) get End Sites.
    size_t sites = 0;
    for (size_t k = text.find("End Site"); k != std::string::npos; k = text.find("End Site", k + 1)) ++sites;
    EXPECT_EQ(sites, 2u);
    const BvhFile back = parse_bvh(text, "synthetic");
    expect_within(compare_clips(c, back.clip), "synthetic default layout");
    EXPECT_EQ(back.end_site_parents, (std::vector<int>{3, 4}));
}

TEST(BvhExport, GimbalLockAndWrapsRoundTripInEveryOrder) {
    for (const char* order : {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "ZXZ", "YXY", "XZX"}) {
        SCOPED_TRACE(order);
        const Clip c = synthetic_clip(order);
        const auto layout = layout_with_arm_order(c, order);
        const std::string text = save_bvh_text(c, &layout);
        const BvhFile back = parse_bvh(text, "synthetic");
        const RoundTripError e = compare_clips(c, back.clip);
        expect_within(e, order);
        EXPECT_EQ(back.layout[2].channels.size(), 3u);
        // Continuity: columns are root 6, spine 6, arm 3, hand 3, tail 3. The arm's true angles move
        // < 1.5 degrees per frame; near lock only the sum/difference of the first and third angles is
        // defined, which the exporter must not flip.
        const auto rows = motion_values(text);
        ASSERT_EQ(rows.size(), size_t(c.frames));
        const double arm_jump = max_frame_jump(rows, 12, 3);
        EXPECT_LT(arm_jump, 10.0) << "arm angles jump between frames";
        std::printf("[ export ] synthetic, arm order %s: rot %.3g rad, pos %.3g; largest arm angle step %.2f deg\n", order,
                    e.rot, e.pos, arm_jump);
        // Root yaw: three turns, unwrapped (ZYX: the yaw is the middle angle, locked at 90 + k*180).
        const double root_jump = max_frame_jump(rows, 3, 3);
        EXPECT_LT(root_jump, 10.0);
        EXPECT_NEAR(rows.back()[4], 1080.0, 1e-3) << "root Yrotation unwrapped to 1080 degrees";
        EXPECT_NEAR(rows.back()[3], 0.0, 1e-3);
        EXPECT_NEAR(rows.back()[5], 0.0, 1e-3);
    }
}

TEST(BvhExport, EulerDecompositionHandlesExactLockAndPrefersThePreviousSplit) {
    constexpr float deg = kPi / 180.0f;
    for (const char* order : {"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"}) {
        SCOPED_TRACE(order);
        for (float mid : {90.0f, -90.0f, 89.99f, -89.999f, 45.0f, 179.0f}) {
            const float in[3] = {25.0f * deg, mid * deg, -60.0f * deg};
            const quat q = quat_from_euler(order, in);
            const std::array<double, 3> prev{25.0 * deg, mid * deg, -60.0 * deg};
            const auto e = euler_from_quat(q, order, &prev);
            const float ef[3] = {float(e[0]), float(e[1]), float(e[2])};
            EXPECT_LT(rotation_angle(quat_from_euler(order, ef), q), 1e-6) << "mid " << mid;
            // With the true angles as the previous frame, the true split comes back.
            EXPECT_NEAR(e[0], prev[0], 1e-3) << "mid " << mid;
            EXPECT_NEAR(e[1], prev[1], 1e-3) << "mid " << mid;
            EXPECT_NEAR(e[2], prev[2], 1e-3) << "mid " << mid;
            // Previous angles one turn further: the answer follows them.
            const std::array<double, 3> turned{prev[0] + 2 * M_PI, prev[1] - 2 * M_PI, prev[2] + 4 * M_PI};
            const auto t = euler_from_quat(q, order, &turned);
            EXPECT_NEAR(t[0], turned[0], 1e-3);
            EXPECT_NEAR(t[1], turned[1], 1e-3);
            EXPECT_NEAR(t[2], turned[2], 1e-3);
        }
        // Without a previous frame: the solution nearest zero.
        const float small[3] = {0.1f, -0.2f, 0.3f};
        const auto z = euler_from_quat(quat_from_euler(order, small), order);
        EXPECT_NEAR(z[0], 0.1, 1e-5);
        EXPECT_NEAR(z[1], -0.2, 1e-5);
        EXPECT_NEAR(z[2], 0.3, 1e-5);
    }
    EXPECT_THROW(euler_from_quat(quat{}, "XXY"), std::invalid_argument);
    EXPECT_THROW(euler_from_quat(quat{}, "XQZ"), std::invalid_argument);
}

TEST(BvhExport, UnitsArePreservedThroughTheOverride) {
    // BVH has no units field: a clip in an unusual unit comes back with the detected one unless the
    // caller passes its unit as the override.
    Clip c = synthetic_clip("ZYX");
    c.metres_per_unit = 0.3f;
    const std::string text = save_bvh_text(c);
    const BvhFile detected = parse_bvh(text, "units");
    EXPECT_NE(detected.clip.metres_per_unit, c.metres_per_unit) << "0.3 m/unit is not one of the rule's units";
    BvhOptions opts;
    opts.metres_per_unit = c.metres_per_unit;
    const BvhFile overridden = parse_bvh(text, "units", opts);
    EXPECT_EQ(overridden.clip.metres_per_unit, 0.3f);
    expect_within(compare_clips(c, overridden.clip), "units override");
    // Positions are written in file units, not converted.
    EXPECT_NE(text.find("OFFSET 0 90 0"), std::string::npos);
}

TEST(BvhExport, GivenLayoutGainsChannelsTheClipNeeds) {
    Clip c = synthetic_clip("ZXY");
    // A layout like the CMU files': positions on the root only, the tail with no rotation channels.
    std::vector<BvhChannels> l = layout_with_arm_order(c, "ZXY");
    l[1].channels = {"Zrotation", "Xrotation", "Yrotation"};
    l[4].channels = {};
    const auto eff = bvh_export_layout(c, &l);
    EXPECT_EQ(eff[1].channels, (std::vector<std::string>{"Xposition", "Yposition", "Zposition", "Zrotation",
                                                          "Xrotation", "Yrotation"}));
    EXPECT_EQ(eff[4].channels, (std::vector<std::string>{"Zrotation", "Yrotation", "Xrotation"}));
    expect_within(compare_clips(c, parse_bvh(save_bvh_text(c, &l), "l").clip), "augmented layout");

    // Only the moving axis is added; a still, unrotated joint keeps "CHANNELS 0".
    for (int f = 0; f < c.frames; ++f) {
        c.pos(f, 1) = c.skeleton.offsets[1] + vec3{0, 0.01f * float(f), 0};
        c.rot(f, 4) = quat{};
    }
    const auto eff2 = bvh_export_layout(c, &l);
    EXPECT_EQ(eff2[1].channels, (std::vector<std::string>{"Yposition", "Zrotation", "Xrotation", "Yrotation"}));
    EXPECT_TRUE(eff2[4].channels.empty());
    const std::string text = save_bvh_text(c, &l);
    EXPECT_NE(text.find("CHANNELS 0"), std::string::npos);
    expect_within(compare_clips(c, parse_bvh(text, "l2").clip), "single position channel");

    // Unsupported layouts are refused rather than losing motion.
    std::vector<BvhChannels> two = l;
    two[2].channels = {"Zrotation", "Xrotation"};
    EXPECT_THROW(save_bvh_text(c, &two), std::invalid_argument);
    std::vector<BvhChannels> renamed = l;
    renamed[3].joint = "wrist";
    EXPECT_THROW(save_bvh_text(c, &renamed), std::invalid_argument);
    std::vector<BvhChannels> unknown = l;
    unknown[3].channels = {"Wrotation"};
    EXPECT_THROW(save_bvh_text(c, &unknown), std::invalid_argument);
    std::vector<BvhChannels> short_layout(l.begin(), l.begin() + 3);
    EXPECT_THROW(save_bvh_text(c, &short_layout), std::invalid_argument);
}

TEST(BvhExport, HierarchyIsWrittenDepthFirst) {
    // Index order root, a, b, a_child (not depth-first): written as root{a{a_child} b}.
    Clip c;
    c.skeleton.names = {"base", "a", "b", "a_child"};
    c.skeleton.parents = {-1, 0, 0, 1};
    c.skeleton.offsets = {{0, 1, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 0, 1}};
    c.resize(2);
    for (int f = 0; f < 2; ++f)
        for (int j = 0; j < 4; ++j) {
            c.pos(f, j) = c.skeleton.offsets[size_t(j)];
            c.rot(f, j) = quat_from_angle_axis(0.1f * float(j + f), {0, 0, 1});
        }
    const BvhFile back = parse_bvh(save_bvh_text(c), "dfs");
    EXPECT_EQ(back.clip.skeleton.names, (std::vector<std::string>{"base", "a", "a_child", "b"}));
    EXPECT_EQ(back.clip.skeleton.parents, (std::vector<int>{-1, 0, 1, 0}));
    for (int f = 0; f < 2; ++f) {
        EXPECT_LT(rotation_angle(back.clip.rot(f, 2), c.rot(f, 3)), 1e-6);
        EXPECT_LT(rotation_angle(back.clip.rot(f, 3), c.rot(f, 2)), 1e-6);
    }
}

TEST(BvhExport, WritesFilesAndNamesThePathOnFailure) {
    const Clip c = synthetic_clip("ZYX");
    const std::string bad = "/nonexistent-dir-ks/sub/out.bvh";
    try {
        save_bvh(bad, c);
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
    const std::string path = ks::test::scratch_path("bvh_export.bvh");
    save_bvh(path, c);
    const BvhFile back = load_bvh(path);
    EXPECT_EQ(back.clip.name, path);
    expect_within(compare_clips(c, back.clip), "file");
    std::filesystem::remove(path);
}

TEST(BvhExport, RefusesClipsTheImporterCouldNotReadBack) {
    const Clip good = synthetic_clip("ZYX");
    auto with = [&](auto edit) {
        Clip c = good;
        edit(c);
        return c;
    };
    EXPECT_THROW(save_bvh_text(with([](Clip& c) { c.resize(0); })), std::invalid_argument);
    EXPECT_THROW(save_bvh_text(with([](Clip& c) { c.frame_dt = 0; })), std::invalid_argument);
    EXPECT_THROW(save_bvh_text(with([](Clip& c) { c.skeleton.names[1] = "left End"; })), std::invalid_argument);
    // A joint may be called "Root" or "End" (some rigs are): that round-trips.
    const Clip named = with([](Clip& c) {
        c.skeleton.names[0] = "Root";
        c.skeleton.names[1] = "End";
    });
    const BvhFile back = parse_bvh(save_bvh_text(named), "named.bvh");
    EXPECT_EQ(back.clip.skeleton.names[0], "Root");
    EXPECT_EQ(back.clip.skeleton.names[1], "End");
    EXPECT_THROW(save_bvh_text(with([](Clip& c) { c.skeleton.names[1] = "my{joint"; })), std::invalid_argument);
    EXPECT_THROW(save_bvh_text(with([](Clip& c) { c.skeleton.names[1] = "two  spaces"; })), std::invalid_argument);
    EXPECT_THROW(save_bvh_text(with([](Clip& c) { c.skeleton.names[1] = ""; })), std::invalid_argument);
    EXPECT_THROW(save_bvh_text(with([](Clip& c) { c.skeleton.names[2] = "spine"; })), std::invalid_argument);
    EXPECT_THROW(save_bvh_text(with([](Clip& c) { c.pos(3, 1).x = NAN; })), std::invalid_argument);
    EXPECT_THROW(save_bvh_text(with([](Clip& c) { c.skeleton.parents[1] = 3; })), std::invalid_argument);
    // A name with single spaces reads back.
    const Clip spaced = with([](Clip& c) { c.skeleton.names[1] = "upper spine"; });
    EXPECT_EQ(parse_bvh(save_bvh_text(spaced), "s").clip.skeleton.names[1], "upper spine");
}

}  // namespace
}  // namespace ks
