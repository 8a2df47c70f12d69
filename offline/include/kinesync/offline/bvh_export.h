#pragma once
// BVH (Biovision Hierarchy) export: the inverse of load_bvh (kinesync/offline/bvh.h).
//
// What is written:
//  - HIERARCHY: one ROOT/JOINT block per skeleton joint, nested by parent, children in index order,
//    with OFFSET = skeleton.offsets (file units) and a CHANNELS line; "End Site { OFFSET 0 0 0 }" under
//    every leaf joint (the BvhFile overloads write the file's own End Sites instead, each at the end of
//    its joint's block, after any child joints).
//  - MOTION: "Frames:", "Frame Time:" (clip.frame_dt) and one line per frame.
//  - Channel values: position channel = local position - OFFSET on that axis (the importer adds
//    OFFSET + channels); rotation channels = Euler angles in degrees of the local rotation for the
//    joint's rotation order (product of the channels in listed order, as the importer builds it).
//  - Numbers are the shortest decimal text that reads back to the same float (std::to_chars, fixed
//    notation), so OFFSETs and the frame time round-trip exactly; |values| below 5e-10 are written 0.
//
// Channel layout:
//  - Default (no layout): the root(s) get "Xposition Yposition Zposition Zrotation Yrotation Xrotation",
//    every other joint "Zrotation Yrotation Xrotation", and a non-root joint whose local position
//    moves away from its OFFSET (by more than 1e-6 * max(1, |OFFSET|) on any axis, in any frame) also
//    gets "Xposition Yposition Zposition" in front of its rotations.
//  - Given a layout (e.g. BvhFile::layout, one entry per joint, names must match the skeleton), its
//    channels and rotation orders are kept. Supported rotation channels per joint: none, or three
//    forming a Tait-Bryan order (XYZ, XZY, YXZ, YZX, ZXY, ZYX) or a proper Euler order (e.g. ZXZ).
//    When the clip needs more than the layout offers, channels are added, never silently dropped:
//    missing position channels (axis whose value moves away from OFFSET as above) are inserted in
//    front of the joint's channels, and "Zrotation Yrotation Xrotation" is appended to a joint with no
//    rotation channels whose rotation is not the identity (angle > 1e-6 rad). Anything else (one or two
//    rotation channels, more than three, an unsupported axis pattern) throws std::invalid_argument.
//
// Euler decomposition (euler_from_quat): closed form in double precision for both solution branches;
// the third angle is taken from the residual rotation, so near gimbal lock (middle angle ±90° for
// Tait-Bryan, 0/180° for proper Euler) the reconstruction stays exact even where the first angle is
// ill-conditioned. Frame to frame, the solution closest to the previous frame's angles is chosen among
// those reconstructing the rotation within 1e-6 rad: both branches, plus, near lock, "keep the
// previous first angle" (so a locked stretch does not flip its split between first and third angle);
// every angle is unwrapped by multiples of 360° to the previous frame's, so a turning root reads
// e.g. 0 .. 720° instead of wrapping at ±180°. (Angles are re-wrapped into (-180°, 180°] if they pass
// 20 turns, to keep float precision.) Round trip through load_bvh: positions within ~1 float ulp,
// rotations within ~1e-6 rad.
//
// Not exported: scale (BVH has no scale channels; clip scales are ignored) and metres_per_unit
// (BVH has no units field: positions are written in the clip's file units; pass
// BvhOptions::metres_per_unit = clip.metres_per_unit when reloading if the units rule would not find
// the same unit). Skeletons whose index order is not the depth-first order of their hierarchy (a
// child listed after a later sibling's subtree) are written in depth-first order, so reloading lists
// the joints in that order.
//
// Errors: std::invalid_argument for clips that cannot be written (no frames, non-positive frame time,
// bad skeleton, a joint name the importer would not read back — empty, with '{', '}', line breaks or
// tabs, leading/trailing/double spaces, a BVH keyword as a word, or a duplicate — non-finite values,
// a layout that does not match the skeleton); save_bvh throws std::runtime_error naming the path when
// the file cannot be written.

#include <array>
#include <string>
#include <vector>

#include <kinesync/common/anim/clip.h>
#include <kinesync/offline/bvh.h>

namespace ks {

std::string save_bvh_text(const Clip& clip, const std::vector<BvhChannels>* layout = nullptr);
void save_bvh(const std::string& path, const Clip& clip, const std::vector<BvhChannels>* layout = nullptr);

// A loaded file written back: its clip, its channel layout and its End Sites.
std::string save_bvh_text(const BvhFile& file);
void save_bvh(const std::string& path, const BvhFile& file);

// The channels save_bvh_text writes for `clip` given `layout` (nullptr = the default layout), one entry
// per joint in joint order, after the additions described above. Throws std::invalid_argument.
std::vector<BvhChannels> bvh_export_layout(const Clip& clip, const std::vector<BvhChannels>* layout = nullptr);

// Euler angles (radians, one per letter of `order`, e.g. "ZYX" = Rz * Ry * Rx as quat_from_euler
// builds it) of the rotation q. `order` is a Tait-Bryan or proper Euler order (throws
// std::invalid_argument otherwise). With `prev`, returns the solution nearest to it (continuity rule
// above); without, the one nearest to (0, 0, 0).
std::array<double, 3> euler_from_quat(quat q, const char order[3], const std::array<double, 3>* prev = nullptr);

}  // namespace ks
