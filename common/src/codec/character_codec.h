#pragma once
// Coding one character's quantized state, absolutely (no baseline) or as a delta against a
// baseline state the receiver has acknowledged.
//
// Delta coding predicts every grid index and codes the residuals with a range coder under a
// Laplace model whose scale comes from what both ends already know:
//  - angular velocity: predicted as a share of the baseline's (all, 3/4, 3/8 or none: the
//    encoder chooses per payload, 2 bits); residual scale per component from the baseline's
//    angular acceleration (baseline vs its own reference state) times the baseline's age and
//    from the baseline's angular velocity;
//  - rotation: predicted by integrating the mean of the baseline's and the (already decoded)
//    current angular velocity over the age (trapezoidal rule), expressed in the current chart of
//    the smallest-three code; residual scale per component from acceleration x age^2, angular
//    velocity x age and the angular velocity's residual. The chart's largest component is
//    predicted too (one cheap bit when it matches);
//  - positions (root, animated joints): velocity first, then position by the same trapezoid;
//  - a per-joint "unchanged" bit, with the probability the model gives all residuals being zero,
//    makes still joints nearly free; the scales adapt within the payload to how wrong the
//    prediction has been on the joints coded so far.
// Every payload decodes on its own given its baseline (nothing carries over between payloads).

#include <cstdint>
#include <span>
#include <vector>

#include "common/src/codec/quantize.h"

namespace ks {

// The joints one coded payload carries: [first, first + count). A character too large for one
// datagram is sent as several parts, each coded and checked on its own (snapshot_codec.h).
struct JointRange {
    uint32_t first = 0;
    uint32_t count = 0;
    uint32_t end() const { return first + count; }
};

struct CharacterBaseline {
    const QCharacter* state = nullptr;    // the acknowledged baseline
    double age_s = 0.0;                   // seconds from the baseline to the coded state
    const QCharacter* context = nullptr;  // optional: the baseline's own reference, for acceleration
    double context_age_s = 0.0;           // seconds from the context to the baseline
    // Level of detail: joints deeper than this are not coded at all and keep the baseline's
    // values on both ends (-1: every joint coded). The coded state is then a mix of the current
    // top and the baseline's rest, and later deltas must use that mix as their baseline.
    int hold_depth = -1;
};

// Where the coded bits went (ideal code lengths, in 1/256 bit; the actual bytes add the range
// coder's final flush of 1-4 bytes).
struct CodingCost {
    enum { kFlags, kAngular, kRotation, kPosition, kCount };
    uint64_t bits256[kCount] = {};
    double bits(int category) const { return double(bits256[category]) / 256.0; }
};

// Appends the coded joints `range` of the character to `out` (with the epoch and a 16-bit check of
// what was coded). With `base`, cur.epoch must equal base->state->epoch and the joint counts must
// match (the caller sends a full state otherwise). `coded` (optional) receives the state the
// decoder will rebuild (cur, or with a level of detail the mix of cur's top and the baseline's
// held joints; joints outside the range as in cur). The range must lie within the skeleton.
void encode_character(std::vector<uint8_t>& out, const QCharacter& cur, const CharacterBaseline* base,
                      const SkeletonPrecision& prec, JointRange range, CodingCost* cost = nullptr, QCharacter* coded = nullptr);
// Decodes the joints `range` into `out` (sized to the skeleton, other joints left as they were).
// Returns false when the range is not within the skeleton or the payload is malformed (reads far
// past its end, yields values outside their grids, or fails its check).
bool decode_character(std::span<const uint8_t> in, QCharacter& out, const CharacterBaseline* base,
                      const SkeletonPrecision& prec, JointRange range);
// Every joint of the skeleton.
inline JointRange all_joints(const SkeletonPrecision& prec) { return {0, uint32_t(prec.joints.size())}; }

}  // namespace ks
