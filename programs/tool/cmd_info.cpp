// kinesync-tool info FILE: what a BVH file holds — joints, channel layout, frames, frame rate,
// duration, units (as the units rule detects them), root height and travel distance. Given a
// session recording (kinesync-server --record), its frames, ticks, characters and whether it is
// complete (not cut short by a crash).
#include <cstdio>
#include <fstream>
#include <spdlog/fmt/fmt.h>
#include <string>

#include <kinesync/offline/bvh.h>
#include <kinesync/offline/clip_info.h>
#include <kinesync/common/record/recording.h>
#include "programs/tool/commands.h"
#include "programs/tool/load_clip.h"

namespace ks::tool {

namespace {

bool is_recording(const std::string& path) {
    char magic[8] = {};
    std::ifstream f(path, std::ios::binary);
    return f.read(magic, sizeof magic) && std::string(magic, sizeof magic) == "KSREC001";
}

std::string recording_info(const std::string& path, bool json) {
    const RecordingReadResult r = read_recording(path);  // a bad file throws: non-zero exit with its message
    const uint32_t first = r.frames.empty() ? 0 : r.frames.front().tick, last = r.frames.empty() ? 0 : r.frames.back().tick;
    if (json) {
        auto quoted = [](const std::string& text) {
            std::string q;
            for (char c : text)
                if (c == '"' || c == '\\') q += std::string("\\") + c;
                else if (static_cast<unsigned char>(c) < 0x20) q += fmt::format("\\u{:04x}", int(c));
                else q += c;
            return q;
        };
        return fmt::format("{{\"recording\": \"{}\", \"scenario\": \"{}\", \"frames\": {}, \"first_tick\": {}, \"last_tick\": {}, \"tick_hz\": {}, "
                           "\"characters\": {}, \"skeletons\": {}, \"chunks\": {}, \"truncated\": {}}}\n",
                           quoted(path), quoted(r.header.scenario), r.frames.size(), first, last, r.header.tick_hz, r.header.characters.size(), r.header.skeletons.size(),
                           r.chunks, r.truncated ? "true" : "false");
    }
    return fmt::format("recording {}\n  scenario    {}\n  frames      {} (ticks {} to {})\n  tick rate   {} Hz\n  characters  {} ({} skeletons)\n"
                       "  chunks      {}\n  complete    {}\n",
                       path, r.header.scenario, r.frames.size(), first, last, r.header.tick_hz, r.header.characters.size(), r.header.skeletons.size(),
                       r.chunks, r.truncated ? "no: " + r.warning : "yes");
}

}  // namespace

void add_info_command(CLI::App& app) {
    auto* cmd = app.add_subcommand("info", "Describe a BVH file (joints, channels, frames, rate, units, root height, travel) or a session recording (frames, ticks, characters, complete)");
    static std::string file;
    static int skip = 0;
    static float units = 0.0f;
    static bool json = false;
    cmd->add_option("file", file, "BVH file or recording (.ksrec)")->required();
    cmd->add_option("--skip", skip, "drop this many leading frames (e.g. 1 for a T-pose frame)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--units", units, "metres per file unit (default: detected from the skeleton's size)")
        ->check(CLI::PositiveNumber);
    cmd->add_flag("--json", json, "print a JSON object instead of text");
    cmd->callback([] {
        if (is_recording(file)) {
            const std::string out = recording_info(file, json);
            std::fwrite(out.data(), 1, out.size(), stdout);
            return;
        }
        BvhOptions opts;
        opts.skip_frames = skip;
        opts.metres_per_unit = units;
        const ClipInfo info = describe_clip(load_clip_arg(file, opts));  // BvhError -> non-zero exit with its message
        const std::string out = json ? format_clip_info_json(info) : format_clip_info_text(info);
        std::fwrite(out.data(), 1, out.size(), stdout);
    });
}

}  // namespace ks::tool
