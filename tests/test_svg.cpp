#include <gtest/gtest.h>

#include "common/dynamics/response.h"
#include "common/io/svg.h"
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
