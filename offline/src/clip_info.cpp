#include <kinesync/offline/clip_info.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include <kinesync/common/anim/ops_fk.h>
#include "offline/src/text.h"

namespace ks {

namespace {

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::string rotation_order_of(const BvhChannels& c) {
    std::string s;
    for (const std::string& ch : c.channels)
        if (ch.size() == 9 && (ch.compare(1, 8, "rotation") == 0 || ch.compare(1, 8, "ROTATION") == 0)) s += char(std::toupper(ch[0]));
    return s;
}

bool has_position_channel(const BvhChannels& c) {
    for (const std::string& ch : c.channels)
        if (ch.size() == 9 && (ch.compare(1, 8, "position") == 0 || ch.compare(1, 8, "POSITION") == 0)) return true;
    return false;
}

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

std::string json_string_array(const std::vector<std::string>& v) {
    std::string o = "[";
    for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + json_string(v[i]);
    return o + "]";
}

}  // namespace

std::string units_rule_name(double mpu) {
    struct Named {
        double unit;
        const char* name;
    };
    static const Named names[] = {{1.0, "metres"},
                                  {0.0254 / 0.45, "CMU units (1/0.45 in)"},
                                  {0.0254, "inches"},
                                  {0.01, "centimetres"},
                                  {0.001, "millimetres"}};
    for (const Named& n : names)
        if (std::fabs(mpu - n.unit) <= 1e-6 * n.unit) return n.name;
    return "custom (" + fmt("%g", mpu) + " m/unit)";
}

ClipInfo describe_clip(const BvhFile& file) {
    const Clip& c = file.clip;
    ClipInfo info;
    info.name = c.name;
    info.joint_names = c.skeleton.names;
    info.parents = c.skeleton.parents;
    info.end_sites = int(file.end_sites.size());
    for (const BvhChannels& ch : file.layout) {
        info.channels_per_frame += int(ch.channels.size());
        const std::string order = rotation_order_of(ch);
        auto it = std::find_if(info.rotation_orders.begin(), info.rotation_orders.end(),
                               [&](const auto& p) { return p.first == order; });
        if (it == info.rotation_orders.end()) {
            info.rotation_orders.push_back({order, {}});
            it = info.rotation_orders.end() - 1;
        }
        it->second.push_back(ch.joint);
        if (has_position_channel(ch)) info.position_channel_joints.push_back(ch.joint);
    }

    info.frames = c.frames;
    info.frames_in_file = file.frames_in_file;
    info.skipped_frames = file.frames_in_file - c.frames;
    info.frame_dt = c.frame_dt;
    info.frame_rate = c.frame_dt > 0 ? 1.0 / double(c.frame_dt) : 0.0;
    info.duration = c.duration();

    const double mpu = c.metres_per_unit;
    info.metres_per_unit = mpu;
    info.detected_metres_per_unit = file.detected_metres_per_unit;
    info.units_overridden = c.metres_per_unit != file.detected_metres_per_unit;
    info.units_name = units_rule_name(mpu);
    info.detected_units_name = units_rule_name(file.detected_metres_per_unit);

    const int nj = c.joints();
    if (nj < 1 || c.frames < 1) return info;

    // Figure height: median vertical extent over up to 16 frames.
    {
        Pose local(nj), global(nj);
        std::vector<double> extents;
        const int n = std::min(16, c.frames);
        for (int i = 0; i < n; ++i) {
            const int f = n == 1 ? 0 : int(std::lround(double(i) * double(c.frames - 1) / double(n - 1)));
            for (int j = 0; j < nj; ++j) {
                local.pos[size_t(j)] = c.pos(f, j);
                local.rot[size_t(j)] = c.rot(f, j);
                local.scl[size_t(j)] = c.scl(f, j);
            }
            op_fk_static(global, local, c.skeleton.parents);
            double lo = 1e300, hi = -1e300;
            for (int j = 0; j < nj; ++j) {
                lo = std::min(lo, double(global.pos[size_t(j)].y));
                hi = std::max(hi, double(global.pos[size_t(j)].y));
            }
            extents.push_back(hi - lo);
        }
        info.figure_height_units = median_of(extents);
        info.figure_height_m = info.figure_height_units * mpu;
    }

    // Root height and travel.
    info.root_name = c.skeleton.names[0];
    std::vector<double> heights;
    heights.reserve(size_t(c.frames));
    double path = 0;
    for (int f = 0; f < c.frames; ++f) {
        const vec3 p = c.pos(f, 0);
        heights.push_back(p.y);
        if (f > 0) {
            const vec3 q = c.pos(f - 1, 0);
            path += std::hypot(double(p.x) - q.x, double(p.z) - q.z);
        }
    }
    info.root_height_min = *std::min_element(heights.begin(), heights.end());
    info.root_height_max = *std::max_element(heights.begin(), heights.end());
    info.root_height_median = median_of(heights);
    info.root_height_min_m = info.root_height_min * mpu;
    info.root_height_median_m = info.root_height_median * mpu;
    info.root_height_max_m = info.root_height_max * mpu;
    const vec3 a = c.pos(0, 0), b = c.pos(c.frames - 1, 0);
    const double dx = double(b.x) - a.x, dz = double(b.z) - a.z;
    const double disp = std::hypot(dx, dz);
    info.path_length_m = path * mpu;
    info.displacement_m = disp * mpu;
    if (disp > 0) {
        info.heading_x = dx / disp;
        info.heading_z = dz / disp;
    }
    info.average_speed_mps = info.duration > 0 ? info.displacement_m / info.duration : 0.0;
    return info;
}

std::string format_clip_info_text(const ClipInfo& in) {
    std::string o;
    auto line = [&](const std::string& label, const std::string& value) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%-13s", label.c_str());
        o += buf + value + "\n";
    };
    line("file", in.name);

    // Joints, indented by depth.
    const int nj = int(in.joint_names.size());
    int roots = 0;
    for (int p : in.parents) roots += p < 0;
    line("joints", std::to_string(nj) + " (" + std::to_string(roots) + (roots == 1 ? " root" : " roots") + ", " +
                       std::to_string(in.end_sites) + " End Sites)");
    std::vector<int> depth(size_t(nj), 0);
    for (int j = 0; j < nj; ++j) {
        const int p = in.parents[size_t(j)];
        depth[size_t(j)] = p < 0 ? 0 : depth[size_t(p)] + 1;
        std::string s = "  ";
        char idx[16];
        std::snprintf(idx, sizeof idx, "%3d  ", j);
        s += idx;
        s += std::string(size_t(2 * depth[size_t(j)]), ' ') + in.joint_names[size_t(j)];
        s += p < 0 ? "  (root)" : "  <- " + in.joint_names[size_t(p)];
        o += s + "\n";
    }

    // Channels.
    std::string orders;
    size_t largest = 0;
    for (const auto& g : in.rotation_orders) largest = std::max(largest, g.second.size());
    bool largest_named = false;
    for (const auto& g : in.rotation_orders) {
        if (!orders.empty()) orders += "; ";
        orders += (g.first.empty() ? std::string("none") : g.first) + " " + std::to_string(g.second.size()) +
                  (g.second.size() == 1 ? " joint" : " joints");
        // Name the joints of every group but the (first) largest one.
        if (in.rotation_orders.size() > 1 && (g.second.size() != largest || largest_named)) {
            orders += " (";
            for (size_t k = 0; k < g.second.size(); ++k) orders += (k ? ", " : "") + g.second[k];
            orders += ")";
        } else if (g.second.size() == largest) {
            largest_named = true;
        }
    }
    line("channels", std::to_string(in.channels_per_frame) + " per frame");
    line("  rotation", orders.empty() ? "none" : orders);
    std::string pos;
    for (size_t k = 0; k < in.position_channel_joints.size(); ++k) pos += (k ? ", " : "") + in.position_channel_joints[k];
    line("  position", pos.empty() ? "none" : pos);

    // Timing.
    line("frames", std::to_string(in.frames) +
                       (in.skipped_frames > 0 ? " (" + std::to_string(in.skipped_frames) + " leading frame" +
                                                    (in.skipped_frames == 1 ? "" : "s") + " of " +
                                                    std::to_string(in.frames_in_file) + " skipped)"
                                              : ""));
    line("frame rate", fmt("%.2f fps", in.frame_rate) + " (frame time " + fmt("%.7g", in.frame_dt) + " s)");
    line("duration", fmt("%.3f s", in.duration) + " (first to last frame)");

    // Units.
    std::string units = fmt("%.6g m/unit, ", in.metres_per_unit) + in.units_name;
    units += in.units_overridden ? " (given; the units rule detects " + fmt("%.6g", in.detected_metres_per_unit) +
                                       ", " + in.detected_units_name + ")"
                                 : " (detected)";
    line("units", units);
    line("figure", fmt("%.2f m", in.figure_height_m) + " (" + fmt("%.2f", in.figure_height_units) +
                       " units): median vertical extent of the joints, End Sites excluded");

    // Root.
    line("root height", in.root_name + ": min / median / max " + fmt("%.3f", in.root_height_min_m) + " / " +
                            fmt("%.3f", in.root_height_median_m) + " / " + fmt("%.3f", in.root_height_max_m) + " m (" +
                            fmt("%.2f", in.root_height_min) + " / " + fmt("%.2f", in.root_height_median) + " / " +
                            fmt("%.2f", in.root_height_max) + " units)");
    std::string travel = "root horizontal path " + fmt("%.3f m", in.path_length_m) + ", straight line " +
                         fmt("%.3f m", in.displacement_m);
    if (in.displacement_m > 0)
        travel += " toward (x, z) = (" + fmt("%.2f", in.heading_x) + ", " + fmt("%.2f", in.heading_z) + "), " +
                  fmt("%.2f m/s", in.average_speed_mps) + " on average";
    line("travel", travel);
    return o;
}

std::string format_clip_info_json(const ClipInfo& in) {
    std::string o = "{\n";
    auto field = [&](const char* key, const std::string& value, bool last = false) {
        o += "  " + json_string(key) + ": " + value + (last ? "\n" : ",\n");
    };
    field("file", json_string(in.name));
    std::string joints = "[";
    for (size_t j = 0; j < in.joint_names.size(); ++j) {
        const int p = in.parents[j];
        joints += std::string(j ? ",\n    " : "\n    ") + "{\"index\": " + std::to_string(j) +
                  ", \"name\": " + json_string(in.joint_names[j]) + ", \"parent\": " + std::to_string(p) +
                  ", \"parent_name\": " + (p < 0 ? std::string("null") : json_string(in.joint_names[size_t(p)])) + "}";
    }
    joints += in.joint_names.empty() ? "]" : "\n  ]";
    field("joint_count", std::to_string(in.joint_names.size()));
    field("joints", joints);
    field("end_sites", std::to_string(in.end_sites));
    field("channels_per_frame", std::to_string(in.channels_per_frame));
    std::string orders = "[";
    for (size_t k = 0; k < in.rotation_orders.size(); ++k)
        orders += std::string(k ? ", " : "") + "{\"order\": " + json_string(in.rotation_orders[k].first) +
                  ", \"joints\": " + json_string_array(in.rotation_orders[k].second) + "}";
    field("rotation_orders", orders + "]");
    field("position_channel_joints", json_string_array(in.position_channel_joints));
    field("frames", std::to_string(in.frames));
    field("frames_in_file", std::to_string(in.frames_in_file));
    field("skipped_frames", std::to_string(in.skipped_frames));
    field("frame_time_s", json_number(in.frame_dt));
    field("frame_rate_fps", json_number(in.frame_rate));
    field("duration_s", json_number(in.duration));
    field("metres_per_unit", json_number(in.metres_per_unit));
    field("units", json_string(in.units_name));
    field("units_overridden", in.units_overridden ? "true" : "false");
    field("detected_metres_per_unit", json_number(in.detected_metres_per_unit));
    field("detected_units", json_string(in.detected_units_name));
    field("figure_height_m", json_number(in.figure_height_m));
    field("root", json_string(in.root_name));
    field("root_height_m", "{\"min\": " + json_number(in.root_height_min_m) + ", \"median\": " +
                               json_number(in.root_height_median_m) + ", \"max\": " + json_number(in.root_height_max_m) + "}");
    field("root_height_units", "{\"min\": " + json_number(in.root_height_min) + ", \"median\": " +
                                   json_number(in.root_height_median) + ", \"max\": " + json_number(in.root_height_max) + "}");
    field("travel_path_m", json_number(in.path_length_m));
    field("travel_displacement_m", json_number(in.displacement_m));
    // std::string first: "[" + string trips GCC 12's false -Wrestrict at -O3.
    field("travel_heading_xz", std::string("[") + json_number(in.heading_x) + ", " + json_number(in.heading_z) + "]");
    field("average_speed_mps", json_number(in.average_speed_mps), true);
    return o + "}\n";
}

}  // namespace ks
