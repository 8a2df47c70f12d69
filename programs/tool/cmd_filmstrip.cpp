// kinesync-tool filmstrip FILE --svg OUT: a stick-figure filmstrip (side and top views) of a BVH
// file, drawn by render_filmstrip_svg (kinesync/offline/filmstrip.h).
#include <cstdio>
#include <string>

#include <kinesync/offline/bvh.h>
#include <kinesync/offline/reference_frame.h>
#include <kinesync/offline/filmstrip.h>
#include <kinesync/offline/svg.h>
#include "programs/tool/commands.h"
#include "programs/tool/load_clip.h"

namespace ks::tool {

void add_filmstrip_command(CLI::App& app) {
    auto* cmd = app.add_subcommand("filmstrip", "Draw a stick-figure filmstrip (side and top views) of a BVH file as SVG");
    static std::string file, svg;
    static int every = 0, frames = 0, skip = 0;
    static float units = 0.0f;
    static bool keep_first = false;
    cmd->add_option("file", file, "BVH file")->required();
    cmd->add_option("--svg", svg, "output SVG file")->required();
    auto* every_opt = cmd->add_option("--every", every, "draw every N-th frame (default: about 10 figures)")
                          ->check(CLI::PositiveNumber);
    auto* frames_opt = cmd->add_option("--frames", frames, "draw K frames spread evenly, first and last included")
                           ->check(CLI::PositiveNumber);
    every_opt->excludes(frames_opt);
    cmd->add_option("--skip", skip, "drop this many leading frames (e.g. 1 for a T-pose frame)")->check(CLI::NonNegativeNumber);
    cmd->add_flag("--keep-first-frame", keep_first,
                  "draw frame 0 even when it is a T-pose/rest reference frame (the server drops those)");
    cmd->add_option("--units", units, "metres per file unit (default: detected from the skeleton's size)")
        ->check(CLI::PositiveNumber);
    cmd->callback([] {
        BvhOptions bo;
        bo.skip_frames = skip;
        bo.metres_per_unit = units;
        BvhFile b = load_clip_arg(file, bo);
        // Show what the server plays: without a leading reference frame, unless asked.
        int dropped = 0;
        if (!keep_first && skip == 0 && leading_frame_is_reference(b.clip)) {
            b.clip = drop_first_frame(b.clip);
            dropped = 1;
            std::printf("frame 0 of %s is a reference pose (T-pose/rest): not drawn, as the server drops it "
                        "(--keep-first-frame draws it)\n", file.c_str());
        }
        FilmstripOptions fo;
        fo.every = every;
        fo.frames = frames;
        fo.frame_number_offset = skip + dropped;  // label frames by their number in the file
        fo.end_sites = &b.end_sites;
        fo.end_site_parents = &b.end_site_parents;
        const std::vector<int> drawn = filmstrip_frames(b.clip.frames, fo);
        write_text_file(svg, render_filmstrip_svg(b.clip, fo));
        std::printf("wrote %s: %zu figures (frames %d..%d of %s)\n", svg.c_str(), drawn.size(), drawn.front() + skip + dropped,
                    drawn.back() + skip + dropped, file.c_str());
    });
}

}  // namespace ks::tool
