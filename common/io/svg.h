#pragma once
// A minimal SVG line-plot writer: axes with ticks and labels, one polyline per series, a legend,
// and optional vertical markers (e.g. teleports). Used by kinesync-tool and kinesync-replay.

#include <string>
#include <vector>

namespace ks {

struct SvgSeries {
    std::string name;
    std::string color;  // any SVG colour, e.g. "#1f77b4"
    std::vector<double> x, y;
    bool dashed = false;
};

struct SvgPlot {
    std::string title, xlabel, ylabel;
    std::vector<SvgSeries> series;
    std::vector<double> markers;  // vertical lines at these x values
    std::string marker_label;     // legend text for the markers
    double width = 900, height = 420;
};

// A few distinct colours for series, cycled.
const char* svg_palette(int i);
std::string svg_escape(const std::string& text);
// Renders a complete standalone SVG document.
std::string render_svg_plot(const SvgPlot& plot);
// Renders several plots stacked vertically in one document.
std::string render_svg_plots(const std::vector<SvgPlot>& plots);
// Writes text to path; throws std::runtime_error naming the path on failure.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace ks
