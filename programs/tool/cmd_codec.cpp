// kinesync-tool codec [CLIPS...]: the codec's figures per clip, counted from the snapshot payload
// bytes the server's builder emits: 30 Hz snapshots (60 Hz ticks), 1 % loss both ways, 100 ms
// round trip, 20 s per clip played in place, each clip alone on its link (but in the last row).
// Bits per joint divide the payload (framing included, envelope excluded) by joints x snapshots;
// per moving joint by the joints whose local pose changes anywhere in the clip. FK error: every
// joint's world position decoded vs the original, cm. With --rigs, also the game and stress rigs
// (kinesync/offline/game_rig.h) grown from the walk clip, and 8 walks sharing one link. kB/s:
// what the datagrams take on a sealed session's wire, per character.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <kinesync/offline/game_rig.h>
#include <kinesync/offline/looping.h>
#include "programs/tool/commands.h"
#include "programs/tool/load_clip.h"
#include "tests/support/codec_sim.h"
#include "tests/support/mocap.h"

namespace ks::tool {

namespace {

struct Row {
    std::string name;
    int joints = 0, moving = 0;
    double bits = 0, bits_moving = 0, fk_mean = 0, fk_p99 = 0, fk_max = 0, kbytes_per_s = 0;
    uint64_t mismatches = 0;
    double category[CodingCost::kCount] = {};  // delta bits per joint: flags, angular velocity, rotation, position
};

int moving_joints(const Clip& c) {
    int n = 0;
    for (int j = 0; j < c.joints(); ++j)
        for (int f = 1; f < c.frames; ++f)
            if (std::fabs(quat_dot(c.rot(f, j), c.rot(0, j))) < 1.0f - 1e-7f || length(c.pos(f, j) - c.pos(0, j)) > 1e-6f) {
                ++n;
                break;
            }
    return n;
}

// `copies` of the clip on one link, each 0.37 s on in its loop: they share datagrams,
// and kB/s is per character (what one costs in a crowd, the per-datagram headers shared).
Row measure(const std::string& name, const Clip& raw, const CodecSettings& settings, int rtt_ticks, double start_s, int copies = 1) {
    LoopOptions lo;
    lo.root = RootMode::Fix;  // in place: the figures are about the joints, not root travel
    const Clip c = make_loop(raw, lo);
    const std::vector<const Clip*> clips(size_t(copies), &c);
    const test::SimResult r = test::simulate(clips, 20.0, 30.0f, test::LinkSim{0.01f, 0.01f, 0.0f, rtt_ticks, 2, 9}, {}, settings, start_s);
    Row row{name, c.joints(), moving_joints(c)};
    row.bits = r.payload_bits_per_joint;
    row.bits_moving = r.payload_bits_per_joint * double(c.joints()) / double(std::max(1, row.moving));
    std::vector<double> e = r.fk_err_cm;
    std::sort(e.begin(), e.end());
    for (double x : e) row.fk_mean += x / double(e.size());
    if (!e.empty()) {
        row.fk_p99 = e[size_t(0.99 * double(e.size()))];
        row.fk_max = e.back();
    }
    row.kbytes_per_s = r.bytes_per_s / 1000.0 / double(copies);
    row.mismatches = r.mismatches;
    std::copy(std::begin(r.delta_category_bits_per_joint), std::end(r.delta_category_bits_per_joint), std::begin(row.category));
    return row;
}

void print(const std::vector<Row>& rows) {
    std::printf("%-40s %6s %6s %8s %8s %8s %8s %8s %7s | %5s %5s %5s %5s\n", "clip", "joints", "moving", "bits/jt", "bits/mv",
                "FK mean", "FK p99", "FK max", "kB/s", "flags", "ang", "rot", "pos");
    for (const Row& r : rows)
        std::printf("%-40s %6d %6d %8.2f %8.2f %8.3f %8.3f %8.3f %7.2f | %5.2f %5.2f %5.2f %5.2f%s\n", r.name.c_str(), r.joints, r.moving,
                    r.bits, r.bits_moving, r.fk_mean, r.fk_p99, r.fk_max, r.kbytes_per_s, r.category[0], r.category[1], r.category[2],
                    r.category[3], r.mismatches ? "  (decoded states differ!)" : "");
    std::printf("(bits per joint per snapshot from the payload bytes sent, per moving joint; FK error in cm; kB/s on a sealed session's\n"
                " wire: IPv4/UDP headers, the seal, the snapshot header and the payload, per character (alone on its link but in the crowd's\n"
                " row); then where a delta's coded bits go per joint: flags, angular velocity, rotation, position)\n");
}

void write_json(const std::string& path, const std::vector<Row>& rows) {
    std::ofstream f(path);
    if (!f) throw std::runtime_error(path + ": cannot write");
    f << "[\n";
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        f << "  {\"clip\": \"" << r.name << "\", \"joints\": " << r.joints << ", \"moving_joints\": " << r.moving
          << ", \"bits_per_joint\": " << r.bits << ", \"bits_per_moving_joint\": " << r.bits_moving << ", \"fk_mean_cm\": " << r.fk_mean
          << ", \"fk_p99_cm\": " << r.fk_p99 << ", \"fk_max_cm\": " << r.fk_max << ", \"kbytes_per_s\": " << r.kbytes_per_s
          << ", \"mismatches\": " << r.mismatches << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
    }
    f << "]\n";
}

}  // namespace

void add_codec_command(CLI::App& app) {
    auto* cmd = app.add_subcommand("codec", "The codec's bits per joint and FK error per clip (30 Hz, 1% loss, 100 ms round trip)");
    static std::vector<std::string> clips;
    static std::string json;
    static bool rigs = false;
    static CodecSettings settings;
    static int rtt_ticks = 6;
    static double start_s = 0.0;
    cmd->add_option("CLIPS", clips, "BVH files or folders, or builtin:NAME (default: every clip in the shared mocap folder)");
    cmd->add_flag("--rigs", rigs, "also the game (250 joints) and stress (1,000 joints) rigs grown from the walk clip, and 8 walks on one link");
    cmd->add_option("--json", json, "also write the rows as JSON here");
    cmd->add_option("--rot-error", settings.rot_error_m, "trade-off: rotation step as the worst position error at a joint's reach, m")
        ->capture_default_str()->check(CLI::Range(1e-5f, 1.0f));
    cmd->add_option("--ang-error", settings.ang_error_mps, "trade-off: angular-velocity step x reach, m/s")
        ->capture_default_str()->check(CLI::Range(1e-4f, 10.0f));
    cmd->add_option("--leaf-rot-error", settings.leaf_rot_error_rad, "trade-off: leaf joints' rotation step, rad")
        ->capture_default_str()->check(CLI::Range(1e-5f, 1.0f));
    cmd->add_option("--leaf-ang-step", settings.leaf_ang_step, "trade-off: leaf joints' angular-velocity step, rad/s")
        ->capture_default_str()->check(CLI::Range(1e-3f, 100.0f));
    cmd->add_option("--rtt-ticks", rtt_ticks, "the link's round trip in 60 Hz ticks (6: 100 ms)")->capture_default_str()->check(CLI::Range(0, 60));
    cmd->add_option("--start", start_s, "clip time of the first sample, s (0: 60 Hz ticks land on a 120 fps capture's frames)")
        ->capture_default_str()->check(CLI::Range(0.0, 3600.0));
    cmd->callback([] {
        std::vector<std::string> files;
        for (const std::string& c : clips.empty() ? std::vector<std::string>{test::mocap_dir()} : clips) {
            if (!std::filesystem::is_directory(c)) {
                files.push_back(c);
                continue;
            }
            for (const auto& e : std::filesystem::directory_iterator(c))
                if (e.path().extension() == ".bvh") files.push_back(e.path().string());
        }
        std::sort(files.begin(), files.end());
        BvhOptions bo;
        bo.skip_frames = 1;  // the CMU files' leading T-pose
        std::vector<Row> rows;
        Clip walk = builtin_clip("walk");
        for (const std::string& f : files) {
            const Clip c = load_clip_arg(f, bo).clip;
            if (f.find("walk") != std::string::npos) walk = c;
            rows.push_back(measure(std::filesystem::path(f).filename().string(), c, settings, rtt_ticks, start_s));
        }
        if (rigs) {
            const std::string of = " (" + std::filesystem::path(walk.name).filename().string() + ")";
            rows.push_back(measure("game rig" + of, make_game_rig(walk), settings, rtt_ticks, start_s));
            rows.push_back(measure("stress rig" + of, make_stress_rig(walk), settings, rtt_ticks, start_s));
            rows.push_back(measure("8 walks on one link" + of, walk, settings, rtt_ticks, start_s, 8));
        }
        print(rows);
        if (!json.empty()) write_json(json, rows);
    });
}

}  // namespace ks::tool
