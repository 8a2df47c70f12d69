#pragma once
// A game's own 3-joint arm (centimetres): root, shoulder 150 cm up, hand 60 cm further.

#include <kinesync/common/anim/skeleton.h>

namespace ks::test {

inline Skeleton arm() {
    Skeleton s;
    s.names = {"root", "shoulder", "hand"};
    s.parents = {-1, 0, 1};
    s.offsets = {{0, 0, 0}, {0, 150, 0}, {0, 60, 0}};
    return s;
}

}  // namespace ks::test
