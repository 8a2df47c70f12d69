#pragma once
// Springs and dampers, exact (closed form) so they are stable at any time step, after D. Holden's
// "Spring-It-On". A half-life is the time for a distance to halve.
//
// exp(-x) is evaluated exactly (std::exp) everywhere in kinesync. fast_negexp, the rational
// approximation the seeds' code uses, is offered for hot loops that want it: its absolute error
// is at most 0.019 (near x = 3.3), its relative error reaches 9 % at x = 2 and grows beyond, so a
// damper built on it halves its distance in a slightly wrong time. Nothing uses it unless asked.

#include <cmath>

#include <kinesync/common/math/quat.h>

namespace ks {

inline float fast_negexp(float x) { return 1.0f / (1.0f + x + 0.48f * x * x + 0.235f * x * x * x); }

// Damping d of x'' = -d x' - (d/2)^2 x... for a critically damped spring with this half-life.
inline float halflife_to_damping(float halflife, float eps = 1e-5f) { return (4.0f * kLn2) / (halflife + eps); }
inline float damping_to_halflife(float damping, float eps = 1e-5f) { return (4.0f * kLn2) / (damping + eps); }

// Exact exponential damper: moves x towards goal, halving the distance every half-life.
inline float damper_exact(float x, float goal, float halflife, float dt, float eps = 1e-5f) {
    return x + (goal - x) * (1.0f - std::exp(-(kLn2 * dt) / (halflife + eps)));
}
inline vec3 damper_exact(vec3 x, vec3 goal, float halflife, float dt, float eps = 1e-5f) {
    return x + (goal - x) * (1.0f - std::exp(-(kLn2 * dt) / (halflife + eps)));
}
// Exact decay of a velocity (or any quantity) towards zero.
inline float damper_decay_exact(float v, float halflife, float dt, float eps = 1e-5f) {
    return v * std::exp(-(kLn2 * dt) / (halflife + eps));
}
inline vec3 damper_decay_exact(vec3 v, float halflife, float dt, float eps = 1e-5f) {
    return v * std::exp(-(kLn2 * dt) / (halflife + eps));
}

// Critically damped spring towards a (fixed) goal, exact for any dt. State: x, v (in/out).
void spring_critical_exact(float& x, float& v, float goal, float halflife, float dt);
void spring_critical_exact(vec3& x, vec3& v, vec3 goal, float halflife, float dt);
// Quaternion version: x is a rotation, v its angular velocity (parent frame). The spring acts on
// the scaled angle axis of abs(x * goal^-1), so it always takes the short way to the goal.
void spring_critical_exact(quat& x, vec3& v, quat goal, float halflife, float dt);

// Exact step of the damped oscillator x'' + 2 zeta w x' + w^2 x = 0 over dt (any zeta >= 0, any
// dt >= 0): [x, v](dt) = [[xx, xv], [vx, vv]] [x, v](0). Computed in double.
struct DampedStep {
    float xx = 1, xv = 0, vx = 0, vv = 1;
};
DampedStep damped_decay_step(float omega, float zeta, float dt);

// Offsets that decay to zero, for looping and inertialization. Each returns the offset after time
// t given its initial value x and rate v, and writes its rate of change to `rate`.

// Critically damped spring (never exactly zero: residual x * 2^-(t/halflife) order).
vec3 decayed_offset(vec3 x, vec3 v, float halflife, float t, vec3& rate);
// Cubic that reaches exactly zero value and rate at t = blendtime.
vec3 decayed_offset_cubic(vec3 x, vec3 v, float blendtime, float t, vec3& rate);
// Cubic starting at zero with rate v, ending at zero value and rate at blendtime: removes a
// velocity difference without moving the start value.
vec3 decayed_velocity_offset_cubic(vec3 v, float blendtime, float t, vec3& rate);
// Softfade: log(1 + exp(h - 2 h u)) / h, u = t / duration: ~1 - u ramp with soft corners,
// hardness h. softfade_grad_zero is its slope at u = 0.
float softfade(float u, float hardness);
float softfade_dx(float u, float hardness);
inline float softfade_grad_zero(float hardness) { return softfade_dx(0.0f, hardness); }
vec3 decayed_offset_softfade(vec3 x, float duration, float hardness, float t, vec3& rate);

}  // namespace ks
