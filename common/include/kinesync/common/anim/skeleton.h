#pragma once
// A skeleton: joint names, parents and the rest offset of each joint from its parent (the BVH
// OFFSET), in the skeleton's file units.
//
// Well formed (validate(), check()): at least one joint and at most kMaxJoints; names, parents and
// offsets of one length; joint 0 the only root (parent -1); every other joint's parent before it;
// every offset finite.

#include <string>
#include <vector>

#include <kinesync/common/errors.h>
#include <kinesync/common/math/vec3.h>

namespace ks {

constexpr int kMaxJoints = 1024;  // per skeleton (what one character may have on the wire)

struct Skeleton {
    std::vector<std::string> names;
    std::vector<int> parents;
    std::vector<vec3> offsets;

    int size() const { return int(parents.size()); }
    // Index of the joint called `name`, or -1.
    int find(const std::string& name) const;
    // Empty when well formed; otherwise what is wrong, naming the joint and the value.
    std::string validate() const;
    // Throws ks::Error (Errc::InvalidSkeleton, the field and joint) when not well formed; `where`
    // starts the message (e.g. "add_skeleton").
    void check(const char* where = "skeleton") const;
};

}  // namespace ks
