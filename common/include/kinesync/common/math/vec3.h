#pragma once
// 3-vectors and scalar helpers. Plain data, header-only, float precision (what an engine runs).

#include <cmath>

namespace ks {

struct vec3 {
    float x = 0.0f, y = 0.0f, z = 0.0f;
    constexpr vec3() = default;
    constexpr vec3(float x_, float y_, float z_) : x(x_), y(y_), z(z_) {}
    constexpr explicit vec3(float s) : x(s), y(s), z(s) {}
};

constexpr vec3 operator+(vec3 a, vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
constexpr vec3 operator-(vec3 a, vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
constexpr vec3 operator-(vec3 a) { return {-a.x, -a.y, -a.z}; }
// Component-wise product and quotient (non-uniform scale).
constexpr vec3 operator*(vec3 a, vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
constexpr vec3 operator/(vec3 a, vec3 b) { return {a.x / b.x, a.y / b.y, a.z / b.z}; }
constexpr vec3 operator*(vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
constexpr vec3 operator*(float s, vec3 a) { return {a.x * s, a.y * s, a.z * s}; }
constexpr vec3 operator/(vec3 a, float s) { return {a.x / s, a.y / s, a.z / s}; }
constexpr vec3 operator/(float s, vec3 a) { return {s / a.x, s / a.y, s / a.z}; }
inline vec3& operator+=(vec3& a, vec3 b) { return a = a + b; }
inline vec3& operator-=(vec3& a, vec3 b) { return a = a - b; }
inline vec3& operator*=(vec3& a, float s) { return a = a * s; }

constexpr float dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
constexpr vec3 cross(vec3 a, vec3 b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline float length(vec3 a) { return std::sqrt(dot(a, a)); }
inline vec3 normalize(vec3 a, float eps = 1e-8f) { return a / (length(a) + eps); }
constexpr vec3 lerp(vec3 a, vec3 b, float t) { return a * (1.0f - t) + b * t; }
inline vec3 exp(vec3 a) { return {std::exp(a.x), std::exp(a.y), std::exp(a.z)}; }
inline vec3 log(vec3 a) { return {std::log(a.x), std::log(a.y), std::log(a.z)}; }
// Exponential interpolation, the right blend for scales: exp(lerp(log a, log b, t)).
inline vec3 eerp(vec3 a, vec3 b, float t) { return exp(lerp(log(a), log(b), t)); }
inline bool isfinite(vec3 a) { return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z); }

constexpr float lerpf(float a, float b, float t) { return a * (1.0f - t) + b * t; }
constexpr float clampf(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }
constexpr float squaref(float x) { return x * x; }

constexpr float kPi = 3.14159265358979323846f;
constexpr float kLn2 = 0.69314718055994530942f;

}  // namespace ks
