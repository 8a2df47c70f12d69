#include <kinesync/offline/svg.h>

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

// One axis: its range and whether it is logarithmic.
struct Axis {
    double lo = 0, hi = 1;
    bool log = false;
    double frac(double v) const {
        return log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    }
};

// The nearest of 1, 2, 5 times a power of ten at or below (down) or at or above v > 0.
double snap125(double v, bool down) {
    const int e0 = int(std::floor(std::log10(v)));
    double best = down ? 0.0 : HUGE_VAL;
    for (int e = e0 - 1; e <= e0 + 1; ++e) {
        for (double m : {1.0, 2.0, 5.0}) {
            const double c = m * std::pow(10.0, e);
            if (down && c <= v * (1 + 1e-9)) best = std::max(best, c);
            if (!down && c >= v * (1 - 1e-9)) best = std::min(best, c);
        }
    }
    return best;
}

// The axis for data in [mn, mx] (mn > mx when there is none). A linear y axis (pad) gets 5% headroom.
Axis make_axis(double mn, double mx, bool log, bool pad) {
    Axis a;
    a.log = log;
    if (log) {
        if (mn > mx) mn = 1, mx = 10;
        a.lo = snap125(mn, true);
        a.hi = snap125(mx, false);
        if (a.hi < a.lo * 1.001) a.lo = snap125(a.lo / 1.01, true), a.hi = snap125(a.hi * 1.01, false);
        if (!(a.lo > 0)) a.lo = mn;  // past the ends of double's range
        if (!std::isfinite(a.hi)) a.hi = mx;
        return a;
    }
    if (mn > mx) mn = 0, mx = 1;
    if (pad) {
        if (mx - mn < 1e-12) mn -= 0.5, mx += 0.5;
        const double d = 0.05 * (mx - mn);
        mn -= d;
        mx += d;
    } else if (mx - mn < 1e-12) {
        mx = mn + 1;
    }
    a.lo = mn;
    a.hi = mx;
    return a;
}

struct Gridline {
    double v;
    bool labelled;
};

// About n evenly stepped gridlines on a linear axis. On a log axis, decades (labelled at most about
// n of them) plus 2 and 5 as minor lines, which are labelled too when fewer than two decades show.
std::vector<Gridline> gridlines(const Axis& a, int n) {
    std::vector<Gridline> g;
    if (!a.log) {
        const double step = nice_step(a.hi - a.lo, n);
        for (double t = std::ceil(a.lo / step) * step; t <= a.hi + 1e-9 * step; t += step) g.push_back({t, true});
        return g;
    }
    const int e0 = int(std::floor(std::log10(a.lo))), e1 = int(std::ceil(std::log10(a.hi)));
    const int stride = std::max(1, (e1 - e0 + n - 1) / n);
    int decades = 0;
    for (int e = e0; e <= e1; ++e) {
        const double v = std::pow(10.0, e);
        if (v >= a.lo * (1 - 1e-9) && v <= a.hi * (1 + 1e-9)) ++decades;
    }
    for (int e = e0; e <= e1; ++e) {
        for (double m : {1.0, 2.0, 5.0}) {
            const double v = m * std::pow(10.0, e);
            if (v < a.lo * (1 - 1e-9) || v > a.hi * (1 + 1e-9)) continue;
            if (m == 1.0) g.push_back({v, ((e % stride) + stride) % stride == 0});
            else if (stride == 1) g.push_back({v, decades < 2});
        }
    }
    return g;
}

bool usable(const SvgPlot& p, double x, double y) {
    return std::isfinite(x) && std::isfinite(y) && (!p.log_x || x > 0) && (!p.log_y || y > 0);
}

// One panel, drawn from the top: title, shaded bands, frame and gridlines, axis labels, markers,
// each series with its legend entry, the tick marks, and the legend's other entries.
class PlotWriter {
public:
    PlotWriter(const SvgPlot& p, double y_offset) : p_(p), y0_(y_offset) {
        pw_ = p.width - ml_ - mr_;
        ph_ = p.height - mt_ - mb_;
        double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
        for (const auto& s : p.series)
            for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
                if (!usable(p, s.x[i], s.y[i])) continue;
                x0 = std::min(x0, s.x[i]);
                x1 = std::max(x1, s.x[i]);
                y0 = std::min(y0, s.y[i]);
                y1 = std::max(y1, s.y[i]);
            }
        ax_ = make_axis(x0, x1, p.log_x, false);
        ay_ = make_axis(y0, y1, p.log_y, true);
    }

    std::string write() {
        o_ += "<text x=\"" + fmt(ml_ + pw_ / 2) + "\" y=\"" + fmt(y0_ + 22) +
              "\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" + svg_escape(p_.title) + "</text>\n";
        bands();
        frame_and_grid();
        markers();
        for (const SvgSeries& s : p_.series) series(s);
        ticks();
        other_legend();
        return std::move(o_);
    }

private:
    double sx(double x) const { return ml_ + ax_.frac(x) * pw_; }
    double sy(double y) const { return y0_ + mt_ + ph_ - ay_.frac(y) * ph_; }
    double legend_y() { return y0_ + mt_ + 10 + 18 * legend_++; }
    void legend_text(double ly, const std::string& text) {
        o_ += "<text x=\"" + fmt(ml_ + pw_ + 42) + "\" y=\"" + fmt(ly + 4) + "\" font-size=\"11\">" + svg_escape(text) + "</text>\n";
    }

    void bands() {
        std::string out;
        for (auto [a, b] : p_.shaded) {
            if (a > b) std::swap(a, b);
            a = std::max(a, ax_.lo);
            b = std::min(b, ax_.hi);
            if (!(a < b)) continue;  // also drops NaN
            out += "<rect x=\"" + fmt(sx(a)) + "\" y=\"" + fmt(y0_ + mt_) + "\" width=\"" + fmt(sx(b) - sx(a)) + "\" height=\"" + fmt(ph_) +
                   "\"/>\n";
        }
        if (!out.empty()) o_ += "<g class=\"shaded\" fill=\"#e6e6e6\">\n" + out + "</g>\n";
    }

    void frame_and_grid() {
        o_ += "<rect x=\"" + fmt(ml_) + "\" y=\"" + fmt(y0_ + mt_) + "\" width=\"" + fmt(pw_) + "\" height=\"" + fmt(ph_) +
              "\" fill=\"none\" stroke=\"#333\"/>\n";
        for (const Gridline& g : gridlines(ax_, 8)) {
            o_ += "<line x1=\"" + fmt(sx(g.v)) + "\" y1=\"" + fmt(y0_ + mt_) + "\" x2=\"" + fmt(sx(g.v)) + "\" y2=\"" + fmt(y0_ + mt_ + ph_) +
                  "\" stroke=\"" + (g.labelled ? "#ddd" : "#eee") + "\"/>\n";
            if (g.labelled)
                o_ += "<text x=\"" + fmt(sx(g.v)) + "\" y=\"" + fmt(y0_ + mt_ + ph_ + 16) + "\" text-anchor=\"middle\" font-size=\"11\">" +
                      tick_label(g.v) + "</text>\n";
        }
        for (const Gridline& g : gridlines(ay_, 6)) {
            o_ += "<line x1=\"" + fmt(ml_) + "\" y1=\"" + fmt(sy(g.v)) + "\" x2=\"" + fmt(ml_ + pw_) + "\" y2=\"" + fmt(sy(g.v)) +
                  "\" stroke=\"" + (g.labelled ? "#ddd" : "#eee") + "\"/>\n";
            if (g.labelled)
                o_ += "<text x=\"" + fmt(ml_ - 6) + "\" y=\"" + fmt(sy(g.v) + 4) + "\" text-anchor=\"end\" font-size=\"11\">" +
                      tick_label(g.v) + "</text>\n";
        }
        o_ += "<text x=\"" + fmt(ml_ + pw_ / 2) + "\" y=\"" + fmt(y0_ + p_.height - 12) + "\" text-anchor=\"middle\" font-size=\"12\">" +
              svg_escape(p_.xlabel) + "</text>\n";
        o_ += "<text transform=\"translate(16," + fmt(y0_ + mt_ + ph_ / 2) + ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">" +
              svg_escape(p_.ylabel) + "</text>\n";
    }

    void markers() {
        for (double m : p_.markers) {
            if (!(m >= ax_.lo && m <= ax_.hi)) continue;
            o_ += "<line x1=\"" + fmt(sx(m)) + "\" y1=\"" + fmt(y0_ + mt_) + "\" x2=\"" + fmt(sx(m)) + "\" y2=\"" + fmt(y0_ + mt_ + ph_) +
                  "\" stroke=\"#999\" stroke-dasharray=\"4,3\"/>\n";
        }
    }

    // Points or a line, the highlighted points drawn large over them, and the legend entry.
    void series(const SvgSeries& s) {
        const size_t n = std::min(s.x.size(), s.y.size());
        std::vector<bool> big(n, false);
        for (size_t i : s.highlight)
            if (i < n) big[i] = true;
        if (s.points) {
            o_ += "<g fill=\"" + s.color + "\">\n";
            for (size_t i = 0; i < n; ++i)
                if (!big[i] && usable(p_, s.x[i], s.y[i]))
                    o_ += "<circle cx=\"" + fmt(sx(s.x[i])) + "\" cy=\"" + fmt(sy(s.y[i])) + "\" r=\"2.5\"/>\n";
            o_ += "</g>\n";
        } else {
            std::string pts;
            for (size_t i = 0; i < n; ++i)
                if (usable(p_, s.x[i], s.y[i])) pts += fmt(sx(s.x[i])) + "," + fmt(sy(std::clamp(s.y[i], ay_.lo, ay_.hi))) + " ";
            o_ += "<polyline fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"1.6\"" + (s.dashed ? " stroke-dasharray=\"6,4\"" : "") +
                  " points=\"" + pts + "\"/>\n";
        }
        if (std::find(big.begin(), big.end(), true) != big.end()) {
            o_ += "<g fill=\"" + s.color + "\" stroke=\"#000\" stroke-width=\"1.2\">\n";
            for (size_t i = 0; i < n; ++i)
                if (big[i] && usable(p_, s.x[i], s.y[i]))
                    o_ += "<circle cx=\"" + fmt(sx(s.x[i])) + "\" cy=\"" + fmt(sy(s.y[i])) + "\" r=\"5\"/>\n";
            o_ += "</g>\n";
        }
        const double ly = legend_y();
        if (s.points)
            o_ += "<circle cx=\"" + fmt(ml_ + pw_ + 24) + "\" cy=\"" + fmt(ly) + "\" r=\"4\" fill=\"" + s.color + "\"/>\n";
        else
            o_ += "<line x1=\"" + fmt(ml_ + pw_ + 12) + "\" y1=\"" + fmt(ly) + "\" x2=\"" + fmt(ml_ + pw_ + 36) + "\" y2=\"" + fmt(ly) +
                  "\" stroke=\"" + s.color + "\" stroke-width=\"2\"" + (s.dashed ? " stroke-dasharray=\"6,4\"" : "") + "/>\n";
        legend_text(ly, s.name);
    }

    // Tens of thousands of ticks land on a few hundred pixel columns: one mark per column.
    void ticks() {
        std::vector<long> cols;
        for (double t : p_.ticks)
            if (t >= ax_.lo && t <= ax_.hi) cols.push_back(std::lround(sx(t)));
        std::sort(cols.begin(), cols.end());
        cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
        if (cols.empty()) return;
        const double bottom = y0_ + mt_ + ph_;
        o_ += "<g class=\"ticks\" stroke=\"#e00\">\n";
        for (long c : cols) {
            const std::string cx = std::to_string(c);
            o_ += "<line x1=\"" + cx + "\" y1=\"" + fmt(bottom) + "\" x2=\"" + cx + "\" y2=\"" + fmt(bottom - 7) + "\"/>\n";
        }
        o_ += "</g>\n";
    }

    void other_legend() {
        const double x = ml_ + pw_;
        if (!p_.markers.empty() && !p_.marker_label.empty()) {
            const double ly = legend_y();
            o_ += "<line x1=\"" + fmt(x + 12) + "\" y1=\"" + fmt(ly) + "\" x2=\"" + fmt(x + 36) + "\" y2=\"" + fmt(ly) +
                  "\" stroke=\"#999\" stroke-dasharray=\"4,3\"/>\n";
            legend_text(ly, p_.marker_label);
        }
        if (!p_.shaded.empty() && !p_.shaded_label.empty()) {
            const double ly = legend_y();
            o_ += "<rect x=\"" + fmt(x + 12) + "\" y=\"" + fmt(ly - 6) + "\" width=\"24\" height=\"12\" fill=\"#e6e6e6\"/>\n";
            legend_text(ly, p_.shaded_label);
        }
        if (!p_.ticks.empty() && !p_.ticks_label.empty()) {
            const double ly = legend_y();
            o_ += "<line x1=\"" + fmt(x + 24) + "\" y1=\"" + fmt(ly - 6) + "\" x2=\"" + fmt(x + 24) + "\" y2=\"" + fmt(ly + 6) +
                  "\" stroke=\"#e00\"/>\n";
            legend_text(ly, p_.ticks_label);
        }
    }

    const SvgPlot& p_;
    double y0_;
    const double ml_ = 70, mr_ = 170, mt_ = 36, mb_ = 50;
    double pw_ = 0, ph_ = 0;
    Axis ax_, ay_;
    int legend_ = 0;
    std::string o_;
};

std::string plot_body(const SvgPlot& p, double y_offset) { return PlotWriter(p, y_offset).write(); }

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
