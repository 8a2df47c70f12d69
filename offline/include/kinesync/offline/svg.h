#pragma once
// A minimal SVG plot writer: linear or logarithmic axes with ticks and labels, one polyline or
// scatter per series, a legend, optional vertical markers (e.g. teleports), shaded x-intervals
// (e.g. blackouts) and tick marks along the bottom edge (e.g. pops). Used by kinesync-tool and
// kinesync-replay.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ks {

struct SvgSeries {
    std::string name;
    std::string color;  // any SVG colour, e.g. "#1f77b4"
    std::vector<double> x, y;
    bool dashed = false;
    bool points = false;              // a circle per (x, y) instead of a polyline
    std::vector<size_t> highlight{};  // indices of points drawn larger, outlined in black
};

struct SvgPlot {
    std::string title, xlabel, ylabel;
    std::vector<SvgSeries> series;
    std::vector<double> markers;  // vertical lines at these x values
    std::string marker_label;     // legend text for the markers
    double width = 900, height = 420;
    // Logarithmic axes: values <= 0 are not drawn; the range snaps outward to 1-2-5 steps.
    bool log_x = false, log_y = false;
    // The {} initialisers keep -Wmissing-field-initializers quiet for the older braced initialisers.
    std::vector<std::pair<double, double>> shaded{};  // x-intervals drawn as grey bands behind the data
    std::string shaded_label{};                       // legend text for the bands
    std::vector<double> ticks{};                      // short red marks along the bottom edge at these x
    std::string ticks_label{};                        // legend text for the ticks
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
