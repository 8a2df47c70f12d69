// kinesync-tool loop IN OUT: makes a clip loop and prints the seam discontinuity before and after.
#include <cstdio>
#include <string>

#include <kinesync/offline/looping.h>
#include <kinesync/offline/bvh.h>
#include <kinesync/offline/bvh_export.h>
#include "programs/tool/commands.h"
#include "programs/tool/load_clip.h"

namespace ks::tool {

namespace {
void print_seam(const char* label, const SeamReport& s) {
    std::printf("%-7s position jump %8.4f m (%s)   velocity jump %7.3f m/s (%s), beyond its neighbours %7.3f m/s   "
                "root velocity jump %6.3f m/s, turn-rate jump %6.3f rad/s   (the clip's own frame-to-frame velocity "
                "change, 99th percentile: %.3f m/s)\n",
                label, s.pos_m, s.pos_joint.c_str(), s.vel_mps, s.vel_joint.c_str(), s.vel_excess_mps, s.root_vel_mps,
                s.root_turn_rads, s.typical_vel_step_mps);
}
}  // namespace

void add_loop_command(CLI::App& app) {
    auto* cmd = app.add_subcommand("loop", "Make a clip loop (BVH in, BVH out) and print the seam before and after");
    static std::string in, out, method = "cubic", root = "accumulate";
    static LoopOptions o;
    static int skip = 0;
    static float units = 0.0f;
    cmd->add_option("IN", in, "input BVH file, or builtin:NAME (idle, walk, run, turn)")->required();
    cmd->add_option("OUT", out, "output BVH file")->required();
    cmd->add_option("--method", method, "spring, cubic (default: exact ends), linear or softfade")
        ->check(CLI::IsMember({"spring", "cubic", "linear", "softfade"}));
    cmd->add_option("--root", root, "accumulate (keeps travelling, default), loop (returns to start) or fix (in place)")
        ->check(CLI::IsMember({"accumulate", "loop", "fix"}));
    cmd->add_option("--ratio", o.ratio, "share of the correction applied at the start (0..1)")->capture_default_str()->check(CLI::Range(0.0f, 1.0f));
    cmd->add_option("--halflife-start", o.halflife_start, "spring half-life at the start, s")->capture_default_str();
    cmd->add_option("--halflife-end", o.halflife_end, "spring half-life at the end, s")->capture_default_str();
    cmd->add_option("--blendtime-start", o.blendtime_start, "cubic / velocity-fix blend time at the start, s")->capture_default_str();
    cmd->add_option("--blendtime-end", o.blendtime_end, "cubic / velocity-fix blend time at the end, s")->capture_default_str();
    cmd->add_option("--softfade-duration-start", o.softfade_duration_start, "softfade duration at the start, s")->capture_default_str();
    cmd->add_option("--softfade-duration-end", o.softfade_duration_end, "softfade duration at the end, s")->capture_default_str();
    cmd->add_option("--softfade-hardness-start", o.softfade_hardness_start, "softfade hardness at the start")->capture_default_str();
    cmd->add_option("--softfade-hardness-end", o.softfade_hardness_end, "softfade hardness at the end")->capture_default_str();
    cmd->add_option("--skip", skip, "drop this many leading frames first (e.g. 1 for a T-pose frame)")->check(CLI::NonNegativeNumber);
    cmd->add_option("--units", units, "metres per file unit (default: detected)")->check(CLI::NonNegativeNumber);
    cmd->callback([] {
        loop_method_from_name(method, o.method);
        root_mode_from_name(root, o.root);
        BvhOptions bo;
        bo.skip_frames = skip;
        bo.metres_per_unit = units;
        const BvhFile file = load_clip_arg(in, bo);
        const Clip& clip = file.clip;
        std::printf("%s: %d frames at %.1f Hz, %.2f s, %.5f m per unit; method %s, root %s\n", clip.name.c_str(), clip.frames,
                    1.0 / clip.frame_dt, clip.duration(), clip.metres_per_unit, method.c_str(), root.c_str());
        print_seam("before", measure_seam(clip));
        const Clip looped = make_loop(clip, o);
        print_seam("after", measure_seam(looped));
        save_bvh(out, looped, file.layout.empty() ? nullptr : &file.layout);
        std::printf("wrote %s\n", out.c_str());
    });
}

}  // namespace ks::tool
