#pragma once
// Relevance: how much a client cares about each character, from the distances to the client's
// viewpoint. It scales the snapshot builder's priorities (a character's share of the budget
// follows its priority): the `near_count` nearest come first in every snapshot, as they would
// with nobody else around; the others share what budget is left, the nearer more often (priority
// falling with the square of the distance, relative to the near group's edge, never below
// `min_priority`, so even the farthest is refreshed now and then).

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include <kinesync/common/math/vec3.h>
#include <kinesync/server/server_stats.h>

namespace ks {


inline bool relevance_is_near(float priority, const RelevanceConfig& c = {}) { return priority >= c.near_priority; }

// Priorities of characters at positions_m (metres, world) seen from viewpoint_m. The near group
// is the `near_count` nearest, or, when `near` is given, the characters it flags (the replay holds
// its group fixed for a run, to compare it with a run of that group alone).
inline std::vector<float> relevance_priorities(std::span<const vec3> positions_m, vec3 viewpoint_m, const RelevanceConfig& c = {},
                                               const std::vector<bool>* near = nullptr) {
    std::vector<float> d2(positions_m.size());
    for (size_t i = 0; i < d2.size(); ++i) {
        const vec3 d = positions_m[i] - viewpoint_m;
        d2[i] = dot(d, d);
    }
    std::vector<bool> in(d2.size(), false);
    if (near) {
        in = *near;
    } else {
        std::vector<size_t> order(d2.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        const size_t k = std::min(order.size(), size_t(std::max(0, c.near_count)));
        std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(k), order.end(),
                          [&](size_t a, size_t b) { return d2[a] < d2[b] || (d2[a] == d2[b] && a < b); });
        for (size_t i = 0; i < k; ++i) in[order[i]] = true;
    }
    float edge2 = c.reference_m * c.reference_m;  // squared distance of the near group's edge
    for (size_t i = 0; i < d2.size(); ++i)
        if (in[i]) edge2 = std::max(edge2, d2[i]);
    std::vector<float> p(d2.size());
    for (size_t i = 0; i < d2.size(); ++i)
        p[i] = in[i] ? c.near_priority : std::max(c.min_priority, c.far_scale * edge2 / std::max(d2[i], 1e-6f));
    return p;
}

}  // namespace ks
