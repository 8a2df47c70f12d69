#pragma once
// A skeleton: joint names, parents (parent index < child index, -1 for a root) and the rest
// offset of each joint from its parent (the BVH OFFSET), in the skeleton's file units.

#include <string>
#include <vector>

#include "common/math/vec3.h"

namespace ks {

struct Skeleton {
    std::vector<std::string> names;
    std::vector<int> parents;
    std::vector<vec3> offsets;

    int size() const { return int(parents.size()); }
    // Index of the joint called `name`, or -1.
    int find(const std::string& name) const;
    // Empty when well formed; otherwise what is wrong (sizes differ, parent not before child...).
    std::string validate() const;
};

}  // namespace ks
