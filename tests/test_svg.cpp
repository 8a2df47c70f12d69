#include <gtest/gtest.h>

#include "common/src/dynamics/response.h"
#include <kinesync/offline/svg.h>
#include "tests/support/xml_check.h"

using namespace ks;

TEST(Svg, CheckerRejectsMalformedDocuments) {
    EXPECT_EQ(test::xml_check("<svg><g a=\"1\"/></svg>"), "");
    EXPECT_NE(test::xml_check("<svg><g></svg>"), "");
    EXPECT_NE(test::xml_check("<svg a=1></svg>"), "");
    EXPECT_NE(test::xml_check("<svg>&nbsp;</svg>"), "");
    EXPECT_NE(test::xml_check("<svg></svg><svg></svg>"), "");
}

TEST(Svg, PlotsAreWellFormedAndCarryTheirSeries) {
    const SodTrace t = sod_step_response({2.0f, 0.5f, 2.0f}, SodStability::PoleZero, 1.0f / 60.0f, 2.0f);
    SvgPlot p{"step <f=2> & co", "time (s)", "value", {}, {0.5, 1.0}, "teleport", 900, 400};
    p.series.push_back({"input", "#777", t.t, t.x, true});
    p.series.push_back({"output", svg_palette(0), t.t, t.y, false});
    const std::string svg = render_svg_plots({p, p});
    EXPECT_EQ(test::xml_check(svg), "");
    EXPECT_NE(svg.find("step &lt;f=2&gt; &amp; co"), std::string::npos) << "title escaped";
    EXPECT_NE(svg.find("teleport"), std::string::npos);
    size_t polylines = 0;
    for (size_t k = svg.find("<polyline"); k != std::string::npos; k = svg.find("<polyline", k + 1)) ++polylines;
    EXPECT_EQ(polylines, 4u);
    // Degenerate data still renders.
    SvgPlot empty{"empty", "x", "y", {}, {}, "", 300, 200};
    empty.series.push_back({"nan", "#000", {0, 1}, {NAN, NAN}, false});
    EXPECT_EQ(test::xml_check(render_svg_plot(empty)), "");
}

namespace {

size_t count(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t k = s.find(what); k != std::string::npos; k = s.find(what, k + 1)) ++n;
    return n;
}

// The cy of every <circle> with radius r, in document order.
std::vector<double> circle_ys(const std::string& svg, const std::string& r) {
    std::vector<double> ys;
    for (size_t k = svg.find("<circle"); k != std::string::npos; k = svg.find("<circle", k + 1)) {
        const std::string tag = svg.substr(k, svg.find('>', k) - k);
        if (tag.find("r=\"" + r + "\"") == std::string::npos) continue;
        ys.push_back(std::stod(tag.substr(tag.find("cy=\"") + 4)));
    }
    return ys;
}

}  // namespace

TEST(Svg, LogAxisSpacesDecadesEquallyAndSkipsNonPositiveValues) {
    SvgPlot p{"log", "x", "y", {}, {}, "", 900, 400};
    p.log_y = true;
    p.series.push_back({"pts", "#000", {0, 1, 2, 3, 4, 5}, {1, 10, 100, 0.1, 0, -3}, false, true, {}});
    p.series.push_back({"line", "#f00", {0, 1, 2, 3, 4}, {0, -1, 5, NAN, 20}, false});
    const std::string svg = render_svg_plot(p);
    EXPECT_EQ(test::xml_check(svg), "");
    const std::vector<double> ys = circle_ys(svg, "2.5");
    ASSERT_EQ(ys.size(), 4u) << "zero and negative values are not drawn";
    EXPECT_GT(ys[0], ys[1]) << "10 is above 1";
    EXPECT_NEAR(ys[0] - ys[1], ys[1] - ys[2], 0.02);
    EXPECT_NEAR(ys[3] - ys[0], ys[0] - ys[1], 0.02);
    for (const char* label : {">0.1<", ">1<", ">10<", ">100<"}) EXPECT_NE(svg.find(label), std::string::npos) << label;
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    EXPECT_EQ(svg.find("inf"), std::string::npos);

    // Nothing positive at all still renders.
    SvgPlot none{"none", "x", "y", {}, {}, "", 300, 200};
    none.log_x = none.log_y = true;
    none.series.push_back({"zeros", "#000", {0, -1, 2}, {0, 0, -5}, false});
    const std::string empty = render_svg_plot(none);
    EXPECT_EQ(test::xml_check(empty), "");
    EXPECT_EQ(empty.find("nan"), std::string::npos);
}

TEST(Svg, ShadedSpansAndMergedTicks) {
    SvgPlot p{"net", "time (s)", "error", {}, {}, "", 900, 400};
    p.series.push_back({"e", "#000", {0, 10}, {1, 2}, false});
    p.shaded = {{1, 2}, {5, 4}, {9, 20}, {11, 12}, {NAN, 3}};  // reversed, clipped, outside, NaN
    p.shaded_label = "blackout";
    p.ticks = {1, 3, 3.0001, 7, -1, NAN};
    p.ticks_label = "pop";
    std::string svg = render_svg_plot(p);
    EXPECT_EQ(test::xml_check(svg), "");
    const auto group = [&](const std::string& cls) {
        const size_t b = svg.find("<g class=\"" + cls + "\"");
        return b == std::string::npos ? std::string() : svg.substr(b, svg.find("</g>", b) - b);
    };
    EXPECT_EQ(count(group("shaded"), "<rect"), 3u);
    EXPECT_EQ(count(group("ticks"), "<line"), 3u) << "3 and 3.0001 share a pixel; -1 and NaN are off the axis";
    EXPECT_NE(svg.find(">blackout<"), std::string::npos);
    EXPECT_NE(svg.find(">pop<"), std::string::npos);

    p.ticks.clear();
    for (int i = 0; i < 100000; ++i) p.ticks.push_back(10.0 * i / 100000);
    svg = render_svg_plot(p);
    EXPECT_EQ(test::xml_check(svg), "");
    EXPECT_LT(svg.size(), 200000u);
    EXPECT_LE(count(group("ticks"), "<line"), 661u) << "at most one per pixel column";
}

TEST(Svg, ScatterSeriesDrawCirclesAndHighlights) {
    SvgPlot p{"pareto", "latency (ms)", "error (cm)", {}, {}, "", 900, 400};
    p.series.push_back({"settings", svg_palette(0), {1, 2, 3, 4, 5}, {5, 3, 2, 1.5, 4}, false, true, {1, 1, 4, 99}});
    p.series.push_back({"front", svg_palette(1), {1, 2, 3, 4}, {5, 3, 2, 1.5}, false});
    const std::string svg = render_svg_plot(p);
    EXPECT_EQ(test::xml_check(svg), "");
    EXPECT_EQ(circle_ys(svg, "2.5").size(), 3u);
    EXPECT_EQ(circle_ys(svg, "5").size(), 2u) << "duplicate and out-of-range highlights ignored";
    EXPECT_EQ(circle_ys(svg, "4").size(), 1u) << "legend marker for the point series";
    EXPECT_NE(svg.find("stroke=\"#000\""), std::string::npos);
    EXPECT_EQ(count(svg, "<polyline"), 1u);
    EXPECT_EQ(render_svg_plot(p), svg) << "deterministic";
}
