// kinesync-tool info FILE: what a BVH file holds — joints, channel layout, frames, frame rate,
// duration, units (as the units rule detects them), root height and travel distance.
#include <cstdio>
#include <string>

#include "common/io/bvh.h"
#include "common/io/clip_info.h"
#include "server/tool/commands.h"
#include "server/tool/load_clip.h"

namespace ks::tool {

void add_info_command(CLI::App& app) {
    auto* cmd = app.add_subcommand("info", "Describe a BVH file: joints, channels, frames, rate, units, root height, travel");
    static std::string file;
    static int skip = 0;
    static float units = 0.0f;
    static bool json = false;
    cmd->add_option("file", file, "BVH file")->required();
    cmd->add_option("--skip", skip, "drop this many leading frames (e.g. 1 for a T-pose frame)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--units", units, "metres per file unit (default: detected from the skeleton's size)")
        ->check(CLI::PositiveNumber);
    cmd->add_flag("--json", json, "print a JSON object instead of text");
    cmd->callback([] {
        BvhOptions opts;
        opts.skip_frames = skip;
        opts.metres_per_unit = units;
        const ClipInfo info = describe_clip(load_clip_arg(file, opts));  // BvhError -> non-zero exit with its message
        const std::string out = json ? format_clip_info_json(info) : format_clip_info_text(info);
        std::fwrite(out.data(), 1, out.size(), stdout);
    });
}

}  // namespace ks::tool
