#pragma once
// Stick-figure filmstrip of a clip as a standalone SVG document (kinesync-tool filmstrip).
//
// Two views, one above the other, at the same scale (a 1 m scale bar under them):
//  - side view: horizontal = the clip's travel direction u, vertical = world Y (up);
//  - top view: looking down, horizontal = u, vertical = v = u x Y (so columns line up with the
//    side view; with u = +X, v = +Z points down the page).
// u is the root's horizontal displacement from the first to the last frame when the clip travels
// (displacement >= 1 m and >= 0.7 x the root's horizontal path length sampled every ~0.1 s, and
// the drawn figures advance along u, no step shorter than a quarter of the average step); otherwise
// u = +X. A travelling clip draws every figure where it is (left to right along its real path; the
// root's path is drawn in light grey); a clip that stays in place, turns back or pauses draws the
// figures side by side, each centred on its own root.
//
// Each figure is a group <g class="figure" data-view="side|top" data-frame="N"> of lines from each
// joint (and End Site, when given) to its parent, from global positions of op_fk_static, with
// left-side bones lighter (names starting "Left", or "L"/"l" followed by a capital or "_", after an
// optional "CC_Base_" prefix; joints without a side inherit their parent's) and a small circle on the
// head joint ("head" or "*_Head"). Colours go from blue (first frame) to red (last). Under each
// side-view figure: its frame number and time (labels move down up to three tiers to stay apart;
// a label that still has no room is left out, e.g. with --every 1). Both views are groups <g class="view" id="side-view"> / id="top-view">.

#include <stdexcept>
#include <string>
#include <vector>

#include <kinesync/common/anim/clip.h>

namespace ks {

struct FilmstripOptions {
    int every = 0;   // draw frames 0, every, 2*every, ... (> 0), or
    int frames = 0;  // draw this many frames spread evenly, first and last included (> 0, used when every == 0);
                     // with neither: every = ceil(frames / 10), about 10 figures
    int frame_number_offset = 0;  // added to frame numbers and times in labels (e.g. the skipped frames)
    std::string title;            // default: the clip name
    double max_width = 1600;      // px; the scale shrinks below px_per_metre to fit
    double px_per_metre = 160;
    const std::vector<vec3>* end_sites = nullptr;        // End Sites (file units), e.g. BvhFile::end_sites
    const std::vector<int>* end_site_parents = nullptr;  // and their joints
};

// The frames a filmstrip of `clip_frames` frames draws. Throws std::invalid_argument for negative
// options or both every and frames given.
std::vector<int> filmstrip_frames(int clip_frames, const FilmstripOptions& opts);

// Throws std::invalid_argument for an empty clip or bad options.
std::string render_filmstrip_svg(const Clip& clip, const FilmstripOptions& opts = {});

}  // namespace ks
