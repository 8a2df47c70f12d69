#pragma once
// The shared CMU clips, loaded once per test run.

#include <map>
#include <string>
#include <vector>

#include <kinesync/offline/bvh.h>
#include "tests/support/mocap.h"

namespace ks::test {

struct SharedClipInfo {
    const char* file;
    int joints;
    int frames;
};

// From ../shared/mocap/README.md.
inline const std::vector<SharedClipInfo>& shared_clip_infos() {
    static const std::vector<SharedClipInfo> infos = {
        {"cmu_02_01_walk.bvh", 31, 343},
        {"cmu_35_24_run_jog.bvh", 31, 151},
        {"cmu_01_01_jumps_turn_around.bvh", 31, 2752},
        {"cmu_05_20_dance_leaps.bvh", 31, 1096},
        {"cmu_05_11_dance_pirouette_daz.bvh", 43, 592},
        {"cmu_94_01_indian_dance_maxskel.bvh", 31, 3602},
        {"cmu_06_10_dribble_left_turns_iclone.bvh", 100, 557},
    };
    return infos;
}

inline const Clip& shared_clip(const std::string& file) {
    static std::map<std::string, Clip> cache;
    auto it = cache.find(file);
    if (it == cache.end()) it = cache.emplace(file, load_bvh(mocap_path(file)).clip).first;
    return it->second;
}

}  // namespace ks::test
