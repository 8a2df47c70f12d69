#pragma once
// Turning late, lossy snapshots into the pose to show now: the client's reconstruction strategies
// (how they are measured: docs/FIDELITY.md).
//
//   snap           the newest snapshot as it arrived
//   interp         buffered linear/slerp interpolation `interp_delay_s` in the past (Source: 100 ms)
//   hermite        the same delay, cubic Hermite interpolation using the snapshots' velocities
//   extrap         dead reckoning from the newest snapshot with its velocities; corrections at once
//   deadblend      the displayed pose, extrapolated with decaying velocities, dead-blended
//                  (slerp_via) into each newer snapshot's extrapolation
//   deadblend+sod  the default: the newest snapshot extrapolated with velocities that decay
//                  (half-life `predict_halflife_s`), plus a per-joint correction offset (value and
//                  velocity) that absorbs each newer snapshot's jump and decays as second-order
//                  dynamics (f, zeta); f is lowered per joint so a large correction never
//                  accelerates the display more than `correction_accel_max`. The display is C1
//                  across snapshots: no step in position or velocity, ever.
//
// Extrapolation runs with constant velocities up to `extrap_cap_s` past a snapshot and with
// velocities decaying (half-life `extrap_decay_halflife_s`) beyond, so long loss degrades into a
// gentle stop rather than a flight. Teleports and resets: a snapshot with a new epoch is never
// interpolated or blended across; the display jumps to it, and the root filter is reset to the new
// state with the snapshot's velocity.
//
// Joint 0 is the root in the world (as on the wire); other joints are local. Times are on the
// server's clock, in seconds.

#include <string>
#include <vector>

#include <kinesync/common/dynamics/second_order.h>  // SodParams

namespace ks {

enum class Strategy { Snap, Interp, Hermite, Extrap, DeadBlend, DeadBlendSod, HermiteAhead, DeadBlendSodAhead };
const char* strategy_name(Strategy s);
bool strategy_from_name(const std::string& name, Strategy& out);  // any strategy, "+ahead" ones too
// The strategies for snapshots of the present (each snapshot is the server's pose at its tick).
const std::vector<Strategy>& all_strategies();
// The "+ahead" strategies, for snapshots that carry the server's look-ahead (docs/FIDELITY.md,
// "Look-ahead"): each snapshot is the pose the server expected at its tick plus a horizon, so it
// arrives before its time. hermite+ahead interpolates them with their velocities at the present
// (no display delay; it holds the newest when they run out, and shows a new epoch at once);
// deadblend+sod+ahead does the same while they bracket the present and extrapolates the newest
// otherwise, its correction offset absorbing each change of the expected future (a decision the
// look-ahead could not know). In both, an epoch's first entry still ahead of the present is
// carried back to it along its velocities.
const std::vector<Strategy>& ahead_strategies();
bool uses_look_ahead(Strategy s);
Strategy base_strategy(Strategy s);  // the strategy without "+ahead"
Strategy ahead_form(Strategy s);     // its "+ahead" form, or s itself when it has none

struct ReconstructConfig {
    Strategy strategy = Strategy::DeadBlendSod;
    double interp_delay_s = 0.1;
    double extrap_cap_s = 0.25;
    float extrap_decay_halflife_s = 0.1f;
    // Velocity half-life of the extrapolated displayed pose. Blends chain (a new one every
    // snapshot), so any decay compounds into lag: 5 s costs ~3 mm on steady motion and still
    // tames a fast joint's overshoot when snapshots stop.
    float deadblend_halflife_s = 5.0f;
    float deadblend_blend_s = 0.05f;     // cross-fade into each newer snapshot's extrapolation (blends restart at
                                         // every snapshot: longer ones leave most of each correction
                                         // undone when the next arrives, and lag)
    // deadblend+sod. A correction's offset decays as x'' + 2 zeta w x' + w^2 x = 0, w = 2 pi f (r,
    // the response to input changes, has nothing to act on: the offset's input is always zero).
    // Critically damped: the smoothest on the development clips within 1/4.5 of interp's error.
    SodParams correction_sod{10.0f, 1.0f, 0.0f};
    float correction_accel_max = 960.0f;  // m/s^2 a correction may add at a joint (see limit_correction_frequencies)
    float correction_min_ratio = 0.25f;  // w never drops below this fraction of 2 pi f (a slower offset drifts)
    float root_correction_f = 12.0f;     // Hz: the root translation's correction has a frequency
    float root_accel_max = 150.0f;       // and a budget (m/s^2) of its own
    // deadblend+sod+ahead's correction frequency and budgets, in place of correction_sod.f,
    // correction_accel_max and root_accel_max: with look-ahead, corrections are rarer (a decision,
    // look-ahead running out) and a smaller root budget keeps them smooth (docs/FIDELITY.md,
    // "Look-ahead").
    float ahead_correction_f = 12.0f;
    float ahead_correction_accel_max = 200.0f;
    float ahead_root_accel_max = 60.0f;
    float predict_halflife_s = 0.12f;    // velocity half-life of the extrapolated snapshot's joints
    float predict_root_halflife_s = 1.0f;  // and of its root: locomotion keeps most of its pace
};

}  // namespace ks
