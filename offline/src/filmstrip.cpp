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

std::string render_filmstrip_svg(const Clip& clip, const FilmstripOptions& opts) {
    if (const std::string err = clip.skeleton.validate(); !err.empty())
        throw std::invalid_argument("filmstrip: bad skeleton: " + err);
    const int nj = clip.joints();
    if (nj < 1) throw std::invalid_argument("filmstrip: the skeleton has no joints");
    if (!(opts.max_width > 0) || !(opts.px_per_metre > 0))
        throw std::invalid_argument("filmstrip: max_width and px_per_metre must be positive");
    const std::vector<int> frames = filmstrip_frames(clip.frames, opts);
    const double mpu = clip.metres_per_unit > 0 ? clip.metres_per_unit : 1.0;

    // Points: joints, then End Sites; parents, sides, head.
    const std::vector<vec3> no_sites;
    const std::vector<vec3>& sites = opts.end_sites ? *opts.end_sites : no_sites;
    std::vector<int> parent(size_t(nj) + sites.size());
    std::vector<int> side(parent.size(), 0);
    int head = -1;
    for (int j = 0; j < nj; ++j) {
        const int p = clip.skeleton.parents[size_t(j)];
        parent[size_t(j)] = p;
        side[size_t(j)] = side_of_name(clip.skeleton.names[size_t(j)]);
        if (side[size_t(j)] == 0 && p >= 0) side[size_t(j)] = side[size_t(p)];
        if (head < 0 && is_head(clip.skeleton.names[size_t(j)])) head = j;
    }
    for (size_t e = 0; e < sites.size(); ++e) {
        const int p = opts.end_site_parents && e < opts.end_site_parents->size() ? (*opts.end_site_parents)[e] : -1;
        if (p < 0 || p >= nj) throw std::invalid_argument("filmstrip: End Site without a valid parent joint");
        parent[size_t(nj) + e] = p;
        side[size_t(nj) + e] = side[size_t(p)];
    }

    // Global positions of the drawn frames (metres).
    std::vector<Figure> figs;
    {
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
                const size_t p = size_t(parent[size_t(nj) + e]);
                fig.pts.push_back((global.pos[p] + quat_mul_vec3(global.rot[p], sites[e] * global.scl[p])) * float(mpu));
            }
            fig.root = fig.pts[0];
            figs.push_back(std::move(fig));
        }
    }
    for (const Figure& f : figs)
        for (const vec3& p : f.pts)
            if (!isfinite(p)) throw std::invalid_argument("filmstrip: non-finite joint position at frame " + std::to_string(f.frame));

    // Travel direction and mode.
    std::vector<vec3> root_path;  // metres, every frame
    root_path.reserve(size_t(clip.frames));
    for (int f = 0; f < clip.frames; ++f) root_path.push_back(clip.pos(f, 0) * float(mpu));
    const vec3 disp3 = root_path.back() - root_path.front();
    const double disp = std::hypot(double(disp3.x), double(disp3.z));
    double path = 0;
    {
        const int step = std::max(1, int(std::lround(0.1 / std::max(1e-6, double(clip.frame_dt)))));
        vec3 prev = root_path.front();
        for (int f = step; f < clip.frames + step; f += step) {
            const vec3 p = root_path[size_t(std::min(f, clip.frames - 1))];
            path += std::hypot(double(p.x) - prev.x, double(p.z) - prev.z);
            prev = p;
            if (f >= clip.frames - 1) break;
        }
    }
    const size_t K = figs.size();
    bool travels = disp >= 1.0 && disp >= 0.7 * path;
    vec3 u = travels ? vec3{float(disp3.x / disp), 0.0f, float(disp3.z / disp)} : vec3{1, 0, 0};
    vec3 v{-u.z, 0.0f, u.x};  // u x Y: down the page in the top view
    // The drawn figures must also advance: no step along u shorter than a quarter of the average
    // step (a clip that travels but pauses or turns on the spot stacks its figures otherwise).
    if (travels && K > 1) {
        const double avg = (dot(figs.back().root, u) - dot(figs.front().root, u)) / double(K - 1);
        for (size_t k = 1; k < K && travels; ++k)
            travels = dot(figs[k].root, u) - dot(figs[k - 1].root, u) >= 0.25 * avg && avg > 0;
    }

    if (!travels) u = vec3{1, 0, 0}, v = vec3{0, 0, 1};

    // Per-figure shifts (side by side) and ranges.
    std::vector<double> shift_a(K, 0.0), shift_b(K, 0.0);
    if (!travels) {
        double left = 0, right = 0;
        for (const Figure& f : figs) {
            const double ra = dot(f.root, u);
            for (const vec3& p : f.pts) {
                left = std::max(left, ra - dot(p, u));
                right = std::max(right, dot(p, u) - ra);
            }
        }
        const double spacing = std::max(0.4, left + right + 0.15);
        for (size_t k = 0; k < K; ++k) {
            shift_a[k] = double(k) * spacing - dot(figs[k].root, u);
            shift_b[k] = -dot(figs[k].root, v);
        }
    }
    double a_lo = 1e300, a_hi = -1e300, y_lo = 1e300, y_hi = -1e300, b_lo = 1e300, b_hi = -1e300;
    for (size_t k = 0; k < K; ++k)
        for (const vec3& p : figs[k].pts) {
            const double a = dot(p, u) + shift_a[k], b = dot(p, v) + shift_b[k];
            a_lo = std::min(a_lo, a), a_hi = std::max(a_hi, a);
            b_lo = std::min(b_lo, b), b_hi = std::max(b_hi, b);
            y_lo = std::min(y_lo, double(p.y)), y_hi = std::max(y_hi, double(p.y));
        }
    if (travels)
        for (const vec3& p : root_path) {
            a_lo = std::min(a_lo, double(dot(p, u))), a_hi = std::max(a_hi, double(dot(p, u)));
            b_lo = std::min(b_lo, double(dot(p, v))), b_hi = std::max(b_hi, double(dot(p, v)));
        }
    if (y_lo > 0 && y_lo < 0.25) y_lo = 0;  // show the floor when the feet are near it
    const bool ground = y_lo <= 0 && y_hi >= 0;
    // Keep the views from collapsing (a single joint, a flat figure).
    auto widen = [](double& lo, double& hi, double min_extent) {
        if (hi - lo < min_extent) {
            const double c = 0.5 * (lo + hi);
            lo = c - 0.5 * min_extent;
            hi = c + 0.5 * min_extent;
        }
    };
    widen(a_lo, a_hi, 0.5);
    widen(y_lo, y_hi, 0.3);
    widen(b_lo, b_hi, 0.2);
    const double pad = 0.1;  // m around each view
    const double margin = 20;
    const double s = std::min(opts.px_per_metre, (opts.max_width - 2 * margin) / (a_hi - a_lo + 2 * pad));
    const double width = std::max(520.0, 2 * margin + (a_hi - a_lo + 2 * pad) * s);

    // Label tiers under the side view: a label moves down a tier (up to 3) when it would touch the
    // previous one; when no tier has room, that figure's label is left out (-1).
    const double label_w = 46;
    std::vector<int> tier(K, 0);
    std::vector<double> last_x(3, -1e300);
    int tiers = 1;
    auto X = [&](double a) { return margin + (a - a_lo + pad) * s; };
    for (size_t k = 0; k < K; ++k) {
        const double x = X(dot(figs[k].root, u) + shift_a[k]);
        int t = 0;
        while (t < 3 && std::fabs(x - last_x[size_t(t)]) < label_w) ++t;
        if (t == 3) {
            tier[k] = -1;
            continue;
        }
        tier[k] = t;
        last_x[size_t(t)] = x;
        tiers = std::max(tiers, t + 1);
    }

    const double side_top = 76, side_h = (y_hi - y_lo + 2 * pad) * s;
    const double labels_top = side_top + side_h + 4, labels_h = tiers * 26.0 + 4;
    const double top_header = labels_top + labels_h + 16, top_top = top_header + 8;
    const double top_h = (b_hi - b_lo + 2 * pad) * s;
    const double bar_y = top_top + top_h + 22;
    const double height = bar_y + 22;
    auto YS = [&](double y) { return side_top + (y_hi + pad - y) * s; };
    auto YT = [&](double b) { return top_top + (b - b_lo + pad) * s; };
    const double stroke = std::clamp(s * 0.012, 1.0, 2.5);
    const double head_r = std::max(1.5, 0.07 * s);

    std::string o;
    o.reserve(K * (size_t(nj) + sites.size()) * 60 + 4096);
    o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) +
         "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
         "\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    const std::string title = opts.title.empty() ? basename_of(clip.name) : opts.title;
    o += "<text x=\"" + num(margin) + "\" y=\"26\" font-size=\"15\" font-weight=\"bold\">" + svg_escape(title) + "</text>\n";
    std::string sub = std::to_string(K) + (K == 1 ? " figure" : " figures") + " of " + std::to_string(clip.frames) +
                      " frames at " + fmt("%.4g", 1.0 / double(clip.frame_dt)) + " fps";
    if (K > 1) {
        const int step = frames[1] - frames[0];
        bool uniform = true;
        for (size_t k = 2; k < K; ++k) uniform = uniform && frames[k] - frames[k - 1] == step;
        sub += uniform ? ", every " + std::to_string(step) + " frames (" + fmt("%.3g s", step * double(clip.frame_dt)) + ")"
                       : ", spread evenly";
    }
    sub += travels ? "; placed along the root's real travel (" + fmt("%.2f m", disp) + ")"
                   : "; side by side, each centred on its root (travel " + fmt("%.2f m", disp) + ")";
    o += "<text x=\"" + num(margin) + "\" y=\"44\" font-size=\"11\" fill=\"#444\">" + svg_escape(sub) + "</text>\n";

    auto figure_group = [&](size_t k, bool side_view) {
        const Figure& f = figs[k];
        const std::string col = colour_at(K > 1 ? double(k) / double(K - 1) : 0.0);
        auto P = [&](const vec3& p) {
            const double a = dot(p, u) + shift_a[k];
            return num(X(a)) + " " + num(side_view ? YS(p.y) : YT(dot(p, v) + shift_b[k]));
        };
        std::string left, rest;
        for (size_t i = 0; i < f.pts.size(); ++i) {
            const int p = parent[i];
            if (p < 0) continue;
            std::string& d = side[i] < 0 ? left : rest;
            d += 'M';  // appended piece by piece: "M" + string trips GCC 12's false -Wrestrict at -O3
            d += P(f.pts[size_t(p)]);
            d += " L";
            d += P(f.pts[i]);
            d += ' ';
        }
        std::string g = "<g class=\"figure\" data-view=\"" + std::string(side_view ? "side" : "top") + "\" data-frame=\"" +
                        std::to_string(f.frame + opts.frame_number_offset) + "\" stroke=\"" + col + "\" stroke-width=\"" +
                        fmt("%.2f", stroke) + "\" stroke-linecap=\"round\" fill=\"none\">\n";
        if (!left.empty()) g += "<path stroke-opacity=\"0.45\" d=\"" + left + "\"/>\n";
        if (!rest.empty()) g += "<path d=\"" + rest + "\"/>\n";
        if (head >= 0) {
            const vec3& h = f.pts[size_t(head)];
            const double a = dot(h, u) + shift_a[k];
            g += "<circle cx=\"" + num(X(a)) + "\" cy=\"" + num(side_view ? YS(h.y) : YT(dot(h, v) + shift_b[k])) +
                 "\" r=\"" + num(head_r) + "\"/>\n";
        }
        return g + "</g>\n";
    };
    auto root_path_line = [&](bool side_view) {
        if (!travels) return std::string();
        std::string pts;
        const int step = std::max(1, clip.frames / 2000);
        for (int f = 0; f < clip.frames; f += step) {
            const vec3& p = root_path[size_t(f)];
            pts += num(X(dot(p, u))) + "," + num(side_view ? YS(p.y) : YT(dot(p, v))) + " ";
        }
        return "<polyline class=\"root-path\" fill=\"none\" stroke=\"#bbb\" stroke-width=\"1\" points=\"" + pts + "\"/>\n";
    };

    // Side view.
    const std::string dir = "(x, z) = (" + fmt("%.2f", u.x) + ", " + fmt("%.2f", u.z) + ")";
    o += "<text x=\"" + num(margin) + "\" y=\"" + num(side_top - 8) + "\" font-size=\"12\" font-weight=\"bold\">side view</text>";
    o += "<text x=\"" + num(margin + 70) + "\" y=\"" + num(side_top - 8) + "\" font-size=\"11\" fill=\"#444\">" +
         svg_escape("horizontal: " + std::string(travels ? "travel direction " : "") + dir + ", vertical: Y up") + "</text>\n";
    o += "<g class=\"view\" id=\"side-view\">\n";
    o += "<rect x=\"" + num(margin) + "\" y=\"" + num(side_top) + "\" width=\"" + num(width - 2 * margin) + "\" height=\"" +
         num(side_h) + "\" fill=\"#fafafa\" stroke=\"#ddd\"/>\n";
    if (ground)
        o += "<line class=\"ground\" x1=\"" + num(margin) + "\" y1=\"" + num(YS(0)) + "\" x2=\"" + num(width - margin) +
             "\" y2=\"" + num(YS(0)) + "\" stroke=\"#999\" stroke-dasharray=\"6,4\"/>\n";
    o += root_path_line(true);
    for (size_t k = 0; k < K; ++k) o += figure_group(k, true);
    o += "</g>\n";

    // Labels: frame number and time under each side-view figure.
    o += "<g class=\"labels\" font-size=\"10\" text-anchor=\"middle\">\n";
    for (size_t k = 0; k < K; ++k) {
        if (tier[k] < 0) continue;
        const int shown = figs[k].frame + opts.frame_number_offset;
        const double x = X(dot(figs[k].root, u) + shift_a[k]);
        const double y = labels_top + 11 + 26.0 * tier[k];
        const std::string col = colour_at(K > 1 ? double(k) / double(K - 1) : 0.0);
        o += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" fill=\"" + col + "\">f " + std::to_string(shown) + "</text>";
        o += "<text x=\"" + num(x) + "\" y=\"" + num(y + 11) + "\" fill=\"" + col + "\">" +
             fmt("%.2f s", shown * double(clip.frame_dt)) + "</text>\n";
    }
    o += "</g>\n";

    // Top view.
    o += "<text x=\"" + num(margin) + "\" y=\"" + num(top_header) + "\" font-size=\"12\" font-weight=\"bold\">top view</text>";
    o += "<text x=\"" + num(margin + 70) + "\" y=\"" + num(top_header) + "\" font-size=\"11\" fill=\"#444\">" +
         svg_escape("looking down; horizontal " + dir + ", down the page (x, z) = (" + fmt("%.2f", v.x) + ", " +
                    fmt("%.2f", v.z) + ")") +
         "</text>\n";
    o += "<g class=\"view\" id=\"top-view\">\n";
    o += "<rect x=\"" + num(margin) + "\" y=\"" + num(top_top) + "\" width=\"" + num(width - 2 * margin) + "\" height=\"" +
         num(top_h) + "\" fill=\"#fafafa\" stroke=\"#ddd\"/>\n";
    o += root_path_line(false);
    for (size_t k = 0; k < K; ++k) o += figure_group(k, false);
    o += "</g>\n";

    // 1 m scale bar.
    o += "<g class=\"scale-bar\" stroke=\"#000\" stroke-width=\"2\">\n<line x1=\"" + num(margin) + "\" y1=\"" + num(bar_y) +
         "\" x2=\"" + num(margin + s) + "\" y2=\"" + num(bar_y) + "\"/>\n<line x1=\"" + num(margin) + "\" y1=\"" +
         num(bar_y - 4) + "\" x2=\"" + num(margin) + "\" y2=\"" + num(bar_y + 4) + "\"/>\n<line x1=\"" + num(margin + s) +
         "\" y1=\"" + num(bar_y - 4) + "\" x2=\"" + num(margin + s) + "\" y2=\"" + num(bar_y + 4) + "\"/>\n</g>\n";
    o += "<text x=\"" + num(margin + s + 8) + "\" y=\"" + num(bar_y + 4) + "\" font-size=\"11\">1 m (" +
         fmt("%.0f", s) + " px; both views)</text>\n";
    o += "</svg>\n";
    return o;
}

}  // namespace ks
