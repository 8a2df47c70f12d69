#pragma once
// The joints of a SkeletonDef part as one range-coded stream (SkeletonDef.joints_coded, see
// schema/PROTOCOL.md, "Skeleton joints"), about half the bytes of the plain arrays: per joint its
// name front-coded against the previous one, its parent as a distance back (usually the joint
// before, or the previous joint's parent), and its rest offset as a repeat of the previous
// joint's, a match of an earlier joint's in the part up to the signs of its components (mirrored
// limbs), or three floats (exponent and top mantissa bits modelled, the rest raw). Lossless: the
// client's skeleton is the server's, bit for bit. Every model adapts within the part, so a part
// decodes on its own.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/src/net/protocol.h"

namespace ks::net::detail {

// How many leading bytes a name shares with the one before it (what front coding leaves out).
inline size_t shared_prefix(std::string_view name, std::string_view prev) {
    size_t n = 0;
    while (n < name.size() && n < prev.size() && name[n] == prev[n]) ++n;
    return n;
}

struct SkeletonJoints {
    std::vector<std::string> names;
    std::vector<int> parents;  // absolute joint indices, -1 for a root
    std::vector<vec3> offsets;
};

// Codes joints first .. first + n - 1 (n = names.size(); the three spans of equal length) onto
// `out`. Nothing is checked: the builder checks what it sends (check_def_input), and tests code
// what no builder would to see the receiver refuse it. Names longer than 127 bytes are cut. With
// `bounds`, bounds[k] is at least the bytes the stream would take had it ended after joint k of the
// part (a prefix codes as it does in the whole: the models adapt in joint order); coding stops, the
// stream unfinished, after the first joint whose bound exceeds `stop_beyond` (a planner's use).
// With `base`, each joint j below the base's size is first coded as "the base's joint j's" (name,
// parent and offset each by one adaptive bit) and only otherwise as above: a skeleton grown from
// the same source as one the client holds costs a fraction of a bit a joint where they agree.
void code_skeleton_joints(int first, std::span<const std::string> names, std::span<const int> parents,
                          std::span<const vec3> offsets, std::vector<uint8_t>& out, std::vector<size_t>* bounds = nullptr,
                          size_t stop_beyond = std::numeric_limits<size_t>::max(), const Skeleton* base = nullptr);

// Decodes `n` joints starting at joint `first` into `out`. Refuses, with *why (when given): a name
// over kMaxNameBytes (StringTooLong) or sharing more than the previous name has, a parent not
// before its joint or below -1, a non-finite offset, a match of no earlier joint, a stream that
// ends early or has bytes left over, or names spelling out more new bytes than *new_name_bytes
// holds (BadSkeleton); takes the new bytes from *new_name_bytes (a packet's allowance).
// joints coded against `base` are decoded against the same skeleton (a valid one).
DecodeError decode_skeleton_joints(std::span<const uint8_t> in, int first, size_t n, SkeletonJoints& out,
                                   std::string* why, size_t* new_name_bytes, const Skeleton* base = nullptr);

}  // namespace ks::net::detail
