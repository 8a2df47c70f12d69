#include <kinesync/offline/filmstrip.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/offline/svg.h>

namespace ks {

namespace {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", std::fabs(v) < 0.05 ? 0.0 : v);
    return buf;
}

std::string fmt(const char* f, double v) {
    if (std::fabs(v) < 0.005) v = 0.0;  // no "-0.00"
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string basename_of(const std::string& path) {
    const size_t k = path.find_last_of("/\\");
    return k == std::string::npos ? path : path.substr(k + 1);
}

// -1 left, +1 right, 0 unknown (centre or inherit).
int side_of_name(const std::string& full) {
    std::string n = full;
    if (n.rfind("CC_Base_", 0) == 0) n = n.substr(8);
    auto starts_ci = [&](const char* p) {
        const size_t len = std::char_traits<char>::length(p);
        if (n.size() < len) return false;
        for (size_t i = 0; i < len; ++i)
            if (std::tolower(static_cast<unsigned char>(n[i])) != std::tolower(static_cast<unsigned char>(p[i]))) return false;
        return true;
    };
    if (starts_ci("left")) return -1;
    if (starts_ci("right")) return 1;
    if (n.size() >= 2 && (std::isupper(static_cast<unsigned char>(n[1])) || n[1] == '_')) {
        if (n[0] == 'L' || n[0] == 'l') return -1;
        if (n[0] == 'R' || n[0] == 'r') return 1;
    }
    return 0;
}

bool is_head(const std::string& full) {
    std::string n;
    for (char c : full) n += char(std::tolower(static_cast<unsigned char>(c)));
    return n == "head" || (n.size() > 4 && n.compare(n.size() - 5, 5, "_head") == 0);
}

std::string colour_at(double t) {
    const double a[3] = {31, 119, 180}, b[3] = {214, 39, 40};
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", int(std::lround(a[0] + (b[0] - a[0]) * t)),
                  int(std::lround(a[1] + (b[1] - a[1]) * t)), int(std::lround(a[2] + (b[2] - a[2]) * t)));
    return buf;
}

struct Figure {
    int frame = 0;
    std::vector<vec3> pts;  // metres: joints, then End Sites
    vec3 root;
};

}  // namespace

std::vector<int> filmstrip_frames(int clip_frames, const FilmstripOptions& opts) {
    if (clip_frames < 1) throw std::invalid_argument("filmstrip: the clip has no frames");
    if (opts.every < 0) throw std::invalid_argument("filmstrip: every must be positive");
    if (opts.frames < 0) throw std::invalid_argument("filmstrip: frames must be positive");
    if (opts.every > 0 && opts.frames > 0) throw std::invalid_argument("filmstrip: give every or frames, not both");
    std::vector<int> out;
    if (opts.frames > 0) {
        const int k = std::min(opts.frames, clip_frames);
        if (k == 1) return {0};
        for (int i = 0; i < k; ++i) out.push_back(int(std::lround(double(i) * double(clip_frames - 1) / double(k - 1))));
        return out;
    }
    const int every = opts.every > 0 ? opts.every : std::max(1, (clip_frames + 9) / 10);
    for (int f = 0; f < clip_frames; f += every) out.push_back(f);
    return out;
}

namespace {

// What is drawn: joints then End Sites, each with its parent and side (-1 left, drawn faded), the
// head (a circle), and the figures' global positions in metres.
struct Points {
    std::vector<int> parent, side;
    int head = -1;
    std::vector<Figure> figs;
    std::vector<vec3> root_path;  // metres, every frame
};

Points points_of(const Clip& clip, const FilmstripOptions& opts, const std::vector<int>& frames) {
    const int nj = clip.joints();
    const double mpu = clip.metres_per_unit > 0 ? clip.metres_per_unit : 1.0;
    const std::vector<vec3> no_sites;
    const std::vector<vec3>& sites = opts.end_sites ? *opts.end_sites : no_sites;
    Points pt;
    pt.parent.resize(size_t(nj) + sites.size());
    pt.side.assign(pt.parent.size(), 0);
    for (int j = 0; j < nj; ++j) {
        const int p = clip.skeleton.parents[size_t(j)];
        pt.parent[size_t(j)] = p;
        pt.side[size_t(j)] = side_of_name(clip.skeleton.names[size_t(j)]);
        if (pt.side[size_t(j)] == 0 && p >= 0) pt.side[size_t(j)] = pt.side[size_t(p)];
        if (pt.head < 0 && is_head(clip.skeleton.names[size_t(j)])) pt.head = j;
    }
    for (size_t e = 0; e < sites.size(); ++e) {
        const int p = opts.end_site_parents && e < opts.end_site_parents->size() ? (*opts.end_site_parents)[e] : -1;
        if (p < 0 || p >= nj) throw std::invalid_argument("filmstrip: End Site without a valid parent joint");
        pt.parent[size_t(nj) + e] = p;
        pt.side[size_t(nj) + e] = pt.side[size_t(p)];
    }
    Pose local(nj), global(nj);
    for (const int f : frames) {
        for (int j = 0; j < nj; ++j) {
            local.pos[size_t(j)] = clip.pos(f, j);
            local.rot[size_t(j)] = clip.rot(f, j);
            local.scl[size_t(j)] = clip.scl(f, j);
        }
        op_fk_static(global, local, clip.skeleton.parents);
        Figure fig;
        fig.frame = f;
        for (int j = 0; j < nj; ++j) fig.pts.push_back(global.pos[size_t(j)] * float(mpu));
        for (size_t e = 0; e < sites.size(); ++e) {
            const size_t p = size_t(pt.parent[size_t(nj) + e]);
            fig.pts.push_back((global.pos[p] + quat_mul_vec3(global.rot[p], sites[e] * global.scl[p])) * float(mpu));
        }
        fig.root = fig.pts[0];
        for (const vec3& q : fig.pts)
            if (!isfinite(q)) throw std::invalid_argument("filmstrip: non-finite joint position at frame " + std::to_string(f));
        pt.figs.push_back(std::move(fig));
    }
    pt.root_path.reserve(size_t(clip.frames));
    for (int f = 0; f < clip.frames; ++f) pt.root_path.push_back(clip.pos(f, 0) * float(mpu));
    return pt;
}

// Where it goes on the page: the horizontal axis u (the travel direction, or x), v across it,
// per-figure shifts when side by side, the ranges of both views, the scale and the label tiers.
struct Layout {
    bool travels = false, ground = false;
    double disp = 0;  // the root's horizontal displacement, m
    vec3 u{1, 0, 0}, v{0, 0, 1};
    std::vector<double> shift_a, shift_b;
    double a_lo = 1e300, a_hi = -1e300, y_lo = 1e300, y_hi = -1e300, b_lo = 1e300, b_hi = -1e300;
    double pad = 0.1, margin = 20, s = 0, width = 0;  // s: pixels per metre
    std::vector<int> tier;  // label row under the side view, -1: left out
    int tiers = 1;
    double X(double a) const { return margin + (a - a_lo + pad) * s; }
};

// Whether the clip travels: far enough, straight enough, and every drawn figure a step further.
void choose_axes(Layout& L, const Clip& clip, const Points& pt) {
    const std::vector<vec3>& rp = pt.root_path;
    const vec3 disp3 = rp.back() - rp.front();
    L.disp = std::hypot(double(disp3.x), double(disp3.z));
    double path = 0;
    const int step = std::max(1, int(std::lround(0.1 / std::max(1e-6, double(clip.frame_dt)))));
    vec3 prev = rp.front();
    for (int f = step; f < clip.frames + step; f += step) {
        const vec3 p = rp[size_t(std::min(f, clip.frames - 1))];
        path += std::hypot(double(p.x) - prev.x, double(p.z) - prev.z);
        prev = p;
        if (f >= clip.frames - 1) break;
    }
    const size_t K = pt.figs.size();
    L.travels = L.disp >= 1.0 && L.disp >= 0.7 * path;
    L.u = L.travels ? vec3{float(disp3.x / L.disp), 0.0f, float(disp3.z / L.disp)} : vec3{1, 0, 0};
    L.v = vec3{-L.u.z, 0.0f, L.u.x};  // u x Y: down the page in the top view
    // The drawn figures must also advance: no step along u shorter than a quarter of the average
    // step (a clip that travels but pauses or turns on the spot stacks its figures otherwise).
    if (L.travels && K > 1) {
        const double avg = (dot(pt.figs.back().root, L.u) - dot(pt.figs.front().root, L.u)) / double(K - 1);
        for (size_t k = 1; k < K && L.travels; ++k)
            L.travels = dot(pt.figs[k].root, L.u) - dot(pt.figs[k - 1].root, L.u) >= 0.25 * avg && avg > 0;
    }
    if (!L.travels) L.u = vec3{1, 0, 0}, L.v = vec3{0, 0, 1};
}

// Side by side (not travelling): each figure centred on its root, spaced by the widest figure.
void place_figures(Layout& L, const Points& pt) {
    const size_t K = pt.figs.size();
    L.shift_a.assign(K, 0.0);
    L.shift_b.assign(K, 0.0);
    if (L.travels) return;
    double left = 0, right = 0;
    for (const Figure& f : pt.figs) {
        const double ra = dot(f.root, L.u);
        for (const vec3& p : f.pts) {
            left = std::max(left, ra - dot(p, L.u));
            right = std::max(right, dot(p, L.u) - ra);
        }
    }
    const double spacing = std::max(0.4, left + right + 0.15);
    for (size_t k = 0; k < K; ++k) {
        L.shift_a[k] = double(k) * spacing - dot(pt.figs[k].root, L.u);
        L.shift_b[k] = -dot(pt.figs[k].root, L.v);
    }
}

void measure_ranges(Layout& L, const Points& pt, const FilmstripOptions& opts) {
    for (size_t k = 0; k < pt.figs.size(); ++k)
        for (const vec3& p : pt.figs[k].pts) {
            const double a = dot(p, L.u) + L.shift_a[k], b = dot(p, L.v) + L.shift_b[k];
            L.a_lo = std::min(L.a_lo, a), L.a_hi = std::max(L.a_hi, a);
            L.b_lo = std::min(L.b_lo, b), L.b_hi = std::max(L.b_hi, b);
            L.y_lo = std::min(L.y_lo, double(p.y)), L.y_hi = std::max(L.y_hi, double(p.y));
        }
    if (L.travels)
        for (const vec3& p : pt.root_path) {
            L.a_lo = std::min(L.a_lo, double(dot(p, L.u))), L.a_hi = std::max(L.a_hi, double(dot(p, L.u)));
            L.b_lo = std::min(L.b_lo, double(dot(p, L.v))), L.b_hi = std::max(L.b_hi, double(dot(p, L.v)));
        }
    if (L.y_lo > 0 && L.y_lo < 0.25) L.y_lo = 0;  // show the floor when the feet are near it
    L.ground = L.y_lo <= 0 && L.y_hi >= 0;
    // Keep the views from collapsing (a single joint, a flat figure).
    auto widen = [](double& lo, double& hi, double min_extent) {
        if (hi - lo < min_extent) {
            const double c = 0.5 * (lo + hi);
            lo = c - 0.5 * min_extent;
            hi = c + 0.5 * min_extent;
        }
    };
    widen(L.a_lo, L.a_hi, 0.5);
    widen(L.y_lo, L.y_hi, 0.3);
    widen(L.b_lo, L.b_hi, 0.2);
    L.s = std::min(opts.px_per_metre, (opts.max_width - 2 * L.margin) / (L.a_hi - L.a_lo + 2 * L.pad));
    L.width = std::max(520.0, 2 * L.margin + (L.a_hi - L.a_lo + 2 * L.pad) * L.s);
}

// Label tiers under the side view: a label moves down a tier (up to 3) when it would touch the
// previous one; when no tier has room, that figure's label is left out (-1).
void place_labels(Layout& L, const Points& pt) {
    const double label_w = 46;
    const size_t K = pt.figs.size();
    L.tier.assign(K, 0);
    std::vector<double> last_x(3, -1e300);
    for (size_t k = 0; k < K; ++k) {
        const double x = L.X(dot(pt.figs[k].root, L.u) + L.shift_a[k]);
        int t = 0;
        while (t < 3 && std::fabs(x - last_x[size_t(t)]) < label_w) ++t;
        if (t == 3) {
            L.tier[k] = -1;
            continue;
        }
        L.tier[k] = t;
        last_x[size_t(t)] = x;
        L.tiers = std::max(L.tiers, t + 1);
    }
}

// The SVG, top to bottom: title, side view, labels, top view, scale bar.
class FilmstripWriter {
public:
    FilmstripWriter(const Clip& clip, const FilmstripOptions& opts, const std::vector<int>& frames, const Points& pt, const Layout& L)
        : clip_(clip), opts_(opts), frames_(frames), pt_(pt), L_(L), K_(pt.figs.size()) {
        side_top_ = 76;
        side_h_ = (L.y_hi - L.y_lo + 2 * L.pad) * L.s;
        labels_top_ = side_top_ + side_h_ + 4;
        top_header_ = labels_top_ + L.tiers * 26.0 + 4 + 16;
        top_top_ = top_header_ + 8;
        top_h_ = (L.b_hi - L.b_lo + 2 * L.pad) * L.s;
        bar_y_ = top_top_ + top_h_ + 22;
        dir_ = "(x, z) = (" + fmt("%.2f", L.u.x) + ", " + fmt("%.2f", L.u.z) + ")";
    }

    std::string write() {
        o_.reserve(K_ * pt_.parent.size() * 60 + 4096);
        header();
        side_view();
        labels();
        top_view();
        scale_bar();
        o_ += "</svg>\n";
        return std::move(o_);
    }

private:
    double YS(double y) const { return side_top_ + (L_.y_hi + L_.pad - y) * L_.s; }
    double YT(double b) const { return top_top_ + (b - L_.b_lo + L_.pad) * L_.s; }
    std::string colour(size_t k) const { return colour_at(K_ > 1 ? double(k) / double(K_ - 1) : 0.0); }
    double a_of(size_t k, const vec3& p) const { return dot(p, L_.u) + L_.shift_a[k]; }
    double y_of(size_t k, const vec3& p, bool side_view) const { return side_view ? YS(p.y) : YT(dot(p, L_.v) + L_.shift_b[k]); }

    void header() {
        const double height = bar_y_ + 22, margin = L_.margin;
        o_ += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(L_.width) +
              "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(L_.width) + " " + num(height) +
              "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
        const std::string title = opts_.title.empty() ? basename_of(clip_.name) : opts_.title;
        o_ += "<text x=\"" + num(margin) + "\" y=\"26\" font-size=\"15\" font-weight=\"bold\">" + svg_escape(title) + "</text>\n";
        std::string sub = std::to_string(K_) + (K_ == 1 ? " figure" : " figures") + " of " + std::to_string(clip_.frames) +
                          " frames at " + fmt("%.4g", 1.0 / double(clip_.frame_dt)) + " fps";
        if (K_ > 1) {
            const int step = frames_[1] - frames_[0];
            bool uniform = true;
            for (size_t k = 2; k < K_; ++k) uniform = uniform && frames_[k] - frames_[k - 1] == step;
            sub += uniform ? ", every " + std::to_string(step) + " frames (" + fmt("%.3g s", step * double(clip_.frame_dt)) + ")"
                           : ", spread evenly";
        }
        sub += L_.travels ? "; placed along the root's real travel (" + fmt("%.2f m", L_.disp) + ")"
                          : "; side by side, each centred on its root (travel " + fmt("%.2f m", L_.disp) + ")";
        o_ += "<text x=\"" + num(margin) + "\" y=\"44\" font-size=\"11\" fill=\"#444\">" + svg_escape(sub) + "</text>\n";
    }

    std::string figure_group(size_t k, bool side_view) const {
        const Figure& f = pt_.figs[k];
        auto P = [&](const vec3& p) { return num(L_.X(a_of(k, p))) + " " + num(y_of(k, p, side_view)); };
        std::string left, rest;
        for (size_t i = 0; i < f.pts.size(); ++i) {
            const int p = pt_.parent[i];
            if (p < 0) continue;
            std::string& d = pt_.side[i] < 0 ? left : rest;
            d += 'M';  // appended piece by piece: "M" + string trips GCC 12's false -Wrestrict at -O3
            d += P(f.pts[size_t(p)]);
            d += " L";
            d += P(f.pts[i]);
            d += ' ';
        }
        const double stroke = std::clamp(L_.s * 0.012, 1.0, 2.5), head_r = std::max(1.5, 0.07 * L_.s);
        std::string g = "<g class=\"figure\" data-view=\"" + std::string(side_view ? "side" : "top") + "\" data-frame=\"" +
                        std::to_string(f.frame + opts_.frame_number_offset) + "\" stroke=\"" + colour(k) + "\" stroke-width=\"" +
                        fmt("%.2f", stroke) + "\" stroke-linecap=\"round\" fill=\"none\">\n";
        if (!left.empty()) g += "<path stroke-opacity=\"0.45\" d=\"" + left + "\"/>\n";
        if (!rest.empty()) g += "<path d=\"" + rest + "\"/>\n";
        if (pt_.head >= 0) {
            const vec3& h = f.pts[size_t(pt_.head)];
            g += "<circle cx=\"" + num(L_.X(a_of(k, h))) + "\" cy=\"" + num(y_of(k, h, side_view)) + "\" r=\"" + num(head_r) + "\"/>\n";
        }
        return g + "</g>\n";
    }

    std::string root_path_line(bool side_view) const {
        if (!L_.travels) return std::string();
        std::string pts;
        const int step = std::max(1, clip_.frames / 2000);
        for (int f = 0; f < clip_.frames; f += step) {
            const vec3& p = pt_.root_path[size_t(f)];
            pts += num(L_.X(dot(p, L_.u))) + "," + num(side_view ? YS(p.y) : YT(dot(p, L_.v))) + " ";
        }
        return "<polyline class=\"root-path\" fill=\"none\" stroke=\"#bbb\" stroke-width=\"1\" points=\"" + pts + "\"/>\n";
    }

    void view_frame(double top, double h, const char* id) {
        o_ += std::string("<g class=\"view\" id=\"") + id + "\">\n";
        o_ += "<rect x=\"" + num(L_.margin) + "\" y=\"" + num(top) + "\" width=\"" + num(L_.width - 2 * L_.margin) + "\" height=\"" +
              num(h) + "\" fill=\"#fafafa\" stroke=\"#ddd\"/>\n";
    }

    void view_title(double y, const char* name, const std::string& text) {
        o_ += "<text x=\"" + num(L_.margin) + "\" y=\"" + num(y) + "\" font-size=\"12\" font-weight=\"bold\">" + name + "</text>";
        o_ += "<text x=\"" + num(L_.margin + 70) + "\" y=\"" + num(y) + "\" font-size=\"11\" fill=\"#444\">" + svg_escape(text) + "</text>\n";
    }

    void side_view() {
        view_title(side_top_ - 8, "side view", "horizontal: " + std::string(L_.travels ? "travel direction " : "") + dir_ + ", vertical: Y up");
        view_frame(side_top_, side_h_, "side-view");
        if (L_.ground)
            o_ += "<line class=\"ground\" x1=\"" + num(L_.margin) + "\" y1=\"" + num(YS(0)) + "\" x2=\"" + num(L_.width - L_.margin) +
                  "\" y2=\"" + num(YS(0)) + "\" stroke=\"#999\" stroke-dasharray=\"6,4\"/>\n";
        o_ += root_path_line(true);
        for (size_t k = 0; k < K_; ++k) o_ += figure_group(k, true);
        o_ += "</g>\n";
    }

    // Frame number and time under each side-view figure.
    void labels() {
        o_ += "<g class=\"labels\" font-size=\"10\" text-anchor=\"middle\">\n";
        for (size_t k = 0; k < K_; ++k) {
            if (L_.tier[k] < 0) continue;
            const int shown = pt_.figs[k].frame + opts_.frame_number_offset;
            const double x = L_.X(dot(pt_.figs[k].root, L_.u) + L_.shift_a[k]);
            const double y = labels_top_ + 11 + 26.0 * L_.tier[k];
            o_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" fill=\"" + colour(k) + "\">f " + std::to_string(shown) + "</text>";
            o_ += "<text x=\"" + num(x) + "\" y=\"" + num(y + 11) + "\" fill=\"" + colour(k) + "\">" +
                  fmt("%.2f s", shown * double(clip_.frame_dt)) + "</text>\n";
        }
        o_ += "</g>\n";
    }

    void top_view() {
        view_title(top_header_, "top view",
                   "looking down; horizontal " + dir_ + ", down the page (x, z) = (" + fmt("%.2f", L_.v.x) + ", " + fmt("%.2f", L_.v.z) + ")");
        view_frame(top_top_, top_h_, "top-view");
        o_ += root_path_line(false);
        for (size_t k = 0; k < K_; ++k) o_ += figure_group(k, false);
        o_ += "</g>\n";
    }

    void scale_bar() {
        const double m = L_.margin, s = L_.s, y = bar_y_;
        o_ += "<g class=\"scale-bar\" stroke=\"#000\" stroke-width=\"2\">\n<line x1=\"" + num(m) + "\" y1=\"" + num(y) + "\" x2=\"" +
              num(m + s) + "\" y2=\"" + num(y) + "\"/>\n<line x1=\"" + num(m) + "\" y1=\"" + num(y - 4) + "\" x2=\"" + num(m) +
              "\" y2=\"" + num(y + 4) + "\"/>\n<line x1=\"" + num(m + s) + "\" y1=\"" + num(y - 4) + "\" x2=\"" + num(m + s) +
              "\" y2=\"" + num(y + 4) + "\"/>\n</g>\n";
        o_ += "<text x=\"" + num(m + s + 8) + "\" y=\"" + num(y + 4) + "\" font-size=\"11\">1 m (" + fmt("%.0f", s) +
              " px; both views)</text>\n";
    }

    const Clip& clip_;
    const FilmstripOptions& opts_;
    const std::vector<int>& frames_;
    const Points& pt_;
    const Layout& L_;
    size_t K_;
    double side_top_, side_h_, labels_top_, top_header_, top_top_, top_h_, bar_y_;
    std::string dir_, o_;
};

}  // namespace

std::string render_filmstrip_svg(const Clip& clip, const FilmstripOptions& opts) {
    if (const std::string err = clip.skeleton.validate(); !err.empty())
        throw std::invalid_argument("filmstrip: bad skeleton: " + err);
    if (clip.joints() < 1) throw std::invalid_argument("filmstrip: the skeleton has no joints");
    if (!(opts.max_width > 0) || !(opts.px_per_metre > 0))
        throw std::invalid_argument("filmstrip: max_width and px_per_metre must be positive");
    const std::vector<int> frames = filmstrip_frames(clip.frames, opts);
    const Points pt = points_of(clip, opts, frames);
    Layout L;
    choose_axes(L, clip, pt);
    place_figures(L, pt);
    measure_ranges(L, pt, opts);
    place_labels(L, pt);
    return FilmstripWriter(clip, opts, frames, pt, L).write();
}

}  // namespace ks
