#include "common/io/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace ks {

const char* svg_palette(int i) {
    static const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};
    return colors[((i % 8) + 8) % 8];
}

std::string svg_escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

namespace {

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

std::string tick_label(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", std::fabs(v) < 1e-12 ? 0.0 : v);
    return buf;
}

// A "nice" tick step giving about n ticks over the range.
double nice_step(double range, int n) {
    const double raw = range / n;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}

std::string plot_body(const SvgPlot& p, double y_offset) {
    const double ml = 70, mr = 170, mt = 36, mb = 50;
    const double pw = p.width - ml - mr, ph = p.height - mt - mb;
    double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
    for (const auto& s : p.series) {
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
            x0 = std::min(x0, s.x[i]);
            x1 = std::max(x1, s.x[i]);
            y0 = std::min(y0, s.y[i]);
            y1 = std::max(y1, s.y[i]);
        }
    }
    if (x0 > x1) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
    if (x1 - x0 < 1e-12) x1 = x0 + 1;
    if (y1 - y0 < 1e-12) y0 -= 0.5, y1 += 0.5;
    const double pad = 0.05 * (y1 - y0);
    y0 -= pad;
    y1 += pad;
    auto sx = [&](double x) { return ml + (x - x0) / (x1 - x0) * pw; };
    auto sy = [&](double y) { return y_offset + mt + ph - (y - y0) / (y1 - y0) * ph; };

    std::string o;
    o += "<text x=\"" + fmt(ml + pw / 2) + "\" y=\"" + fmt(y_offset + 22) +
         "\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" + svg_escape(p.title) + "</text>\n";
    o += "<rect x=\"" + fmt(ml) + "\" y=\"" + fmt(y_offset + mt) + "\" width=\"" + fmt(pw) + "\" height=\"" + fmt(ph) +
         "\" fill=\"none\" stroke=\"#333\"/>\n";
    const double xs = nice_step(x1 - x0, 8), ys = nice_step(y1 - y0, 6);
    for (double t = std::ceil(x0 / xs) * xs; t <= x1 + 1e-9 * xs; t += xs) {
        o += "<line x1=\"" + fmt(sx(t)) + "\" y1=\"" + fmt(y_offset + mt) + "\" x2=\"" + fmt(sx(t)) + "\" y2=\"" +
             fmt(y_offset + mt + ph) + "\" stroke=\"#ddd\"/>\n";
        o += "<text x=\"" + fmt(sx(t)) + "\" y=\"" + fmt(y_offset + mt + ph + 16) +
             "\" text-anchor=\"middle\" font-size=\"11\">" + tick_label(t) + "</text>\n";
    }
    for (double t = std::ceil(y0 / ys) * ys; t <= y1 + 1e-9 * ys; t += ys) {
        o += "<line x1=\"" + fmt(ml) + "\" y1=\"" + fmt(sy(t)) + "\" x2=\"" + fmt(ml + pw) + "\" y2=\"" + fmt(sy(t)) +
             "\" stroke=\"#ddd\"/>\n";
        o += "<text x=\"" + fmt(ml - 6) + "\" y=\"" + fmt(sy(t) + 4) + "\" text-anchor=\"end\" font-size=\"11\">" +
             tick_label(t) + "</text>\n";
    }
    o += "<text x=\"" + fmt(ml + pw / 2) + "\" y=\"" + fmt(y_offset + p.height - 12) +
         "\" text-anchor=\"middle\" font-size=\"12\">" + svg_escape(p.xlabel) + "</text>\n";
    o += "<text transform=\"translate(16," + fmt(y_offset + mt + ph / 2) +
         ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">" + svg_escape(p.ylabel) + "</text>\n";
    for (double m : p.markers) {
        if (m < x0 || m > x1) continue;
        o += "<line x1=\"" + fmt(sx(m)) + "\" y1=\"" + fmt(y_offset + mt) + "\" x2=\"" + fmt(sx(m)) + "\" y2=\"" +
             fmt(y_offset + mt + ph) + "\" stroke=\"#999\" stroke-dasharray=\"4,3\"/>\n";
    }
    int legend = 0;
    for (size_t k = 0; k < p.series.size(); ++k) {
        const SvgSeries& s = p.series[k];
        std::string pts;
        for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
            if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
            pts += fmt(sx(s.x[i])) + "," + fmt(sy(std::clamp(s.y[i], y0, y1))) + " ";
        }
        o += "<polyline fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"1.6\"" +
             (s.dashed ? " stroke-dasharray=\"6,4\"" : "") + " points=\"" + pts + "\"/>\n";
        const double ly = y_offset + mt + 10 + 18 * legend++;
        o += "<line x1=\"" + fmt(ml + pw + 12) + "\" y1=\"" + fmt(ly) + "\" x2=\"" + fmt(ml + pw + 36) + "\" y2=\"" + fmt(ly) +
             "\" stroke=\"" + s.color + "\" stroke-width=\"2\"" + (s.dashed ? " stroke-dasharray=\"6,4\"" : "") + "/>\n";
        o += "<text x=\"" + fmt(ml + pw + 42) + "\" y=\"" + fmt(ly + 4) + "\" font-size=\"11\">" + svg_escape(s.name) +
             "</text>\n";
    }
    if (!p.markers.empty() && !p.marker_label.empty()) {
        const double ly = y_offset + mt + 10 + 18 * legend;
        o += "<line x1=\"" + fmt(ml + pw + 12) + "\" y1=\"" + fmt(ly) + "\" x2=\"" + fmt(ml + pw + 36) + "\" y2=\"" + fmt(ly) +
             "\" stroke=\"#999\" stroke-dasharray=\"4,3\"/>\n";
        o += "<text x=\"" + fmt(ml + pw + 42) + "\" y=\"" + fmt(ly + 4) + "\" font-size=\"11\">" + svg_escape(p.marker_label) +
             "</text>\n";
    }
    return o;
}

}  // namespace

std::string render_svg_plots(const std::vector<SvgPlot>& plots) {
    double w = 0, h = 0;
    for (const auto& p : plots) {
        w = std::max(w, p.width);
        h += p.height;
    }
    std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    fmt(w) + "\" height=\"" + fmt(h) + "\" viewBox=\"0 0 " + fmt(w) + " " + fmt(h) +
                    "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    double y = 0;
    for (const auto& p : plots) {
        o += plot_body(p, y);
        y += p.height;
    }
    o += "</svg>\n";
    return o;
}

std::string render_svg_plot(const SvgPlot& plot) { return render_svg_plots({plot}); }

void write_text_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error(path + ": cannot open for writing");
    f << text;
    if (!f) throw std::runtime_error(path + ": write failed");
}

}  // namespace ks
