#pragma once
// The quantized state of one character: what the wire carries, and what both ends agree on.
//
// Every value lives on a fixed grid chosen by the skeleton's precision plan, independently of any
// baseline: rotations as smallest-three (index of the largest component, the other three with
// per-joint bits, the largest made positive so q and -q give the same code), angular velocities,
// positions and scales as integer multiples of their steps. Delta coding only predicts grid
// indices, so a character's state at a tick is the same for every client and computed once.
//
// Joint 0 is the root: its position, rotation and velocities are in the world. Other joints'
// positions are flagged "at rest" (the skeleton's offset, zero velocity) unless animated; scales
// are flagged "unit" (1, zero scalar velocity) unless not.

#include <cstdint>
#include <vector>

#include <kinesync/common/anim/pose.h>
#include <kinesync/common/anim/skeleton.h>
#include "common/src/codec/precision.h"

namespace ks {

// The small fields first: 76 bytes a joint, not 84 (both ends keep hundreds of ticks of these).
struct QJoint {
    uint8_t largest = 0;    // 0..3: w, x, y, z
    bool moved = false;     // position differs from rest (always true for the root)
    bool scaled = false;    // scale not exactly unit
    int32_t rot[3] = {};    // the other three components of the rotation, in order, as grid indices
    int32_t ang[3] = {};
    int32_t pos[3] = {};    // root: world position; others: offset from rest
    int32_t vel[3] = {};
    int32_t lscl[3] = {};   // log scale
    int32_t svl[3] = {};
    bool operator==(const QJoint&) const = default;
};
static_assert(sizeof(QJoint) == 76);

struct QCharacter {
    uint16_t epoch = 0;
    std::vector<QJoint> joints;
    // A look-ahead (docs/FIDELITY.md, "Look-ahead"): the joints are the pose ahead_ticks after the
    // snapshot's tick, expected under `plan` (ahead_ticks 0: the present, still under `plan`).
    // Carried in the entry's header, not in the coded joints.
    bool ahead = false;
    uint16_t ahead_ticks = 0, plan = 0;
    bool operator==(const QCharacter&) const = default;
};

// Quantizes a local pose (joint 0 in the world) with velocities.
QCharacter quantize_character(const Pose& local, const Skeleton& skeleton, const SkeletonPrecision& prec, uint16_t epoch);
// The same into `out`, reusing its joints' memory (a server quantizing its characters every snapshot).
void quantize_character_into(QCharacter& out, const Pose& local, const Skeleton& skeleton, const SkeletonPrecision& prec,
                             uint16_t epoch);
// The pose a receiver reconstructs (joint 0 in the world).
void dequantize_character(Pose& out, const QCharacter& q, const Skeleton& skeleton, const SkeletonPrecision& prec);
// Only joints [first, first + count) (the caller keeps them within the skeleton).
void dequantize_joints(Pose& out, const QCharacter& q, const Skeleton& skeleton, const SkeletonPrecision& prec, size_t first,
                       size_t count);

// Grid helpers shared by the encoder and the decoder (their results must match bit for bit).
// c clamped to +-2e9 and rounded half away from zero, as std::lround rounds, by arithmetic instead
// of the library call (a tenth of the quantizer's time, and mingw-w64's gives 1 for 0.49999997);
// a NaN (validated poses hold none) gives 0 on every platform.
int32_t round_half_away(float c);
quat dequantize_rotation(const QJoint& j, const JointPrecision& p);
// Out of line on purpose: inlined into the codec, a compiler that fuses multiply-adds by default
// fuses this product into the predictions, and such a decoder disagrees with the encoder far more
// often (codec.CrossCompilerDecodeIsBitIdentical's FMA variant: 2,184 payloads refused, 260 in a
// row, against 15 and 2).
vec3 dequantize_angular(const QJoint& j, const JointPrecision& p);
int largest_component(quat q);
// q's three non-largest components (in the chart of `largest`, sign-normalised) as grid indices.
void rotation_indices(quat q, int largest, const JointPrecision& p, int32_t out[3]);

}  // namespace ks
