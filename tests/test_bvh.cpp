// BVH importer: the seven shared CMU clips (four skeleton conventions), synthetic files with
// hand-computed rotations, text-format tolerance, the units rule, and error reporting.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <kinesync/offline/bvh.h>
#include "tests/support/mocap.h"

namespace ks {
namespace {

constexpr float kCmuUnit = 0.0254f / 0.45f;  // 0.05644 m

// Joins lines with `eol`, so line N of the text is lines[N-1] (error line numbers are then obvious).
std::string join(std::initializer_list<std::string_view> lines, std::string_view eol = "\n") {
    std::string s;
    for (std::string_view l : lines) {
        s += l;
        s += eol;
    }
    return s;
}

// q and -q are the same rotation.
::testing::AssertionResult same_rotation(quat a, quat b, float tol = 1e-5f) {
    const float d = std::fabs(quat_dot(a, b));
    if (std::fabs(d - 1.0f) <= tol && std::fabs(quat_length(a) - 1.0f) <= tol) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "(" << a.w << ", " << a.x << ", " << a.y << ", " << a.z << ") vs ("
                                         << b.w << ", " << b.x << ", " << b.y << ", " << b.z << "), |dot| = " << d;
}

::testing::AssertionResult near_vec(vec3 a, vec3 b, float tol = 1e-5f) {
    if (length(a - b) <= tol) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "(" << a.x << ", " << a.y << ", " << a.z << ") vs (" << b.x << ", " << b.y
                                         << ", " << b.z << ")";
}

// Static forward kinematics of one frame: global positions (joints first, then End Sites).
std::vector<vec3> fk_positions(const BvhFile& b, int f) {
    const Clip& c = b.clip;
    std::vector<vec3> gp(static_cast<size_t>(c.joints()));
    std::vector<quat> gr(static_cast<size_t>(c.joints()));
    for (int j = 0; j < c.joints(); ++j) {
        const int p = c.skeleton.parents[size_t(j)];
        if (p < 0) {
            gp[size_t(j)] = c.pos(f, j);
            gr[size_t(j)] = c.rot(f, j);
        } else {
            gp[size_t(j)] = gp[size_t(p)] + quat_mul_vec3(gr[size_t(p)], c.pos(f, j));
            gr[size_t(j)] = quat_mul(gr[size_t(p)], c.rot(f, j));
        }
    }
    std::vector<vec3> out = gp;
    for (size_t e = 0; e < b.end_sites.size(); ++e) {
        const int p = b.end_site_parents[e];
        out.push_back(gp[size_t(p)] + quat_mul_vec3(gr[size_t(p)], b.end_sites[e]));
    }
    return out;
}

float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5f * (v[m - 1] + v[m]);
}

// "ZXY" etc. from a joint's rotation channels, in listed order.
std::string rotation_order(const BvhChannels& c) {
    std::string s;
    for (const std::string& ch : c.channels)
        if (ch.size() == 9 && ch.substr(1) == "rotation") s += ch[0];
    return s;
}

// ---------------------------------------------------------------------------------------------
// The shared clips

struct ClipFacts {
    const char* file;
    int joints;
    int frames;
    float frame_dt;
    int channels;        // per frame
    int end_sites;
    float unit;          // expected detected metres per unit
    float pelvis_median; // README, file units
    float extent;        // README body vertical extent (joints + End Sites, median over frames)
};

const ClipFacts kClips[] = {
    {"cmu_02_01_walk.bvh", 31, 343, 0.008333f, 96, 7, kCmuUnit, 18.3f, 25.11f},
    {"cmu_35_24_run_jog.bvh", 31, 151, 0.0083333f, 96, 7, kCmuUnit, 17.62f, 25.82f},
    {"cmu_01_01_jumps_turn_around.bvh", 31, 2752, 0.0083333f, 96, 7, kCmuUnit, 17.88f, 26.13f},
    {"cmu_05_20_dance_leaps.bvh", 31, 1096, 0.0083333f, 96, 7, kCmuUnit, 16.58f, 24.75f},
    {"cmu_05_11_dance_pirouette_daz.bvh", 43, 592, 0.00833333f, 132, 14, 0.01f, 80.48f, 146.35f},
    {"cmu_94_01_indian_dance_maxskel.bvh", 31, 3602, 0.0083333f, 96, 7, kCmuUnit, 14.3f, 21.98f},
    {"cmu_06_10_dribble_left_turns_iclone.bvh", 100, 557, 0.016667f, 303, 41, 0.01f, 105.8f, 159.28f},
};

TEST(BvhRealClip, LoadsAllSevenWithReadmeCountsRatesAndUnits) {
    KS_REQUIRE_MOCAP();
    for (const ClipFacts& k : kClips) {
        SCOPED_TRACE(k.file);
        const std::string path = test::mocap_path(k.file);
        const BvhFile b = load_bvh(path);
        const Clip& c = b.clip;
        EXPECT_EQ(c.name, path);
        EXPECT_EQ(c.joints(), k.joints);
        EXPECT_EQ(c.frames, k.frames);
        EXPECT_EQ(b.frames_in_file, k.frames);
        EXPECT_FLOAT_EQ(c.frame_dt, k.frame_dt);
        EXPECT_EQ(b.end_sites.size(), size_t(k.end_sites));
        EXPECT_EQ(b.end_site_parents.size(), size_t(k.end_sites));
        EXPECT_EQ(c.skeleton.validate(), "");
        ASSERT_EQ(b.layout.size(), size_t(k.joints));
        int channels = 0;
        for (int j = 0; j < k.joints; ++j) {
            EXPECT_EQ(b.layout[size_t(j)].joint, c.skeleton.names[size_t(j)]);
            channels += int(b.layout[size_t(j)].channels.size());
        }
        EXPECT_EQ(channels, k.channels);
        EXPECT_NEAR(b.detected_metres_per_unit, k.unit, 1e-6f);
        EXPECT_NEAR(c.metres_per_unit, k.unit, 1e-6f);
        // Only the root has position channels and every file starts with one ROOT.
        EXPECT_EQ(c.skeleton.parents[0], -1);
        EXPECT_EQ(std::count(c.skeleton.parents.begin(), c.skeleton.parents.end(), -1), 1);

        ASSERT_EQ(c.pos_.size(), size_t(k.frames) * size_t(k.joints));
        for (size_t i = 0; i < c.pos_.size(); ++i) {
            ASSERT_TRUE(isfinite(c.pos_[i]) && isfinite(c.rot_[i])) << "sample " << i;
            ASSERT_NEAR(quat_length(c.rot_[i]), 1.0f, 1e-4f) << "sample " << i;
            ASSERT_EQ(c.scl_[i].x, 1.0f);
            ASSERT_EQ(c.scl_[i].y, 1.0f);
            ASSERT_EQ(c.scl_[i].z, 1.0f);
        }
        // Non-root joints without position channels sit at their OFFSET in every frame.
        for (int f = 0; f < k.frames; f += 97)
            for (int j = 1; j < k.joints; ++j) ASSERT_TRUE(near_vec(c.pos(f, j), c.skeleton.offsets[size_t(j)], 0.0f));

        // Median pelvis (root) height over all frames: the README's numbers.
        std::vector<float> pelvis, extent;
        for (int f = 0; f < c.frames; ++f) {
            const std::vector<vec3> g = fk_positions(b, f);
            pelvis.push_back(g[0].y);
            float lo = g[0].y, hi = g[0].y;
            for (const vec3& p : g) {
                lo = std::min(lo, p.y);
                hi = std::max(hi, p.y);
            }
            extent.push_back(hi - lo);
        }
        EXPECT_NEAR(median(pelvis), k.pelvis_median, k.unit > 0.02f ? 0.5f : 1.0f);
        // The body extent (joints + End Sites) depends on every joint's rotation order and on the
        // multiplication order of the channels: a reversed product moves these by 0.4 % to 25 %.
        EXPECT_NEAR(median(extent), k.extent, 0.004f * k.extent);
        // The detected unit makes a human-sized pelvis (0.75 .. 1.15 m).
        EXPECT_GT(median(pelvis) * b.detected_metres_per_unit, 0.75f);
        EXPECT_LT(median(pelvis) * b.detected_metres_per_unit, 1.15f);
    }
}

TEST(BvhRealClip, ChannelLayoutsOfTheFourConventions) {
    KS_REQUIRE_MOCAP();
    const std::vector<std::string> root6 = {"Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"};
    {  // MotionBuilder layout: ZYX everywhere.
        const BvhFile b = load_bvh(test::mocap_path("cmu_05_20_dance_leaps.bvh"));
        EXPECT_EQ(b.layout[0].joint, "Hips");
        EXPECT_EQ(b.layout[0].channels, root6);
        for (size_t j = 1; j < b.layout.size(); ++j) {
            EXPECT_EQ(b.layout[j].channels.size(), 3u) << b.layout[j].joint;
            EXPECT_EQ(rotation_order(b.layout[j]), "ZYX") << b.layout[j].joint;
        }
        EXPECT_GE(b.clip.skeleton.find("LHipJoint"), 1);
    }
    {  // Daz: root ZYX, all others ZXY.
        const BvhFile b = load_bvh(test::mocap_path("cmu_05_11_dance_pirouette_daz.bvh"));
        EXPECT_EQ(b.layout[0].joint, "hip");
        EXPECT_EQ(b.layout[0].channels, root6);
        for (size_t j = 1; j < b.layout.size(); ++j)
            EXPECT_EQ(rotation_order(b.layout[j]), "ZXY") << b.layout[j].joint;
        EXPECT_GE(b.clip.skeleton.find("rThigh"), 1);
    }
    {  // 3dsMax: ZYX legs/spine, ZXY arms, in one file.
        const BvhFile b = load_bvh(test::mocap_path("cmu_94_01_indian_dance_maxskel.bvh"));
        const int ls = b.clip.skeleton.find("LeftShoulder");
        const int lh = b.clip.skeleton.find("LeftHip");
        ASSERT_GE(ls, 1);
        ASSERT_GE(lh, 1);
        EXPECT_EQ(rotation_order(b.layout[size_t(ls)]), "ZXY");
        EXPECT_EQ(rotation_order(b.layout[size_t(lh)]), "ZYX");
        int zxy = 0, zyx = 0;
        for (size_t j = 1; j < b.layout.size(); ++j) {
            const std::string o = rotation_order(b.layout[j]);
            zxy += o == "ZXY";
            zyx += o == "ZYX";
        }
        EXPECT_EQ(zxy, 12);
        EXPECT_EQ(zyx, 18);
        EXPECT_EQ(rotation_order(b.layout[0]), "ZYX");
    }
    {  // CC rig: ZYX, 100 joints.
        const BvhFile b = load_bvh(test::mocap_path("cmu_06_10_dribble_left_turns_iclone.bvh"));
        EXPECT_EQ(b.layout[0].joint, "CC_Base_Hip");
        EXPECT_EQ(b.layout[0].channels, root6);
        for (size_t j = 1; j < b.layout.size(); ++j) EXPECT_EQ(rotation_order(b.layout[j]), "ZYX");
    }
}

// Reads the raw numbers of motion line `frame` with iostreams, independently of the importer.
std::vector<float> raw_motion_line(const std::string& path, int frame) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("Frame Time", 0) == 0) break;
    for (int f = 0; f <= frame; ++f) std::getline(in, line);
    std::istringstream ss(line);
    ss.imbue(std::locale::classic());
    std::vector<float> v;
    for (float x; ss >> x;) v.push_back(x);
    return v;
}

// Every joint's rotation equals quat_from_euler(its listed order, its listed angles), for the
// file with mixed orders and the file with ZYX root / ZXY body.
TEST(BvhRealClip, RotationsMatchPerJointEulerOrderFromRawValues) {
    KS_REQUIRE_MOCAP();
    for (const char* file : {"cmu_94_01_indian_dance_maxskel.bvh", "cmu_05_11_dance_pirouette_daz.bvh"}) {
        SCOPED_TRACE(file);
        const std::string path = test::mocap_path(file);
        const BvhFile b = load_bvh(path);
        for (int f : {0, 1, 100, 500}) {
            const std::vector<float> raw = raw_motion_line(path, f);
            size_t channels = 0;
            for (const BvhChannels& ch : b.layout) channels += ch.channels.size();
            ASSERT_EQ(raw.size(), channels);
            size_t col = 0;
            for (int j = 0; j < b.clip.joints(); ++j) {
                const BvhChannels& ch = b.layout[size_t(j)];
                char order[3];
                float angles[3];
                int n = 0;
                vec3 p = b.clip.skeleton.offsets[size_t(j)];
                for (const std::string& name : ch.channels) {
                    const float v = raw[col++];
                    if (name == "Xposition") p.x += v;
                    else if (name == "Yposition") p.y += v;
                    else if (name == "Zposition") p.z += v;
                    else {
                        ASSERT_LT(n, 3);
                        order[n] = name[0];
                        angles[n++] = v * kPi / 180.0f;
                    }
                }
                ASSERT_EQ(n, 3);
                EXPECT_TRUE(same_rotation(b.clip.rot(f, j), quat_from_euler(order, angles), 2e-5f))
                    << ch.joint << " frame " << f;
                EXPECT_TRUE(near_vec(b.clip.pos(f, j), p, 1e-4f)) << ch.joint << " frame " << f;
            }
            EXPECT_EQ(col, raw.size());
        }
    }
}

TEST(BvhRealClip, CcRigKeepsRootOffset) {
    KS_REQUIRE_MOCAP();
    const BvhFile b = load_bvh(test::mocap_path("cmu_06_10_dribble_left_turns_iclone.bvh"));
    const Clip& c = b.clip;
    EXPECT_NEAR(c.skeleton.offsets[0].y, 105.214226f, 1e-4f);
    // Frame 0's root channels are 0.145484 1.472229 0.333597: added to the OFFSET.
    EXPECT_TRUE(near_vec(c.pos(0, 0), vec3{0.145484f, 105.214226f + 1.472229f, 0.000021f + 0.333597f}, 1e-4f));
    for (int f = 0; f < c.frames; ++f) {
        ASSERT_GT(c.pos(f, 0).y, 96.0f) << "frame " << f;
        ASSERT_LT(c.pos(f, 0).y, 108.0f) << "frame " << f;
    }
}

TEST(BvhRealClip, DazRestFrameWithExponentNotation) {
    KS_REQUIRE_MOCAP();
    // Frame 0 of the Daz file is a rest frame: the root line is "15.3137 84.8855 152.037 0.0 0.0 0.0"
    // and the neck's three angles are "9.27476e-16 0.0 6.83322e-17".
    const BvhFile b = load_bvh(test::mocap_path("cmu_05_11_dance_pirouette_daz.bvh"));
    EXPECT_TRUE(near_vec(b.clip.pos(0, 0), vec3{15.3137f, 84.8855f, 152.037f}, 1e-4f));
    EXPECT_TRUE(same_rotation(b.clip.rot(0, 0), quat{}, 1e-7f));
    const int neck = b.clip.skeleton.find("neck");
    ASSERT_EQ(neck, 3);
    EXPECT_TRUE(same_rotation(b.clip.rot(0, neck), quat{}, 1e-7f));
    // The root turns by more than 90 degrees into frame 1 (Z 176.763, Y -59.1987, X -158.376).
    EXPECT_LT(std::fabs(b.clip.rot(1, 0).w), std::cos(kPi / 4));
}

TEST(BvhRealClip, SkipFramesDropsTheTPoseAndOverrideSetsUnits) {
    KS_REQUIRE_MOCAP();
    const std::string path = test::mocap_path("cmu_35_24_run_jog.bvh");
    const BvhFile full = load_bvh(path);
    BvhOptions o;
    o.skip_frames = 1;
    o.metres_per_unit = 0.05f;
    const BvhFile b = load_bvh(path, o);
    EXPECT_EQ(b.frames_in_file, 151);
    ASSERT_EQ(b.clip.frames, 150);
    EXPECT_FLOAT_EQ(b.clip.metres_per_unit, 0.05f);
    EXPECT_NEAR(b.detected_metres_per_unit, kCmuUnit, 1e-6f);
    for (int f = 0; f < b.clip.frames; f += 7)
        for (int j = 0; j < b.clip.joints(); ++j) {
            ASSERT_EQ(b.clip.pos(f, j).y, full.clip.pos(f + 1, j).y);
            ASSERT_EQ(b.clip.rot(f, j).w, full.clip.rot(f + 1, j).w);
            ASSERT_EQ(b.clip.rot(f, j).x, full.clip.rot(f + 1, j).x);
        }
}

TEST(BvhErrors, MissingFileNamesThePath) {
    const std::string path = test::mocap_dir() + "/no_such_clip_here.bvh";
    try {
        load_bvh(path);
        FAIL() << "no error";
    } catch (const BvhError& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
        EXPECT_EQ(e.line(), 0);
    }
}

// ---------------------------------------------------------------------------------------------
// Synthetic files

// Hips (root, ZXY after positions), Spine (ZYX), Head (positions interleaved with ZXY rotations,
// one End Site), Leg (no channels, one End Site).
const std::string kMixed = join({
    "HIERARCHY",
    "ROOT Hips",
    "{",
    "  OFFSET 1 2 3",
    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
    "  JOINT Spine",
    "  {",
    "    OFFSET 0 10 0",
    "    CHANNELS 3 Zrotation Yrotation Xrotation",
    "    JOINT Head",
    "    {",
    "      OFFSET 0 5 0",
    "      CHANNELS 6 Zrotation Xposition Yrotation Yposition Zposition Xrotation",
    "      End Site",
    "      {",
    "        OFFSET 0 3 0",
    "      }",
    "    }",
    "  }",
    "  JOINT Leg",
    "  {",
    "    OFFSET 2 -1 0",
    "    CHANNELS 0",
    "    End Site",
    "    {",
    "      OFFSET 0 -8 0",
    "    }",
    "  }",
    "}",
    "MOTION",
    "Frames: 3",
    "Frame Time: 0.04",
    // root pos | root Z X Y | spine Z Y X | head Z xp Y yp zp X
    "10 20 30  90 0 0   0 90 0    0 1 0 2 3 0",
    "0 0 0     90 90 0  0 0 30    90 -1 0 -2 -3 -90",
    "5 5 5     0 0 0    0 0 0     0 0 0 0 0 0",
});

constexpr float kH = 0.70710678f;  // cos 45 = sin 45

TEST(BvhSynthetic, MixedOrdersGiveHandComputedRotations) {
    const BvhFile b = parse_bvh(kMixed, "mixed.bvh");
    const Clip& c = b.clip;
    ASSERT_EQ(c.joints(), 4);
    ASSERT_EQ(c.frames, 3);
    EXPECT_EQ(c.name, "mixed.bvh");
    EXPECT_FLOAT_EQ(c.frame_dt, 0.04f);
    EXPECT_EQ(c.skeleton.names, (std::vector<std::string>{"Hips", "Spine", "Head", "Leg"}));
    EXPECT_EQ(c.skeleton.parents, (std::vector<int>{-1, 0, 1, 0}));
    EXPECT_TRUE(near_vec(c.skeleton.offsets[3], {2, -1, 0}, 0.0f));

    // Frame 0: root Rz(90); spine "Z Y X" = 0 90 0 -> Ry(90); head identity.
    EXPECT_TRUE(same_rotation(c.rot(0, 0), {kH, 0, 0, kH}));
    EXPECT_TRUE(same_rotation(c.rot(0, 1), {kH, 0, kH, 0}));
    EXPECT_TRUE(same_rotation(c.rot(0, 2), {1, 0, 0, 0}));
    // Frame 1: root "Z X Y" = 90 90 0 -> Rz(90) * Rx(90) = (1/2)(1, 1, 1, 1), which sends +Y to +Z
    // (Rx first takes Y to Z, then Rz keeps Z). The other order, Rx * Rz, would be (1/2)(1, 1, -1, 1).
    EXPECT_TRUE(same_rotation(c.rot(1, 0), {0.5f, 0.5f, 0.5f, 0.5f}));
    EXPECT_TRUE(near_vec(quat_mul_vec3(c.rot(1, 0), {0, 1, 0}), {0, 0, 1}));
    // Spine "Z Y X" = 0 0 30 -> Rx(30).
    EXPECT_TRUE(same_rotation(c.rot(1, 1), {std::cos(kPi / 12), std::sin(kPi / 12), 0, 0}));
    // Head "Z . Y . . X" = 90, 0, -90 -> Rz(90) * Rx(-90) = (1/2)(1, -1, -1, 1); sends +Y to -Z.
    EXPECT_TRUE(same_rotation(c.rot(1, 2), {0.5f, -0.5f, -0.5f, 0.5f}));
    EXPECT_TRUE(near_vec(quat_mul_vec3(c.rot(1, 2), {0, 1, 0}), {0, 0, -1}));
    // Frame 2: all zero angles.
    for (int j = 0; j < 4; ++j) EXPECT_TRUE(same_rotation(c.rot(2, j), {1, 0, 0, 0})) << j;
    // Leg has no channels: identity at its offset every frame.
    for (int f = 0; f < 3; ++f) {
        EXPECT_TRUE(same_rotation(c.rot(f, 3), {1, 0, 0, 0}));
        EXPECT_TRUE(near_vec(c.pos(f, 3), {2, -1, 0}, 0.0f));
    }
    // Scale is 1 everywhere.
    for (const vec3& s : c.scl_) EXPECT_TRUE(near_vec(s, {1, 1, 1}, 0.0f));
}

TEST(BvhSynthetic, PositionChannelsAddToOffsetOnRootAndNonRootJoints) {
    const BvhFile b = parse_bvh(kMixed, "mixed.bvh");
    const Clip& c = b.clip;
    // Root OFFSET (1, 2, 3) is kept and the channels are added to it.
    EXPECT_TRUE(near_vec(c.pos(0, 0), {11, 22, 33}));
    EXPECT_TRUE(near_vec(c.pos(1, 0), {1, 2, 3}));
    EXPECT_TRUE(near_vec(c.pos(2, 0), {6, 7, 8}));
    // Head: OFFSET (0, 5, 0) + its Xposition/Yposition/Zposition, read from between rotations.
    EXPECT_TRUE(near_vec(c.pos(0, 2), {1, 7, 3}));
    EXPECT_TRUE(near_vec(c.pos(1, 2), {-1, 3, -3}));
    EXPECT_TRUE(near_vec(c.pos(2, 2), {0, 5, 0}));
    // Spine has rotation channels only.
    for (int f = 0; f < 3; ++f) EXPECT_TRUE(near_vec(c.pos(f, 1), {0, 10, 0}, 0.0f));
    // Layout as listed in the file.
    ASSERT_EQ(b.layout.size(), 4u);
    EXPECT_EQ(b.layout[2].joint, "Head");
    EXPECT_EQ(b.layout[2].channels, (std::vector<std::string>{"Zrotation", "Xposition", "Yrotation", "Yposition",
                                                                "Zposition", "Xrotation"}));
    EXPECT_TRUE(b.layout[3].channels.empty());
}

TEST(BvhSynthetic, EndSitesAreRecordedButAreNotJoints) {
    const BvhFile b = parse_bvh(kMixed, "mixed.bvh");
    EXPECT_EQ(b.clip.joints(), 4);
    EXPECT_EQ(b.clip.skeleton.find("End Site"), -1);
    ASSERT_EQ(b.end_sites.size(), 2u);
    EXPECT_EQ(b.end_site_parents, (std::vector<int>{2, 3}));
    EXPECT_TRUE(near_vec(b.end_sites[0], {0, 3, 0}, 0.0f));
    EXPECT_TRUE(near_vec(b.end_sites[1], {0, -8, 0}, 0.0f));
    // FK of frame 0 through the End Site: root (11,22,33) Rz90; spine at +Rz90*(0,10,0) = (-10,0,0);
    // spine global Rz90*Ry90; head local (1,7,3); head End Site (0,3,0) under identity head rotation.
    const std::vector<vec3> g = fk_positions(b, 0);
    const quat spine = quat_mul(quat{kH, 0, 0, kH}, quat{kH, 0, kH, 0});
    EXPECT_TRUE(near_vec(g[1], {1, 22, 33}, 1e-4f));
    EXPECT_TRUE(near_vec(g[2], g[1] + quat_mul_vec3(spine, {1, 7, 3}), 1e-4f));
    EXPECT_TRUE(near_vec(g[4], g[2] + quat_mul_vec3(spine, {0, 3, 0}), 1e-4f));
}

TEST(BvhSynthetic, ToleratesCrlfTabsUnindentedLinesAndExponents) {
    // Same skeleton as a two-joint file written the awkward way: CRLF and LF mixed, a lone CR,
    // tabs, unindented lines, TAB after "Frames:" / "Frame Time:", exponents and a leading '+'.
    const std::string text =
        "HIERARCHY\r\nROOT\tHips\r\n{\n\tOFFSET\t0 0 0\r\n  CHANNELS 6 Xposition Yposition Zposition Zrotation "
        "Yrotation Xrotation \r\nJOINT Chest\r\n{\rOFFSET 0.0 1.5e+1 -0.0\n\t\tCHANNELS 3 Zrotation Xrotation "
        "Yrotation\r\n\t\tEnd Site\r\n\t\t{\r\n\t\t\tOFFSET 0 5 0\r\n\t\t}\r\n}\r\n}\nMOTION\nFrames:\t2\r\nFrame "
        "Time:\t8.333333e-03\r\n"
        "1.0E1\t+2\t-3e0\t9.0e+01\t0\t0\t9.27476e-16\t-0.0\t4.5E1\r\n"
        "\t0 0 0 0 0 0 0 0 0   \n"
        "\r\n";
    const BvhFile b = parse_bvh(text, "awkward.bvh");
    const Clip& c = b.clip;
    ASSERT_EQ(c.joints(), 2);
    ASSERT_EQ(c.frames, 2);
    EXPECT_EQ(c.skeleton.names[1], "Chest");
    EXPECT_NEAR(c.frame_dt, 1.0f / 120.0f, 1e-7f);
    EXPECT_TRUE(near_vec(c.skeleton.offsets[1], {0, 15, 0}, 0.0f));
    EXPECT_TRUE(near_vec(c.pos(0, 0), {10, 2, -3}));
    EXPECT_TRUE(same_rotation(c.rot(0, 0), {kH, 0, 0, kH}));
    EXPECT_TRUE(same_rotation(c.rot(0, 1), {std::cos(kPi / 8), 0, std::sin(kPi / 8), 0}));
    EXPECT_TRUE(same_rotation(c.rot(1, 1), {1, 0, 0, 0}));
    ASSERT_EQ(b.end_sites.size(), 1u);
    EXPECT_EQ(b.end_site_parents[0], 1);

    // Line numbers stay right across mixed endings: the bad value is on line 20 (CRLF, LF and the
    // lone CR after the Chest '{', which ends line 7, each count as one line end).
    std::string bad = text;
    bad.replace(bad.find("\t0 0 0 0 0 0 0 0 0"), 2, "\tx");
    try {
        parse_bvh(bad, "awkward.bvh");
        FAIL() << "no error";
    } catch (const BvhError& e) {
        EXPECT_EQ(e.line(), 20) << e.what();
        EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
    }
}

TEST(BvhSynthetic, SkipFramesDropsLeadingFrames) {
    BvhOptions o;
    o.skip_frames = 2;
    const BvhFile b = parse_bvh(kMixed, "mixed.bvh", o);
    EXPECT_EQ(b.frames_in_file, 3);
    ASSERT_EQ(b.clip.frames, 1);
    ASSERT_EQ(b.clip.pos_.size(), 4u);
    EXPECT_TRUE(near_vec(b.clip.pos(0, 0), {6, 7, 8}));  // the file's frame 2
    EXPECT_TRUE(same_rotation(b.clip.rot(0, 0), {1, 0, 0, 0}));

    o.skip_frames = 1;
    const BvhFile b1 = parse_bvh(kMixed, "mixed.bvh", o);
    ASSERT_EQ(b1.clip.frames, 2);
    EXPECT_TRUE(same_rotation(b1.clip.rot(0, 0), {0.5f, 0.5f, 0.5f, 0.5f}));  // the file's frame 1
}

TEST(BvhSynthetic, MetresPerUnitOverrideAndDetection) {
    // Detection runs whether or not it is overridden, and the clip gets the override.
    const BvhFile d = parse_bvh(kMixed, "mixed.bvh");
    EXPECT_FLOAT_EQ(d.clip.metres_per_unit, d.detected_metres_per_unit);
    EXPECT_FLOAT_EQ(d.detected_metres_per_unit, detect_metres_per_unit(d.clip));
    BvhOptions o;
    o.metres_per_unit = 0.01f;
    const BvhFile b = parse_bvh(kMixed, "mixed.bvh", o);
    EXPECT_FLOAT_EQ(b.clip.metres_per_unit, 0.01f);
    EXPECT_FLOAT_EQ(b.detected_metres_per_unit, d.detected_metres_per_unit);
}

// ---------------------------------------------------------------------------------------------
// The units rule

// A two-joint clip: root at the origin and a child `height` above it; `tipped` frames have the
// root rotated 90 degrees about Z so the body lies flat (zero vertical extent).
Clip column_clip(float height, int frames, int tipped = 0) {
    Clip c;
    c.skeleton.names = {"root", "top"};
    c.skeleton.parents = {-1, 0};
    c.skeleton.offsets = {{0, 0, 0}, {0, height, 0}};
    c.resize(frames);
    for (int f = 0; f < frames; ++f) {
        c.pos(f, 1) = {0, height, 0};
        if (f < tipped) c.rot(f, 0) = quat_from_angle_axis(kPi / 2, {0, 0, 1});
    }
    return c;
}

TEST(BvhUnits, PicksTheUnitClosestToAHumanHeight) {
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(1.7f, 4)), 1.0f);
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(25.0f, 4)), kCmuUnit);
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(22.0f, 4)), kCmuUnit);
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(65.0f, 4)), 0.0254f);
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(146.0f, 4)), 0.01f);
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(159.0f, 4)), 0.01f);
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(1700.0f, 4)), 0.001f);
    // Boundaries in log distance: between CMU units and inches the split is sqrt(28.35 * 63.0) ~ 42.3.
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(41.0f, 2)), kCmuUnit);
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(44.0f, 2)), 0.0254f);
}

TEST(BvhUnits, UsesTheMedianOverFramesAndFollowsRotations) {
    // 40 frames, 16 sampled; the first 7 frames (<= 3 samples) lie flat: the median ignores them.
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(170.0f, 40, 7)), 0.01f);
    // All frames flat: the extent is ~0, which no unit makes human-sized; the answer is metres.
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(170.0f, 5, 5)), 1.0f);
    // Mostly flat (FK applies the root rotation to the child): still no extent in the median.
    EXPECT_FLOAT_EQ(detect_metres_per_unit(column_clip(170.0f, 40, 30)), 1.0f);
    // Empty clip.
    EXPECT_FLOAT_EQ(detect_metres_per_unit(Clip{}), 1.0f);
}

// ---------------------------------------------------------------------------------------------
// Errors: each names the file, the line and what was expected.

std::optional<BvhError> error_of(const std::string& text, const BvhOptions& o = {}) {
    try {
        parse_bvh(text, "bad.bvh", o);
    } catch (const BvhError& e) {
        return e;
    }
    return std::nullopt;
}

void expect_error(const std::string& text, int line, const std::string& fragment, const BvhOptions& o = {}) {
    const std::optional<BvhError> e = error_of(text, o);
    ASSERT_TRUE(e.has_value()) << "parsed without error";
    const std::string what = e->what();
    EXPECT_EQ(e->line(), line) << what;
    EXPECT_EQ(e->file(), "bad.bvh");
    EXPECT_EQ(what.rfind(std::string("bad.bvh:") + std::to_string(line) + ": ", 0), 0u) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
}

// A well-formed two-joint file whose lines are easy to replace: line 5 = root CHANNELS,
// 9 = Spine CHANNELS, 13 = Frames:, 15.. = motion.
std::vector<std::string> good_lines() {
    return {
        "HIERARCHY",                                                               // 1
        "ROOT Hips",                                                               // 2
        "{",                                                                       // 3
        "  OFFSET 0 0 0",                                                          // 4
        "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation", // 5
        "  JOINT Spine",                                                           // 6
        "  {",                                                                     // 7
        "    OFFSET 0 1 0",                                                        // 8
        "    CHANNELS 3 Zrotation Xrotation Yrotation",                            // 9
        "  }",                                                                     // 10
        "}",                                                                       // 11
        "MOTION",                                                                  // 12
        "Frames: 2",                                                               // 13
        "Frame Time: 0.0333333",                                                   // 14
        "0 1 2 3 4 5 6 7 8",                                                       // 15
        "0 1 2 3 4 5 6 7 8",                                                       // 16
    };
}

std::string text_of(const std::vector<std::string>& lines) {
    std::string s;
    for (const std::string& l : lines) s += l + "\n";
    return s;
}

TEST(BvhErrors, GoodBaseFileParses) {
    const BvhFile b = parse_bvh(text_of(good_lines()), "bad.bvh");
    EXPECT_EQ(b.clip.joints(), 2);
    EXPECT_EQ(b.clip.frames, 2);
}

TEST(BvhErrors, MissingOpeningBrace) {
    auto l = good_lines();
    l.erase(l.begin() + 6);  // drop the Spine '{'
    expect_error(text_of(l), 7, "expected '{' after JOINT name, got 'OFFSET'");
}

TEST(BvhErrors, UnknownChannelName) {
    auto l = good_lines();
    l[8] = "    CHANNELS 3 Zrotation Xrotaton Yrotation";
    expect_error(text_of(l), 9, "unknown channel name 'Xrotaton'");
}

TEST(BvhErrors, WrongChannelCount) {
    auto l = good_lines();
    l[8] = "    CHANNELS 3 Zrotation Xrotation";
    expect_error(text_of(l), 9, "declares 3 channels but lists 2");
    l[8] = "    CHANNELS 2 Zrotation Xrotation Yrotation";
    expect_error(text_of(l), 9, "declares 2 channels but lists more");
    l[8] = "    CHANNELS three Zrotation Xrotation Yrotation";
    expect_error(text_of(l), 9, "expected the channel count");
}

TEST(BvhErrors, FramesCountLargerThanLinesPresent) {
    auto l = good_lines();
    l[12] = "Frames: 3";
    expect_error(text_of(l), 16, "ends after 2 motion lines but 'Frames:' (line 13) says 3");
}

TEST(BvhErrors, MoreMotionLinesThanFrames) {
    auto l = good_lines();
    l.push_back("");  // blank lines are fine...
    l.push_back("0 1 2 3 4 5 6 7 8");  // ...but a third frame is not
    expect_error(text_of(l), 18, "'Frames:' (line 13) says 2 but more motion lines follow");
}

TEST(BvhErrors, WrongValueCountOnAMotionLine) {
    auto l = good_lines();
    l[15] = "0 1 2 3 4 5 6 7";
    expect_error(text_of(l), 16, "motion line for frame 1 has 8 values, expected 9");
    l[15] = "0 1 2 3 4 5 6 7 8 9";
    expect_error(text_of(l), 16, "more than the 9 values");
}

TEST(BvhErrors, NonNumericAndNonFiniteValues) {
    auto l = good_lines();
    l[14] = "0 1 abc 3 4 5 6 7 8";
    expect_error(text_of(l), 15, "expected a number in the motion line for frame 0, got 'abc'");
    l[14] = "0 1 2 3 4 5 6 +-7 8";
    expect_error(text_of(l), 15, "got '+-7'");
    l[14] = "0 1 2 3 4 5 6 7 1.5.2";
    expect_error(text_of(l), 15, "got '1.5.2'");
    l[14] = "0 1 2 3 nan 5 6 7 8";
    expect_error(text_of(l), 15, "'nan' in the motion line for frame 0 is not a finite number");
    l[14] = "0 1 2 3 4 5 6 7 1e39";  // beyond float range
    expect_error(text_of(l), 15, "not a finite number");
    l = good_lines();
    l[7] = "    OFFSET 0 abc 0";
    expect_error(text_of(l), 8, "expected a number for OFFSET of joint 'Spine', got 'abc'");
    l = good_lines();
    l[13] = "Frame Time: 0";
    expect_error(text_of(l), 14, "expected a positive frame time");
}

TEST(BvhErrors, TruncatedFile) {
    auto l = good_lines();
    l.resize(9);  // ends after the Spine CHANNELS line
    expect_error(text_of(l), 9, "unexpected end of file: joint 'Spine' (line 6) is missing its closing '}'");
    l = good_lines();
    l.resize(12);  // ends at MOTION
    expect_error(text_of(l), 12, "expected 'Frames:' after MOTION, got end of file");
    l = good_lines();
    l[15] = "0 1 2 3";  // last line cut short
    expect_error(text_of(l), 16, "has 4 values, expected 9");
}

TEST(BvhErrors, EmptyFile) {
    expect_error("", 1, "expected 'HIERARCHY' at the start of the file, got end of file");
    expect_error("\r\n\n  \t\n", 1, "got end of file");
    expect_error("HIERARCHY\nMOTION\n", 2, "the file defines no joints");
}

TEST(BvhErrors, UnbalancedBraces) {
    auto l = good_lines();
    l.insert(l.begin() + 11, "}");  // one '}' too many before MOTION
    expect_error(text_of(l), 12, "unbalanced '}'");
    l = good_lines();
    l.erase(l.begin() + 9);  // Spine's '}' missing: the root's '}' closes Spine, then MOTION inside Hips
    expect_error(text_of(l), 11, "in joint 'Hips', got 'MOTION'");
}

TEST(BvhErrors, SkipFramesLeavingNoFrames) {
    BvhOptions o;
    o.skip_frames = 2;
    expect_error(text_of(good_lines()), 13, "skip_frames=2 leaves no frames", o);
    o.skip_frames = -1;
    const std::optional<BvhError> e = error_of(text_of(good_lines()), o);
    ASSERT_TRUE(e.has_value());
    EXPECT_NE(std::string(e->what()).find("bad.bvh: "), std::string::npos) << e->what();
    EXPECT_NE(std::string(e->what()).find("skip_frames"), std::string::npos) << e->what();
}

TEST(BvhErrors, DuplicateJointNameAndMissingOffset) {
    auto l = good_lines();
    l[5] = "  JOINT Hips";
    expect_error(text_of(l), 6, "duplicate joint name 'Hips' (first defined on line 2)");
    l = good_lines();
    l.erase(l.begin() + 7);  // Spine OFFSET
    expect_error(text_of(l), 9, "joint 'Spine' (line 6) has no OFFSET");
}

TEST(BvhErrors, EveryTruncationOfAFileFailsCleanly) {
    // Cut the synthetic file at every byte: each prefix throws BvhError naming a line inside the
    // text, except the cut that only drops the final '\n' (its last value is a one-digit "0").
    const int lines = int(std::count(kMixed.begin(), kMixed.end(), '\n'));
    int parsed = 0;
    for (size_t n = 0; n < kMixed.size(); ++n) {
        try {
            parse_bvh(std::string_view(kMixed).substr(0, n), "cut.bvh");
            ++parsed;
        } catch (const BvhError& e) {
            ASSERT_GE(e.line(), 1) << n << ": " << e.what();
            ASSERT_LE(e.line(), lines) << n << ": " << e.what();
            ASSERT_EQ(std::string(e.what()).rfind(std::string("cut.bvh:") + std::to_string(e.line()) + ": ", 0), 0u) << e.what();
        }
    }
    EXPECT_EQ(parsed, 1);
}

}  // namespace
}  // namespace ks
