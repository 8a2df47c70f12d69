// kinesync-tool info (describe_clip) and filmstrip (render_filmstrip_svg): travel, rates and units
// of the shared clips against their README, layout summaries, JSON output, and well-formed SVG
// filmstrips with the right number of figures in both views, placed by travel or side by side.

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <kinesync/offline/bvh.h>
#include <kinesync/offline/bvh_export.h>
#include <kinesync/offline/clip_info.h>
#include <kinesync/offline/filmstrip.h>
#include "tests/support/clips.h"
#include "tests/support/mocap.h"
#include "tests/support/xml_check.h"

namespace ks {
namespace {

constexpr double kCmuUnit = 0.0254 / 0.45;

size_t count(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t k = s.find(what); k != std::string::npos; k = s.find(what, k + 1)) ++n;
    return n;
}

// A minimal JSON syntax check (objects, arrays, strings with escapes, numbers, literals).
class JsonCheck {
public:
    explicit JsonCheck(const std::string& s) : s_(s) {}
    bool ok() {
        ws();
        if (!value()) return false;
        ws();
        return i_ == s_.size();
    }

private:
    void ws() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    bool lit(const char* w) {
        const size_t n = std::char_traits<char>::length(w);
        if (s_.compare(i_, n, w) != 0) return false;
        i_ += n;
        return true;
    }
    bool str() {
        if (i_ >= s_.size() || s_[i_] != '"') return false;
        for (++i_; i_ < s_.size(); ++i_) {
            if (s_[i_] == '\\') {
                ++i_;
                continue;
            }
            if (static_cast<unsigned char>(s_[i_]) < 0x20) return false;
            if (s_[i_] == '"') {
                ++i_;
                return true;
            }
        }
        return false;
    }
    bool number() {
        const char* b = s_.c_str() + i_;
        char* e = nullptr;
        std::strtod(b, &e);
        if (e == b) return false;
        i_ += size_t(e - b);
        return true;
    }
    bool value() {
        if (i_ >= s_.size()) return false;
        const char c = s_[i_];
        if (c == '{' || c == '[') {
            const char close = c == '{' ? '}' : ']';
            ++i_;
            ws();
            if (i_ < s_.size() && s_[i_] == close) return ++i_, true;
            for (;;) {
                ws();
                if (c == '{') {
                    if (!str()) return false;
                    ws();
                    if (i_ >= s_.size() || s_[i_++] != ':') return false;
                    ws();
                }
                if (!value()) return false;
                ws();
                if (i_ >= s_.size()) return false;
                if (s_[i_] == ',') {
                    ++i_;
                    continue;
                }
                if (s_[i_] == close) return ++i_, true;
                return false;
            }
        }
        if (c == '"') return str();
        if (lit("true") || lit("false") || lit("null")) return true;
        return number();
    }
    const std::string& s_;
    size_t i_ = 0;
};

// ---------------------------------------------------------------------------------------------
// info

TEST(ToolInfo, WalkAndRunTravelAndRatesMatchTheReadme) {
    KS_REQUIRE_MOCAP();
    const ClipInfo walk = describe_clip(load_bvh(test::mocap_path("cmu_02_01_walk.bvh")));
    std::printf("[ info ] walk: path %.3f m, displacement %.3f m, %.3f fps\n", walk.path_length_m, walk.displacement_m,
                walk.frame_rate);
    EXPECT_NEAR(walk.displacement_m, 3.6, 0.1) << "README: ~3.6 m of travel";
    EXPECT_GE(walk.path_length_m, walk.displacement_m);
    EXPECT_LT(walk.path_length_m, walk.displacement_m * 1.05) << "a straight walk";
    EXPECT_NEAR(walk.frame_rate, 120.0, 0.01);
    EXPECT_EQ(walk.frames, 343);
    EXPECT_EQ(walk.skipped_frames, 0);
    EXPECT_NEAR(walk.duration, 342 * 0.008333, 1e-4);
    EXPECT_NEAR(walk.root_height_median, 18.3, 0.05) << "README pelvis height, file units";
    EXPECT_NEAR(walk.root_height_min, 17.54, 0.01);
    EXPECT_NEAR(walk.root_height_max, 18.92, 0.01);
    EXPECT_NEAR(walk.root_height_median_m, 18.3 * kCmuUnit, 0.005);
    EXPECT_EQ(walk.units_name, "CMU units (1/0.45 in)");
    EXPECT_FALSE(walk.units_overridden);
    EXPECT_NEAR(std::fabs(walk.heading_z), 1.0, 0.01) << "the walk goes along Z";
    EXPECT_NEAR(walk.average_speed_mps, walk.displacement_m / walk.duration, 1e-9);

    BvhOptions skip1;
    skip1.skip_frames = 1;  // the T-pose frame
    const ClipInfo run = describe_clip(load_bvh(test::mocap_path("cmu_35_24_run_jog.bvh"), skip1));
    std::printf("[ info ] run (skip 1): path %.3f m, displacement %.3f m, %.2f m/s\n", run.path_length_m, run.displacement_m,
                run.average_speed_mps);
    EXPECT_NEAR(run.displacement_m, 4.4, 0.1) << "README: ~4.4 m of travel";
    EXPECT_NEAR(run.average_speed_mps, 3.5, 0.1) << "README: ~3.5 m/s";
    EXPECT_NEAR(run.frame_rate, 120.0, 0.01);
    EXPECT_EQ(run.frames, 150);
    EXPECT_EQ(run.frames_in_file, 151);
    EXPECT_EQ(run.skipped_frames, 1);

    // The one 60 fps clip, in centimetres.
    const ClipInfo cc = describe_clip(load_bvh(test::mocap_path("cmu_06_10_dribble_left_turns_iclone.bvh")));
    EXPECT_NEAR(cc.frame_rate, 60.0, 0.01);
    EXPECT_EQ(cc.units_name, "centimetres");
    EXPECT_EQ(cc.root_name, "CC_Base_Hip");
    EXPECT_NEAR(cc.root_height_median, 105.8, 0.1) << "README: OFFSET + channel";
    EXPECT_GT(cc.path_length_m, cc.displacement_m * 1.1) << "walks with turns";
}

TEST(ToolInfo, EveryClipHasItsReadmeRateAndUnits) {
    KS_REQUIRE_MOCAP();
    for (const auto& c : test::shared_clip_infos()) {
        SCOPED_TRACE(c.file);
        const ClipInfo info = describe_clip(load_bvh(test::mocap_path(c.file)));
        EXPECT_EQ(int(info.joint_names.size()), c.joints);
        EXPECT_EQ(info.frames, c.frames);
        const bool cc = std::string(c.file).find("iclone") != std::string::npos;
        EXPECT_NEAR(info.frame_rate, cc ? 60.0 : 120.0, 0.01);
        const bool cm = cc || std::string(c.file).find("daz") != std::string::npos;
        EXPECT_EQ(info.units_name, cm ? "centimetres" : "CMU units (1/0.45 in)");
        EXPECT_EQ(info.position_channel_joints, std::vector<std::string>{info.joint_names[0]}) << "root only";
        EXPECT_GT(info.figure_height_m, 1.0);
        EXPECT_LT(info.figure_height_m, 2.0);
        const std::string json = format_clip_info_json(info);
        EXPECT_TRUE(JsonCheck(json).ok()) << json.substr(0, 400);
    }
}

TEST(ToolInfo, LayoutSummaryNamesMixedOrders) {
    KS_REQUIRE_MOCAP();
    const ClipInfo max = describe_clip(load_bvh(test::mocap_path("cmu_94_01_indian_dance_maxskel.bvh")));
    ASSERT_EQ(max.rotation_orders.size(), 2u);
    EXPECT_EQ(max.rotation_orders[0].first, "ZYX");
    EXPECT_EQ(max.rotation_orders[0].second.size(), 19u);
    EXPECT_EQ(max.rotation_orders[1].first, "ZXY");
    EXPECT_EQ(max.rotation_orders[1].second.size(), 12u);
    EXPECT_EQ(max.rotation_orders[1].second[0], "LeftShoulder");
    const std::string text = format_clip_info_text(max);
    EXPECT_NE(text.find("ZYX 19 joints; ZXY 12 joints (LeftShoulder, LeftElbow"), std::string::npos) << text;
    EXPECT_NE(text.find("120.00 fps"), std::string::npos);
    EXPECT_NE(text.find("CMU units (1/0.45 in) (detected)"), std::string::npos);

    const ClipInfo daz = describe_clip(load_bvh(test::mocap_path("cmu_05_11_dance_pirouette_daz.bvh")));
    ASSERT_EQ(daz.rotation_orders.size(), 2u);
    EXPECT_EQ(daz.rotation_orders[0].first, "ZYX");
    EXPECT_EQ(daz.rotation_orders[0].second, std::vector<std::string>{"hip"});
    EXPECT_EQ(daz.rotation_orders[1].first, "ZXY");
    EXPECT_EQ(daz.rotation_orders[1].second.size(), 42u);
    EXPECT_EQ(daz.end_sites, 14);
}

TEST(ToolInfo, UnitsOverrideScalesEveryMetricFigure) {
    KS_REQUIRE_MOCAP();
    BvhOptions cm;
    cm.metres_per_unit = 0.01f;
    const ClipInfo detected = describe_clip(load_bvh(test::mocap_path("cmu_02_01_walk.bvh")));
    const ClipInfo given = describe_clip(load_bvh(test::mocap_path("cmu_02_01_walk.bvh"), cm));
    EXPECT_TRUE(given.units_overridden);
    EXPECT_EQ(given.units_name, "centimetres");
    EXPECT_EQ(given.detected_units_name, "CMU units (1/0.45 in)");
    const double ratio = 0.01 / double(float(kCmuUnit));
    EXPECT_NEAR(given.displacement_m, detected.displacement_m * ratio, 1e-6);
    EXPECT_NEAR(given.path_length_m, detected.path_length_m * ratio, 1e-6);
    EXPECT_NEAR(given.root_height_median_m, detected.root_height_median_m * ratio, 1e-6);
    EXPECT_EQ(given.root_height_median, detected.root_height_median) << "file units do not change";
    EXPECT_NE(format_clip_info_text(given).find("(given; the units rule detects 0.0564444, CMU units (1/0.45 in))"),
              std::string::npos);
    EXPECT_EQ(units_rule_name(0.3), "custom (0.3 m/unit)");
    EXPECT_EQ(units_rule_name(1.0), "metres");
    EXPECT_EQ(units_rule_name(0.0254), "inches");
    EXPECT_EQ(units_rule_name(0.001), "millimetres");
}

// A 1.5 m three-joint figure in metres whose root walks 3 m along +X, then 4 m along +Z.
Clip l_shaped_walk() {
    Clip c;
    c.name = "synthetic \"L\" walk";
    c.skeleton.names = {"Hips", "Spine", "LeftLeg"};
    c.skeleton.parents = {-1, 0, 0};
    c.skeleton.offsets = {{0, 0, 0}, {0, 0.6f, 0}, {0.1f, -0.9f, 0}};
    c.frame_dt = 1.0f / 30.0f;
    c.metres_per_unit = 1.0f;
    c.resize(71);
    for (int f = 0; f < c.frames; ++f) {
        const float d = 0.1f * float(f);  // 7 m in 70 frames
        c.pos(f, 0) = d <= 3.0f ? vec3{d, 0.95f, 0} : vec3{3.0f, 0.95f, d - 3.0f};
        c.pos(f, 1) = c.skeleton.offsets[1];
        c.pos(f, 2) = c.skeleton.offsets[2];
    }
    return c;
}

TEST(ToolInfo, SyntheticTravelIsExact) {
    const BvhFile b = parse_bvh(save_bvh_text(l_shaped_walk()), "L.bvh");
    const ClipInfo info = describe_clip(b);
    EXPECT_EQ(info.units_name, "metres");
    EXPECT_NEAR(info.path_length_m, 7.0, 1e-4);
    EXPECT_NEAR(info.displacement_m, 5.0, 1e-4);
    EXPECT_NEAR(info.heading_x, 0.6, 1e-5);
    EXPECT_NEAR(info.heading_z, 0.8, 1e-5);
    EXPECT_NEAR(info.frame_rate, 30.0, 1e-3);
    EXPECT_NEAR(info.duration, 70.0 / 30.0, 1e-4);
    EXPECT_NEAR(info.root_height_median_m, 0.95, 1e-6);
    EXPECT_NEAR(info.figure_height_m, 1.5, 1e-5);
    EXPECT_EQ(info.parents, (std::vector<int>{-1, 0, 0}));
    const std::string text = format_clip_info_text(info);
    EXPECT_NE(text.find("root horizontal path 7.000 m, straight line 5.000 m toward (x, z) = (0.60, 0.80)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("<- Hips"), std::string::npos);
    const std::string json = format_clip_info_json(info);
    EXPECT_TRUE(JsonCheck(json).ok()) << json;
    EXPECT_NE(json.find("\"travel_path_m\": 7"), std::string::npos) << json;
    // Names are escaped in JSON.
    ClipInfo odd = info;
    odd.name = "a \"quoted\"\\name\n";
    EXPECT_TRUE(JsonCheck(format_clip_info_json(odd)).ok());
    EXPECT_FALSE(JsonCheck("{\"a\": 1,}").ok()) << "the checker itself rejects bad JSON";
}

// ---------------------------------------------------------------------------------------------
// filmstrip

// x of every frame label (the "f N" texts), in order.
std::vector<double> label_xs(const std::string& svg) {
    std::vector<double> xs;
    const size_t g = svg.find("<g class=\"labels\"");
    for (size_t k = svg.find("<text x=\"", g); k != std::string::npos && k < svg.find("</g>", g);
         k = svg.find("<text x=\"", k + 1)) {
        const size_t close = svg.find('>', k);
        if (svg.compare(close + 1, 2, "f ") != 0) continue;
        xs.push_back(std::strtod(svg.c_str() + k + 9, nullptr));
    }
    return xs;
}

double scale_px_per_m(const std::string& svg) {
    const size_t k = svg.find("1 m (");
    return k == std::string::npos ? 0 : std::strtod(svg.c_str() + k + 5, nullptr);
}

void expect_filmstrip(const std::string& svg, size_t figures) {
    EXPECT_EQ(test::xml_check(svg), "");
    EXPECT_EQ(count(svg, "<g class=\"figure\""), 2 * figures) << "each figure in both views";
    EXPECT_EQ(count(svg, "<g class=\"figure\" data-view=\"side\""), figures);
    EXPECT_EQ(count(svg, "<g class=\"figure\" data-view=\"top\""), figures);
    EXPECT_EQ(count(svg, "id=\"side-view\""), 1u);
    EXPECT_EQ(count(svg, "id=\"top-view\""), 1u);
    EXPECT_EQ(count(svg, "class=\"scale-bar\""), 1u);
    EXPECT_GT(scale_px_per_m(svg), 10.0);
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    EXPECT_EQ(svg.find("inf"), std::string::npos);
}

TEST(Filmstrip, EverySharedClipGivesAWellFormedTwoViewStrip) {
    KS_REQUIRE_MOCAP();
    for (const auto& c : test::shared_clip_infos()) {
        SCOPED_TRACE(c.file);
        const BvhFile b = load_bvh(test::mocap_path(c.file));
        FilmstripOptions o;
        o.end_sites = &b.end_sites;
        o.end_site_parents = &b.end_site_parents;
        const std::vector<int> frames = filmstrip_frames(b.clip.frames, o);
        EXPECT_GE(frames.size(), 8u);
        EXPECT_LE(frames.size(), 10u) << "about ten figures by default";
        const std::string svg = render_filmstrip_svg(b.clip, o);
        expect_filmstrip(svg, frames.size());
        EXPECT_NE(svg.find(std::string("data-frame=\"") + std::to_string(frames.back()) + "\""), std::string::npos);
        EXPECT_EQ(label_xs(svg).size(), frames.size()) << "a frame label under each figure";
        EXPECT_NE(svg.find("0.00 s"), std::string::npos);
    }
}

TEST(Filmstrip, TravellingClipsFollowTheRootOthersSitSideBySide) {
    KS_REQUIRE_MOCAP();
    // The walk travels 3.6 m straight: the figures sit where the root is, the label spacing is the
    // root's travel at the strip's scale.
    const Clip& walk = test::shared_clip("cmu_02_01_walk.bvh");
    const std::string w = render_filmstrip_svg(walk, {});
    EXPECT_NE(w.find("placed along the root's real travel"), std::string::npos);
    EXPECT_EQ(count(w, "class=\"root-path\""), 2u);
    const std::vector<double> xs = label_xs(w);
    const std::vector<int> frames = filmstrip_frames(walk.frames, {});
    ASSERT_EQ(xs.size(), frames.size());
    const double s = scale_px_per_m(w);
    const vec3 a = walk.pos(0, 0), b = walk.pos(walk.frames - 1, 0), c = walk.pos(frames.back(), 0);
    const double ux = b.x - a.x, uz = b.z - a.z, un = std::hypot(ux, uz);
    const double along = ((c.x - a.x) * ux + (c.z - a.z) * uz) / un * walk.metres_per_unit;
    EXPECT_NEAR((xs.back() - xs.front()) / s, along, 0.01);
    for (size_t k = 1; k < xs.size(); ++k) EXPECT_GT(xs[k], xs[k - 1]) << "left to right";

    // The jumps go forward, turn around and come back: side by side, evenly spaced.
    const Clip& jumps = test::shared_clip("cmu_01_01_jumps_turn_around.bvh");
    const std::string j = render_filmstrip_svg(jumps, {});
    EXPECT_NE(j.find("side by side"), std::string::npos);
    EXPECT_EQ(count(j, "class=\"root-path\""), 0u);
    const std::vector<double> jx = label_xs(j);
    ASSERT_GE(jx.size(), 3u);
    for (size_t k = 2; k < jx.size(); ++k) EXPECT_NEAR(jx[k] - jx[k - 1], jx[1] - jx[0], 0.2);
}

TEST(Filmstrip, FrameSelection) {
    FilmstripOptions o;
    EXPECT_EQ(filmstrip_frames(343, o).size(), 10u);
    EXPECT_EQ(filmstrip_frames(343, o)[1], 35);
    EXPECT_EQ(filmstrip_frames(5, o), (std::vector<int>{0, 1, 2, 3, 4}));
    o.every = 50;
    EXPECT_EQ(filmstrip_frames(343, o), (std::vector<int>{0, 50, 100, 150, 200, 250, 300}));
    o.every = 0;
    o.frames = 4;
    EXPECT_EQ(filmstrip_frames(343, o), (std::vector<int>{0, 114, 228, 342}));
    o.frames = 1;
    EXPECT_EQ(filmstrip_frames(343, o), (std::vector<int>{0}));
    o.frames = 100;
    EXPECT_EQ(filmstrip_frames(7, o).size(), 7u) << "never more figures than frames";
    o.every = 3;
    EXPECT_THROW(filmstrip_frames(343, o), std::invalid_argument) << "every and frames together";
    FilmstripOptions neg;
    neg.every = -1;
    EXPECT_THROW(filmstrip_frames(343, neg), std::invalid_argument);
    EXPECT_THROW(filmstrip_frames(0, {}), std::invalid_argument);
}

TEST(Filmstrip, SyntheticClipsRenderWithTheRequestedFigures) {
    // The L walk: 5 m from start to end of a 7 m path, every drawn figure further along: travelling.
    const Clip l = l_shaped_walk();
    FilmstripOptions o;
    o.frames = 6;
    o.frame_number_offset = 1;
    const std::string svg = render_filmstrip_svg(l, o);
    expect_filmstrip(svg, 6);
    EXPECT_NE(svg.find("placed along the root's real travel (5.00 m)"), std::string::npos);
    EXPECT_NE(svg.find("data-frame=\"71\""), std::string::npos) << "last frame 70, numbered from 1";
    EXPECT_NE(svg.find(">f 1<"), std::string::npos);
    EXPECT_NE(svg.find("synthetic &quot;L&quot; walk"), std::string::npos) << "title escaped";
    EXPECT_NE(svg.find("stroke-opacity=\"0.45\""), std::string::npos) << "LeftLeg drawn as a left bone";

    // There and back again (3 m out, 3.5 m back): side by side, evenly spaced.
    Clip back = l;
    for (int f = 0; f < back.frames; ++f) back.pos(f, 0) = {f <= 30 ? 0.1f * float(f) : 3.0f - 0.1f * float(f - 30), 0.95f, 0};
    const std::string b2 = render_filmstrip_svg(back, o);
    expect_filmstrip(b2, 6);
    EXPECT_NE(b2.find("side by side"), std::string::npos);
    const std::vector<double> bx = label_xs(b2);
    ASSERT_EQ(bx.size(), 6u);
    for (size_t k = 2; k < bx.size(); ++k) EXPECT_NEAR(bx[k] - bx[k - 1], bx[1] - bx[0], 0.2);

    // A straight 3 m walk: placed along the travel, 1 m = the requested scale.
    Clip straight = l;
    for (int f = 0; f < straight.frames; ++f) straight.pos(f, 0) = {0.05f * float(f) - 1.0f, 0.95f, 0.0f};
    FilmstripOptions so;
    so.every = 10;
    so.px_per_metre = 100;
    const std::string s2 = render_filmstrip_svg(straight, so);
    expect_filmstrip(s2, 8);
    EXPECT_NE(s2.find("placed along the root's real travel (3.50 m)"), std::string::npos);
    EXPECT_DOUBLE_EQ(scale_px_per_m(s2), 100.0);
    const std::vector<double> xs = label_xs(s2);
    ASSERT_EQ(xs.size(), 8u);
    for (size_t k = 1; k < xs.size(); ++k) EXPECT_NEAR(xs[k] - xs[k - 1], 50.0, 0.11) << "0.5 m per 10 frames";
    // The floor (y = 0) is in view: the feet are 0.05 m above it.
    EXPECT_EQ(count(s2, "class=\"ground\""), 1u);

    // The same walk with a long way to go: the scale shrinks to fit max_width.
    Clip far = straight;
    for (int f = 0; f < far.frames; ++f) far.pos(f, 0).x *= 40.0f;
    const std::string s3 = render_filmstrip_svg(far, so);
    expect_filmstrip(s3, 8);
    EXPECT_LT(scale_px_per_m(s3), 15.0);

    // Degenerate clips still give valid documents.
    Clip one;
    one.skeleton.names = {"only"};
    one.skeleton.parents = {-1};
    one.skeleton.offsets = {vec3{}};
    one.resize(1);
    expect_filmstrip(render_filmstrip_svg(one, {}), 1);
    Clip empty = one;
    empty.resize(0);
    EXPECT_THROW(render_filmstrip_svg(empty, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ks
