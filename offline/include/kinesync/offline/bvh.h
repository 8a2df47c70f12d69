#pragma once
// BVH (Biovision Hierarchy) motion-capture import.
//
// What the importer produces:
//  - A Clip whose skeleton has one joint per ROOT/JOINT entry, in file order (so parent index <
//    child index). End Sites are NOT joints; their offsets and parent joints are kept in BvhFile.
//  - Per frame and joint: local position = OFFSET + that joint's position channels (the root
//    OFFSET is kept: some rigs, e.g. Reallusion CC, put the hip height there), local rotation =
//    the product of the joint's rotation channels in the order they are listed (degrees in the
//    file; "Zrotation Xrotation Yrotation" gives Rz * Rx * Ry), scale = (1, 1, 1).
//    Positions stay in file units; clip.metres_per_unit says how to convert them.
//  - Any channel order per joint, position channels on any joint, mixed orders in one file.
//
// Text tolerance: CRLF / LF / CR / mixed line endings, tabs or spaces, unindented lines, exponent
// notation, "Frames:" / "Frame Time:" followed by a TAB. Numbers are parsed in the "C" locale
// (no dependence on the process's locale). The parser checks: balanced braces, known channel names, the declared
// CHANNELS count, that every motion line has exactly one value per channel, that the number of
// motion lines equals "Frames:", and that every value is finite.
//
// Units rule (detect_metres_per_unit):
//   For up to 16 frames spread evenly over the clip (first and last included), run static forward
//   kinematics (global_pos = parent_pos + parent_rot * local_pos, global_rot = parent_rot *
//   local_rot) and take the body's vertical extent, max Y - min Y over the joints (End Sites are not
//   joints and are not included). The extent E is the median over those frames. Among the candidate
//   units {1 m, 0.0254/0.45 m = 0.05644 m (CMU units, 1/0.45 inch), 0.0254 m (inch), 0.01 m (cm),
//   0.001 m (mm)} pick the unit u minimising |log(E * u / 1.6 m)|, i.e. the one that makes the
//   figure closest to 1.6 m tall. If E is not a positive finite number (a single joint, a flat
//   skeleton, no frames), the result is 1 (metres).
//   On the shared CMU clips: MotionBuilder/3dsMax layouts (E ~ 22-26) -> 0.05644; the Daz layout
//   (E ~ 146) and the Reallusion CC rig (E ~ 159) -> 0.01.

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <kinesync/common/anim/clip.h>

namespace ks {

// A malformed or unreadable BVH file. what() is "name:LINE: message" for errors at a place in the
// text (e.g. "walk.bvh:12: expected '{' after JOINT name, got 'OFFSET'") and "name: message" for
// errors that have no line (the file cannot be opened, bad options).
class BvhError : public std::runtime_error {
public:
    BvhError(const std::string& name, int line, const std::string& message);
    const std::string& file() const { return file_; }
    int line() const { return line_; }  // 1-based; 0 when the error has no line
    const std::string& message() const { return message_; }

private:
    std::string file_;
    int line_;
    std::string message_;
};

struct BvhOptions {
    int skip_frames = 0;            // drop this many leading frames (many CMU files start with a T-pose frame)
    float metres_per_unit = 0.0f;   // 0 = detect from the skeleton's size (rule above); >0 overrides
};

// The channels of one joint, as listed in the file (e.g. "Xposition", "Zrotation").
struct BvhChannels {
    std::string joint;
    std::vector<std::string> channels;
};

struct BvhFile {
    Clip clip;
    std::vector<BvhChannels> layout;   // one per joint, in joint order
    std::vector<vec3> end_sites;       // End Site offsets (file units)
    std::vector<int> end_site_parents; // joint index each End Site hangs from
    float detected_metres_per_unit = 1.0f;  // what the units rule found (even when overridden)
    int frames_in_file = 0;            // the "Frames:" value, before skip_frames
};

// Reads and parses a file; clip.name = path. Throws BvhError.
BvhFile load_bvh(const std::string& path, const BvhOptions& opts = {});
// Parses BVH text; name_for_errors prefixes error messages and becomes clip.name. Throws BvhError.
BvhFile parse_bvh(std::string_view text, const std::string& name_for_errors, const BvhOptions& opts = {});
// The units rule above, exposed for tests.
float detect_metres_per_unit(const Clip& clip);

// A channel name's kind, case-insensitively: 0..2 = X/Y/Z position, 3..5 = X/Y/Z rotation,
// -1 = not a channel name.
int bvh_channel_kind(std::string_view name);

}  // namespace ks
