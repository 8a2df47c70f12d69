#pragma once
// A summary of a loaded BVH file, as `kinesync-tool info` prints it: skeleton, channel layout,
// timing, units, root height and travel.
//
// Definitions:
//  - root: joint 0 (the first ROOT; every shared clip has exactly one). Its world position is its
//    local position (OFFSET + channels), so "root height" is the root's world Y, as the mocap README
//    reports pelvis height (for the CC rig the root is CC_Base_Hip).
//  - duration: (frames - 1) * frame time, first to last frame (Clip::duration).
//  - travel: the root's horizontal (X, Z) motion in metres: path_length = sum over consecutive frames
//    of |delta (x, z)| (mocap jitter and hip sway included), displacement = |(x, z) last - first|.
//  - figure height: the median over up to 16 frames of the joints' vertical extent (static FK, scale
//    included, End Sites excluded): the quantity the units rule uses.

#include <string>
#include <utility>
#include <vector>

#include <kinesync/offline/bvh.h>

namespace ks {

struct ClipInfo {
    std::string name;
    // Skeleton
    std::vector<std::string> joint_names;
    std::vector<int> parents;
    int end_sites = 0;
    // Channels
    int channels_per_frame = 0;
    std::vector<std::pair<std::string, std::vector<std::string>>> rotation_orders;  // order ("ZYX", "" = none) -> joints, in first-use order
    std::vector<std::string> position_channel_joints;  // joints with at least one position channel
    // Timing
    int frames = 0;           // in the clip (after skip)
    int frames_in_file = 0;
    int skipped_frames = 0;
    double frame_dt = 0;      // s
    double frame_rate = 0;    // 1 / frame_dt
    double duration = 0;      // s, (frames - 1) * frame_dt
    // Units
    double metres_per_unit = 1;           // what the clip uses
    double detected_metres_per_unit = 1;  // what the units rule found
    bool units_overridden = false;        // metres_per_unit came from the caller, not the rule
    std::string units_name;               // units_rule_name(metres_per_unit)
    std::string detected_units_name;
    double figure_height_units = 0, figure_height_m = 0;
    // Root
    std::string root_name;
    double root_height_min = 0, root_height_median = 0, root_height_max = 0;  // file units
    double root_height_min_m = 0, root_height_median_m = 0, root_height_max_m = 0;
    double path_length_m = 0;    // horizontal
    double displacement_m = 0;   // horizontal, straight line first -> last frame
    double heading_x = 0, heading_z = 0;  // unit horizontal direction of the displacement (0, 0 when none)
    double average_speed_mps = 0;         // displacement / duration
};

ClipInfo describe_clip(const BvhFile& file);

// The name of a unit of the units rule: "metres", "CMU units (1/0.45 in)", "inches", "centimetres",
// "millimetres"; otherwise "custom (X m/unit)".
std::string units_rule_name(double metres_per_unit);

// Human-readable report (several lines, ends with '\n') and a JSON object.
std::string format_clip_info_text(const ClipInfo& info);
std::string format_clip_info_json(const ClipInfo& info);

}  // namespace ks
