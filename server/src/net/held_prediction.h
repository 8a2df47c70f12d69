#pragma once
// What a client shows, as its sender estimates it: the state the client holds, dead-reckoned with
// its own velocities to the time of the state the server would send now (as the client
// extrapolates; with look-ahead it interpolates between the entries it holds, which is closer
// still). The snapshot builder sends where this estimate is furthest from the truth, and nothing
// where it is close enough.

#include "common/src/codec/precision.h"
#include "common/src/codec/quantize.h"
#include "common/src/codec/character_codec.h"

namespace ks {

// How far `held` (content `dt_s` seconds older than `now`), moved on by its velocities, is from
// `now` over `joints`: the largest, over those joints, of the position error plus the rotation
// error times the joint's reach (how far it moves what hangs from it), in metres. Both states are
// of the same skeleton and epoch (the caller checks).
float held_prediction_error_m(const QCharacter& held, const QCharacter& now, float dt_s, const SkeletonPrecision& prec,
                              JointRange joints);

// With look-ahead the client interpolates between the entries it holds (cubic Hermite with their
// velocities, as CharacterReconstructor does): how far its curve from `from` to `to` (content
// `span_s` apart) strays from `mid` (content `at_s` after `from`), in the same measure.
float interpolation_error_m(const QCharacter& from, const QCharacter& to, float span_s, const QCharacter& mid, float at_s,
                            const SkeletonPrecision& prec, JointRange joints);

}  // namespace ks
