#pragma once
// The hot animation ops over blocks of V::N joints in structure-of-arrays form (V = simd::F4 or
// simd::F8), included by ops_simd_sse2.cpp, ops_simd_avx2.cpp and ops_simd_neon.cpp, one instantiation each. Poses
// stay arrays of structures: a block is gathered into SoA registers, computed, and scattered back.
// The algebra is the scalar ops' (ops_sample.cpp's cached sampler, quat_slerp_path_kinematic,
// ops_blend.cpp) with the polynomial math of common/src/simd/math.h; tests hold the two paths together.

#include "common/src/anim/ops_simd.h"
#include "common/src/simd/math.h"

namespace ks::simd_kernels {

using namespace ks::simd;

template <class V>
struct V3 {
    V x, y, z;
    friend V3 operator+(V3 a, V3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
    friend V3 operator-(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
    friend V3 operator*(V3 a, V s) { return {a.x * s, a.y * s, a.z * s}; }
    friend V3 operator*(V s, V3 a) { return {a.x * s, a.y * s, a.z * s}; }
};
template <class V>
struct Q {
    V w, x, y, z;
};

template <class V>
inline V dot(V3<V> a, V3<V> b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
template <class V>
inline V3<V> cross(V3<V> a, V3<V> b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
template <class V>
inline Q<V> qmul(Q<V> a, Q<V> b) {
    return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
template <class V>
inline V3<V> qrot(Q<V> q, V3<V> v) {  // quat_mul_vec3
    const V3<V> u{q.x, q.y, q.z};
    const V3<V> t = cross(u, v) * V(2.0f);
    return v + t * q.w + cross(u, t);
}

// Gathers and scatters between arrays of structures and SoA registers.
template <class V>
inline V3<V> load3(const vec3* p) {
    alignas(32) float x[V::N], y[V::N], z[V::N];
    for (int k = 0; k < V::N; ++k) x[k] = p[k].x, y[k] = p[k].y, z[k] = p[k].z;
    return {V::load(x), V::load(y), V::load(z)};
}
template <class V>
inline void store3(vec3* p, V3<V> v) {
    alignas(32) float x[V::N], y[V::N], z[V::N];
    v.x.store(x), v.y.store(y), v.z.store(z);
    for (int k = 0; k < V::N; ++k) p[k] = {x[k], y[k], z[k]};
}
template <class V>
inline Q<V> loadq(const quat* p) {
    alignas(32) float w[V::N], x[V::N], y[V::N], z[V::N];
    for (int k = 0; k < V::N; ++k) w[k] = p[k].w, x[k] = p[k].x, y[k] = p[k].y, z[k] = p[k].z;
    return {V::load(w), V::load(x), V::load(y), V::load(z)};
}
template <class V>
inline void storeq(quat* p, Q<V> q) {
    alignas(32) float w[V::N], x[V::N], y[V::N], z[V::N];
    q.w.store(w), q.x.store(x), q.y.store(y), q.z.store(z);
    for (int k = 0; k < V::N; ++k) p[k] = {w[k], x[k], y[k], z[k]};
}
// Faster gathers and scatters for F4 (and F8 as two halves): 4 packed vec3 (12 floats) <-> x, y, z
// registers, and 4 quats <-> w, x, y, z; SSE2 with shuffles and a 4x4 transpose, NEON with its
// structure loads and stores (vld3q/vst3q, vld4q/vst4q), which (de)interleave exactly so.
static_assert(sizeof(vec3) == 12 && sizeof(quat) == 16);
#if defined(__SSE2__)
inline void deinterleave3(const float* p, __m128& x, __m128& y, __m128& z) {
    const __m128 a = _mm_loadu_ps(p), b = _mm_loadu_ps(p + 4), c = _mm_loadu_ps(p + 8);
    x = _mm_shuffle_ps(_mm_shuffle_ps(a, a, _MM_SHUFFLE(3, 0, 3, 0)), _mm_shuffle_ps(b, c, _MM_SHUFFLE(1, 1, 2, 2)), _MM_SHUFFLE(2, 0, 1, 0));
    y = _mm_shuffle_ps(_mm_shuffle_ps(a, b, _MM_SHUFFLE(0, 0, 1, 1)), _mm_shuffle_ps(b, c, _MM_SHUFFLE(2, 2, 3, 3)), _MM_SHUFFLE(2, 0, 2, 0));
    z = _mm_shuffle_ps(_mm_shuffle_ps(a, b, _MM_SHUFFLE(1, 1, 2, 2)), _mm_shuffle_ps(c, c, _MM_SHUFFLE(3, 3, 0, 0)), _MM_SHUFFLE(2, 0, 2, 0));
}
inline void interleave3(float* p, __m128 x, __m128 y, __m128 z) {
    _mm_storeu_ps(p, _mm_shuffle_ps(_mm_shuffle_ps(x, y, _MM_SHUFFLE(0, 0, 0, 0)), _mm_shuffle_ps(z, x, _MM_SHUFFLE(1, 1, 0, 0)), _MM_SHUFFLE(2, 0, 2, 0)));
    _mm_storeu_ps(p + 4, _mm_shuffle_ps(_mm_shuffle_ps(y, z, _MM_SHUFFLE(1, 1, 1, 1)), _mm_shuffle_ps(x, y, _MM_SHUFFLE(2, 2, 2, 2)), _MM_SHUFFLE(2, 0, 2, 0)));
    _mm_storeu_ps(p + 8, _mm_shuffle_ps(_mm_shuffle_ps(z, x, _MM_SHUFFLE(3, 3, 2, 2)), _mm_shuffle_ps(y, z, _MM_SHUFFLE(3, 3, 3, 3)), _MM_SHUFFLE(2, 0, 2, 0)));
}
inline void transpose_quats(const float* p, __m128& w, __m128& x, __m128& y, __m128& z) {
    __m128 a = _mm_loadu_ps(p), b = _mm_loadu_ps(p + 4), c = _mm_loadu_ps(p + 8), d = _mm_loadu_ps(p + 12);
    _MM_TRANSPOSE4_PS(a, b, c, d);
    w = a, x = b, y = c, z = d;
}
inline void untranspose_quats(float* p, __m128 w, __m128 x, __m128 y, __m128 z) {
    _MM_TRANSPOSE4_PS(w, x, y, z);
    _mm_storeu_ps(p, w), _mm_storeu_ps(p + 4, x), _mm_storeu_ps(p + 8, y), _mm_storeu_ps(p + 12, z);
}

template <>
inline V3<F4> load3<F4>(const vec3* p) {
    __m128 x, y, z;
    deinterleave3(&p->x, x, y, z);
    return {x, y, z};
}
template <>
inline void store3<F4>(vec3* p, V3<F4> v) { interleave3(&p->x, v.x.v, v.y.v, v.z.v); }
template <>
inline Q<F4> loadq<F4>(const quat* p) {
    __m128 w, x, y, z;
    transpose_quats(&p->w, w, x, y, z);
    return {w, x, y, z};
}
template <>
inline void storeq<F4>(quat* p, Q<F4> q) { untranspose_quats(&p->w, q.w.v, q.x.v, q.y.v, q.z.v); }

#elif defined(__aarch64__) || defined(_M_ARM64)
template <>
inline V3<F4> load3<F4>(const vec3* p) {
    const float32x4x3_t r = vld3q_f32(&p->x);
    return {r.val[0], r.val[1], r.val[2]};
}
template <>
inline void store3<F4>(vec3* p, V3<F4> v) {
    float32x4x3_t r;
    r.val[0] = v.x.v, r.val[1] = v.y.v, r.val[2] = v.z.v;
    vst3q_f32(&p->x, r);
}
template <>
inline Q<F4> loadq<F4>(const quat* p) {
    const float32x4x4_t r = vld4q_f32(&p->w);
    return {r.val[0], r.val[1], r.val[2], r.val[3]};
}
template <>
inline void storeq<F4>(quat* p, Q<F4> q) {
    float32x4x4_t r;
    r.val[0] = q.w.v, r.val[1] = q.x.v, r.val[2] = q.y.v, r.val[3] = q.z.v;
    vst4q_f32(&p->w, r);
}
#endif  // __SSE2__ / __aarch64__

#ifdef __AVX2__
inline __m256 join(__m128 lo, __m128 hi) { return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1); }
template <>
inline V3<F8> load3<F8>(const vec3* p) {
    __m128 x0, y0, z0, x1, y1, z1;
    deinterleave3(&p->x, x0, y0, z0);
    deinterleave3(&p[4].x, x1, y1, z1);
    return {join(x0, x1), join(y0, y1), join(z0, z1)};
}
template <>
inline void store3<F8>(vec3* p, V3<F8> v) {
    interleave3(&p->x, _mm256_castps256_ps128(v.x.v), _mm256_castps256_ps128(v.y.v), _mm256_castps256_ps128(v.z.v));
    interleave3(&p[4].x, _mm256_extractf128_ps(v.x.v, 1), _mm256_extractf128_ps(v.y.v, 1), _mm256_extractf128_ps(v.z.v, 1));
}
template <>
inline Q<F8> loadq<F8>(const quat* p) {
    __m128 w0, x0, y0, z0, w1, x1, y1, z1;
    transpose_quats(&p->w, w0, x0, y0, z0);
    transpose_quats(&p[4].w, w1, x1, y1, z1);
    return {join(w0, w1), join(x0, x1), join(y0, y1), join(z0, z1)};
}
template <>
inline void storeq<F8>(quat* p, Q<F8> q) {
    untranspose_quats(&p->w, _mm256_castps256_ps128(q.w.v), _mm256_castps256_ps128(q.x.v), _mm256_castps256_ps128(q.y.v),
                      _mm256_castps256_ps128(q.z.v));
    untranspose_quats(&p[4].w, _mm256_extractf128_ps(q.w.v, 1), _mm256_extractf128_ps(q.x.v, 1), _mm256_extractf128_ps(q.y.v, 1),
                      _mm256_extractf128_ps(q.z.v, 1));
}
#endif

// Whether V::N packed vec3s are all zero (+0 or -0; the bits ORed, no shuffles), and their zeroing.
template <class V>
inline bool all_zero3(const vec3* p) {
    const float* f = &p->x;
    const V bits = V::load(f) | V::load(f + V::N) | V::load(f + 2 * V::N);
    return !any(bits != V(0.0f));
}
template <class V>
inline void zero3(vec3* p) {
    float* f = &p->x;
    for (int k = 0; k < 3; ++k) V(0.0f).store(f + k * V::N);
}

// V::N packed vec3s as three registers of consecutive floats (x y z x y z ...), no (de)interleaving:
// for channels whose arithmetic is the same on every component.
template <class V>
struct Flat {
    V r[3];
    static Flat load(const vec3* p) {
        const float* f = &p->x;
        return {{V::load(f), V::load(f + V::N), V::load(f + 2 * V::N)}};
    }
    void store(vec3* p) const {
        float* f = &p->x;
        for (int k = 0; k < 3; ++k) r[k].store(f + k * V::N);
    }
    template <class F>
    Flat map(F f) const { return {{f(r[0], 0), f(r[1], 1), f(r[2], 2)}}; }
    bool any_nonzero() const { return any((r[0] != V(0.0f)) | (r[1] != V(0.0f)) | (r[2] != V(0.0f))); }
};

// Cache rows (x, y, z, c per joint, consecutive joints); nullptr: zeros (and c = 1/12).
template <class V>
inline void load_rows(const float* rows, V3<V>& u, V& c) {
    if (!rows) {
        u = {V(0.0f), V(0.0f), V(0.0f)};
        c = V(1.0f / 12.0f);
        return;
    }
    alignas(32) float x[V::N], y[V::N], z[V::N], cc[V::N];
    for (int k = 0; k < V::N; ++k) x[k] = rows[4 * k], y[k] = rows[4 * k + 1], z[k] = rows[4 * k + 2], cc[k] = rows[4 * k + 3];
    u = {V::load(x), V::load(y), V::load(z)};
    c = V::load(cc);
}

// exp(phi / 2) (a rotation by |phi| = theta, t2 = theta^2) and, when wanted, the coefficients of
// J_l(phi) = I + a [phi]x + b [phi]x^2, sharing one sincos and one division.
template <class V, bool kJacobian>
inline Q<V> exp_and_coeffs(V3<V> phi, V t2, V theta, V& a, V& b) {
    const V half = V(0.5f) * theta;
    V sh, ch;
    sincos(half, sh, ch);
    const V small = half < V(1e-4f);
    const V taylor_k = V(0.5f) * (V(1.0f) - half * half * V(1.0f / 6.0f));
    // The same k with and without the Jacobian: the values-only path gives the same values.
    const V inv = V(1.0f) / select(small, V(1.0f), theta);
    const V k = select(small, taylor_k, sh * inv);
    if constexpr (kJacobian) {
        // Series below theta = 0.3, where the closed forms cancel; a clip's per-frame rotations
        // mostly are, so the closed forms are skipped when no lane needs them.
        a = V(0.5f) - t2 * (V(1.0f / 24.0f) - t2 * (V(1.0f / 720.0f) - t2 * V(1.0f / 40320.0f)));
        b = V(1.0f / 6.0f) - t2 * (V(1.0f / 120.0f) - t2 * (V(1.0f / 5040.0f) - t2 * V(1.0f / 362880.0f)));
        const V wide = V(0.09f) < t2;
        if (any(wide)) {
            const V inv2 = inv * inv;
            a = select(wide, V(2.0f) * sh * sh * inv2, a);
            b = select(wide, (theta - V(2.0f) * sh * ch) * inv2 * inv, b);
        }
    }
    return {ch, phi.x * k, phi.y * k, phi.z * k};
}
// exp(phi / 2) and, when wanted, J_l(phi) v.
template <class V, bool kJacobian>
inline Q<V> exp_and_jacobian(V3<V> phi, V3<V> v, V3<V>& jv) {
    const V t2 = dot(phi, phi);
    V a, b;
    const Q<V> e = exp_and_coeffs<V, kJacobian>(phi, t2, sqrt(t2), a, b);
    if constexpr (kJacobian) {
        const V3<V> pv = cross(phi, v);
        jv = v + pv * a + cross(phi, pv) * b;
    }
    return e;
}

// exp_and_jacobian by Taylor series when every lane turns by less than half a radian (as
// quat_exp and so3_left_jacobian_mul do in scalar code): no square root, division or sincos for the
// client's per-frame steps and small corrections. Truncation below 1e-8 relative.
template <class V, bool kJacobian>
inline Q<V> exp_and_jacobian_small(V3<V> phi, V3<V> v, V3<V>& jv) {
    const V t2 = dot(phi, phi);
    if (any(V(0.25f) < t2)) return exp_and_jacobian<V, kJacobian>(phi, v, jv);
    const V h2 = V(0.25f) * t2;  // the half angle, squared
    const V sinc = V(1.0f) - h2 * (V(1.0f / 6.0f) - h2 * (V(1.0f / 120.0f) - h2 * (V(1.0f / 5040.0f) - h2 * V(1.0f / 362880.0f))));
    const V c = V(1.0f) - h2 * (V(0.5f) - h2 * (V(1.0f / 24.0f) - h2 * (V(1.0f / 720.0f) - h2 * V(1.0f / 40320.0f))));
    if constexpr (kJacobian) {
        const V a = V(0.5f) - t2 * (V(1.0f / 24.0f) - t2 * (V(1.0f / 720.0f) - t2 * (V(1.0f / 40320.0f) - t2 * V(1.0f / 3628800.0f))));
        const V b = V(1.0f / 6.0f) - t2 * (V(1.0f / 120.0f) - t2 * (V(1.0f / 5040.0f) - t2 * (V(1.0f / 362880.0f) - t2 * V(1.0f / 39916800.0f))));
        const V3<V> pv = cross(phi, v);
        jv = v + pv * a + cross(phi, pv) * b;
    }
    const V k = V(0.5f) * sinc;  // sin(theta / 2) / theta
    return {c, phi.x * k, phi.y * k, phi.z * k};
}

// From a unit path quaternion, the length s of its vector part and its half angle h = atan2(s, w):
// u = log(path) as a rotation vector (|u| = 2h; k = 2h / s, its limit 2 / w for a vanishing
// path), t2 = |u|^2 and the c of J_l(u)^-1 = I - [u]x / 2 + c [u]x^2 (its series below half a
// radian, where the closed form cancels).
template <class V>
struct PathLog {
    V3<V> u;
    V k, t2, c;
};
template <class V>
inline PathLog<V> path_log(Q<V> path, V s, V h) {
    const V one(1.0f), tiny = s < V(1e-20f);
    PathLog<V> r;
    r.k = select(tiny, V(2.0f) / path.w, V(2.0f) * h / select(tiny, one, s));
    r.u = V3<V>{path.x, path.y, path.z} * r.k;
    r.t2 = V(4.0f) * h * h;
    const V taylor = r.t2 < V(0.25f);
    r.c = select(taylor, V(1.0f / 12.0f) + r.t2 * (V(1.0f / 720.0f) + r.t2 * (V(1.0f / 30240.0f) + r.t2 * V(1.0f / 1209600.0f))),
                 (one - V(0.5f) * r.k * path.w) / select(taylor, one, r.t2));
    return r;
}

template <class V, bool kVelocities>
void sample_cubic_block(const CubicBlockArgs& a, size_t j) {
    const V h00(a.h[0]), h10(a.h[1]), h01(a.h[2]), h11(a.h[3]);
    const V d10(a.d[0]), d01(a.d[1]), d11(a.d[2]);
    const V inv_den0(a.inv_den0), inv_den1(a.inv_den1);
    const V3<V> pm = load3<V>(a.pos_m + j), p0 = load3<V>(a.pos_0 + j), p1 = load3<V>(a.pos_1 + j), p2 = load3<V>(a.pos_2 + j);
    const V3<V> m0 = (p1 - pm) * inv_den0, m1 = (p2 - p0) * inv_den1;
    store3<V>(a.out_pos + j, p0 * h00 + m0 * h10 + p1 * h01 + m1 * h11);
    if constexpr (kVelocities) store3<V>(a.out_vel + j, (p1 - p0) * d01 + m0 * d10 + m1 * d11);

    V3<V> u_m0, u_01, u_12;
    V c_m0, c_01, c_12;
    load_rows<V>(a.row_m0 ? a.row_m0 + 4 * j : nullptr, u_m0, c_m0);
    load_rows<V>(a.row_01 ? a.row_01 + 4 * j : nullptr, u_01, c_01);
    load_rows<V>(a.row_12 ? a.row_12 + 4 * j : nullptr, u_12, c_12);
    const V3<V> w0 = (u_m0 + u_01) * inv_den0, w1 = (u_01 + u_12) * inv_den1;
    const V3<V> pv = cross(u_01, w1);
    const V3<V> t1 = w1 - pv * V(0.5f) + cross(u_01, pv) * c_01;
    const V3<V> phi = w0 * h10 + u_01 * h01 + t1 * h11;
    V3<V> ang;
    const V3<V> dphi = w0 * d10 + u_01 * d01 + t1 * d11;
    const Q<V> e = exp_and_jacobian<V, kVelocities>(phi, dphi, ang);
    storeq<V>(a.out_rot + j, qmul(e, loadq<V>(a.rot_0 + j)));
    if constexpr (kVelocities) store3<V>(a.out_ang + j, ang);

    bool scaled = false;
    for (int k = 0; k < V::N; ++k) scaled = scaled || a.scaled[j + size_t(k)];
    if (!scaled) {
        const V3<V> one{V(1.0f), V(1.0f), V(1.0f)}, zero{V(0.0f), V(0.0f), V(0.0f)};
        store3<V>(a.out_scl + j, one);
        if constexpr (kVelocities) store3<V>(a.out_svl + j, zero);
        return;
    }
    // log_scl rows hold 0 for unscaled joints (log 1), so a mixed block needs no special case.
    const V3<V> lm = load3<V>(a.ls_m + j), l0 = load3<V>(a.ls_0 + j), l1 = load3<V>(a.ls_1 + j), l2 = load3<V>(a.ls_2 + j);
    const V3<V> n0 = (l1 - lm) * inv_den0, n1 = (l2 - l0) * inv_den1;
    const V3<V> l = l0 * h00 + n0 * h10 + l1 * h01 + n1 * h11;
    store3<V>(a.out_scl + j, V3<V>{exp(l.x), exp(l.y), exp(l.z)});
    if constexpr (kVelocities) store3<V>(a.out_svl + j, (l1 - l0) * d01 + n0 * d10 + n1 * d11);
}

// op_blend over a block: linear parts, eerp scales, and the fused slerp kinematics.
template <class V, bool kVelocities>
void blend_block(const BlendBlockArgs& a, size_t j) {
    const V al(a.alpha), da(a.alpha_vel), one(1.0f);
    const V3<V> pl = load3<V>(a.l_pos + j), pr = load3<V>(a.r_pos + j);
    store3<V>(a.out_pos + j, pl + (pr - pl) * al);
    const V3<V> sl = load3<V>(a.l_scl + j), sr = load3<V>(a.r_scl + j);
    const V differ = (sl.x != sr.x) | (sl.y != sr.y) | (sl.z != sr.z);
    V3<V> ls{V(0.0f), V(0.0f), V(0.0f)}, lr = ls;
    if (any(differ)) {
        ls = {log(sl.x), log(sl.y), log(sl.z)};
        lr = {log(sr.x), log(sr.y), log(sr.z)};
        const V3<V> l = ls + (lr - ls) * al;
        store3<V>(a.out_scl + j, V3<V>{select(differ, exp(l.x), sl.x), select(differ, exp(l.y), sl.y), select(differ, exp(l.z), sl.z)});
    } else {
        store3<V>(a.out_scl + j, sl);
    }
    const Q<V> ql = loadq<V>(a.l_rot + j), qr = loadq<V>(a.r_rot + j);
    // path = abs(qr ql^-1), or (blend_via) qr ql^-1 on the side of the previous path, kept.
    Q<V> path = qmul(qr, Q<V>{ql.w, -ql.x, -ql.y, -ql.z});
    V neg;
    if (a.dirs) {
        const Q<V> d = loadq<V>(a.dirs + j);
        neg = (d.w * path.w + d.x * path.x + d.y * path.y + d.z * path.z) < V(0.0f);
    } else {
        neg = path.w < V(0.0f);
    }
    const V flip = neg & V(-0.0f);
    path = {path.w ^ flip, path.x ^ flip, path.y ^ flip, path.z ^ flip};
    if (a.dirs) storeq<V>(a.dirs + j, path);
    const V3<V> pv{path.x, path.y, path.z};
    const V s = sqrt(dot(pv, pv));
    const V h = atan2(s, path.w);
    const V tiny = s < V(1e-20f);
    if constexpr (!kVelocities) {
        // exp(alpha log(path)) ql: sin(alpha h) / s, its limit alpha / w for a vanishing path.
        V sh, ch;
        sincos(al * h, sh, ch);
        const V k = select(tiny, al / path.w, sh / select(tiny, one, s));
        storeq<V>(a.out_rot + j, qmul(Q<V>{ch, pv.x * k, pv.y * k, pv.z * k}, ql));
        return;
    } else {
        const V3<V> vl = load3<V>(a.l_vel + j), vr = load3<V>(a.r_vel + j);
        store3<V>(a.out_vel + j, vl + (vr - vl) * al + (pr - pl) * da);
        // Constant scales on both sides (the common case) blend to zero scale velocities.
        if (!any(differ) && all_zero3<V>(a.l_svl + j) && all_zero3<V>(a.r_svl + j)) {
            zero3<V>(a.out_svl + j);
        } else {
            V3<V> svl = load3<V>(a.l_svl + j);
            svl = svl + (load3<V>(a.r_svl + j) - svl) * al;
            svl = svl + V3<V>{(lr.x - ls.x) & differ, (lr.y - ls.y) & differ, (lr.z - ls.z) & differ} * da;
            store3<V>(a.out_svl + j, svl);
        }
        const V3<V> wq = load3<V>(a.l_ang + j), wp = load3<V>(a.r_ang + j);
        const PathLog<V> lg = path_log(path, s, h);
        const V3<V> u = lg.u;
        const V t2u = lg.t2, c = lg.c;
        const V3<V> w_path = wp - qrot(path, wq);  // = J_l(u) du/dt
        const V3<V> phi = u * al;
        const V theta = V(2.0f) * h * abs(al);  // |phi| = |alpha| |u|, no square root needed
        V ca, cb;
        const Q<V> rot_a = exp_and_coeffs<V, true>(phi, theta * theta, theta, ca, cb);
        // ang = J_l(alpha u) (alpha' u + alpha du/dt) + R_a wq, and J_l(alpha u) u = u. The product
        // J_l(alpha u) J_l^-1(u) of two series in U = [u]x (U^3 = -|u|^2 U) is I + m1 U + m2 U^2.
        const V p1 = al * ca, q1 = al * al * cb;
        const V m1 = p1 - V(0.5f) - t2u * (p1 * c - V(0.5f) * q1);
        const V m2 = q1 + c - V(0.5f) * p1 - t2u * q1 * c;
        const V3<V> uw = cross(u, w_path);
        const V3<V> jv = u * da + (w_path + uw * m1 + cross(u, uw) * m2) * al;
        store3<V>(a.out_ang + j, jv + qrot(rot_a, wq));
        storeq<V>(a.out_rot + j, qmul(rot_a, ql));
    }
}

// op_extrapolate_decayed over a block: everything but the rotation component by component.
template <class V, bool kVelocities>
void extrapolate_block(const ExtrapolateBlockArgs& a, size_t j) {
    const V al(a.alpha), decay(a.decay);
    const Flat<V> p = Flat<V>::load(a.pos + j), v = Flat<V>::load(a.vel + j), s = Flat<V>::load(a.scl + j),
                  sv = Flat<V>::load(a.svl + j);
    p.map([&](V x, int k) { return x + v.r[k] * al; }).store(a.out_pos + j);
    if (sv.any_nonzero()) s.map([&](V x, int k) { return x * exp(sv.r[k] * al); }).store(a.out_scl + j);
    else s.store(a.out_scl + j);
    const V3<V> w = load3<V>(a.ang + j);
    V3<V> unused;
    storeq<V>(a.out_rot + j, qmul(exp_and_jacobian_small<V, false>(w * al, w, unused), loadq<V>(a.rot + j)));
    // Along a fixed axis J_l is the identity: the rates just decay.
    if constexpr (kVelocities) {
        auto decayed = [&](V x, int) { return x * decay; };
        v.map(decayed).store(a.out_vel + j);
        Flat<V>::load(a.ang + j).map(decayed).store(a.out_ang + j);
        sv.map(decayed).store(a.out_svl + j);
    }
}

// The spring offset (ops_inertialize.cpp) over a block. Joints whose rotation, rate or scale
// offsets are exactly zero get exactly what the scalar ops' shortcuts give them (masks, not the
// formulas' rounding), so a settled joint shows its input bit for bit at every level.
template <class V>
inline V differs3(V3<V> a, V3<V> b) { return (a.x != b.x) | (a.y != b.y) | (a.z != b.z); }
template <class V>
inline V3<V> masked(V3<V> a, V m) { return {a.x & m, a.y & m, a.z & m}; }
template <class V>
inline V3<V> select3(V m, V3<V> a, V3<V> b) { return {select(m, a.x, b.x), select(m, a.y, b.y), select(m, a.z, b.z)}; }

template <class V>
void offset_capture_block(const OffsetCaptureBlockArgs& a, size_t j) {
    auto minus = [](const vec3* x, const vec3* y, size_t j) {
        const Flat<V> fy = Flat<V>::load(y + j);
        return Flat<V>::load(x + j).map([&](V u, int k) { return u - fy.r[k]; });
    };
    minus(a.src.pos, a.dst.pos, j).store(a.out.pos + j);
    minus(a.src.vel, a.dst.vel, j).store(a.out.vel + j);
    minus(a.src.svl, a.dst.svl, j).store(a.out.svl + j);
    const Flat<V> ss = Flat<V>::load(a.src.scl + j), ds = Flat<V>::load(a.dst.scl + j);
    const V differ[3] = {ss.r[0] != ds.r[0], ss.r[1] != ds.r[1], ss.r[2] != ds.r[2]};
    if (any(differ[0] | differ[1] | differ[2])) ss.map([&](V u, int k) { return differ[k] & log(u / ds.r[k]); }).store(a.out.scl + j);
    else Flat<V>{{V(0.0f), V(0.0f), V(0.0f)}}.store(a.out.scl + j);  // what log 1 gives, where they are equal
    const Q<V> sq = loadq<V>(a.src.rot + j), dq = loadq<V>(a.dst.rot + j);
    const V3<V> sw = load3<V>(a.src.ang + j), dw = load3<V>(a.dst.ang + j);
    const V turned = (sq.w != dq.w) | differs3(V3<V>{sq.x, sq.y, sq.z}, V3<V>{dq.x, dq.y, dq.z}) | differs3(sw, dw);
    const V3<V> zero{V(0.0f), V(0.0f), V(0.0f)};
    if (!any(turned)) {
        store3<V>(a.out.rot + j, zero);
        store3<V>(a.out.ang + j, zero);
        return;
    }
    // off = abs(src dst^-1), x = its rotation vector, rate = J_l(x)^-1 (w_src - R(off) w_dst).
    Q<V> off = qmul(sq, Q<V>{dq.w, -dq.x, -dq.y, -dq.z});
    const V flip = (off.w < V(0.0f)) & V(-0.0f);
    off = {off.w ^ flip, off.x ^ flip, off.y ^ flip, off.z ^ flip};
    const V3<V> pv{off.x, off.y, off.z};
    const V s = sqrt(dot(pv, pv));
    const V h = atan2(s, off.w);
    const V tiny = s < V(1e-20f);
    const V k = select(tiny, V(2.0f) / off.w, V(2.0f) * h / select(tiny, V(1.0f), s));
    const V3<V> x = pv * k;
    const V t2 = V(4.0f) * h * h;
    const V taylor = t2 < V(0.25f);
    const V c = select(taylor, V(1.0f / 12.0f) + t2 * (V(1.0f / 720.0f) + t2 * (V(1.0f / 30240.0f) + t2 * V(1.0f / 1209600.0f))),
                       (V(1.0f) - V(0.5f) * k * off.w) / select(taylor, V(1.0f), t2));
    const V3<V> r = sw - qrot(off, dw);
    const V3<V> xr = cross(x, r);
    store3<V>(a.out.rot + j, masked(x, turned));
    store3<V>(a.out.ang + j, masked(r - xr * V(0.5f) + cross(x, xr) * c, turned));
}

template <class V>
void decay_flat(float* x, float* v, size_t n, const float* step) {
    const V xx(step[0]), xv(step[1]), vx(step[2]), vv(step[3]);
    for (size_t i = 0; i + V::N <= n; i += V::N) {
        const V x0 = V::load(x + i), v0 = V::load(v + i);
        (x0 * xx + v0 * xv).store(x + i);
        (x0 * vx + v0 * vv).store(v + i);
    }
}

template <class V>
void lengths(const vec3* v, float* out, size_t n) {
    for (size_t i = 0; i + V::N <= n; i += V::N) {
        const V3<V> u = load3<V>(v + i);
        sqrt(dot(u, u)).store(out + i);
    }
}

template <class V, bool kVelocities>
void offset_apply_block(const OffsetApplyBlockArgs& a, size_t j) {
    auto plus = [](const vec3* x, const vec3* y, size_t j) {
        const Flat<V> fy = Flat<V>::load(y + j);
        return Flat<V>::load(x + j).map([&](V u, int k) { return u + fy.r[k]; });
    };
    plus(a.input.pos, a.offset.pos, j).store(a.out.pos + j);
    const Flat<V> ls = Flat<V>::load(a.offset.scl + j), in_scl = Flat<V>::load(a.input.scl + j);
    if (ls.any_nonzero()) in_scl.map([&](V u, int k) { return select(ls.r[k] != V(0.0f), u * exp(ls.r[k]), u); }).store(a.out.scl + j);
    else in_scl.store(a.out.scl + j);
    if constexpr (kVelocities) {
        plus(a.input.vel, a.offset.vel, j).store(a.out.vel + j);
        plus(a.input.svl, a.offset.svl, j).store(a.out.svl + j);
    }
    const Q<V> q = loadq<V>(a.input.rot + j);
    const V3<V> x = load3<V>(a.offset.rot + j), zero{V(0.0f), V(0.0f), V(0.0f)};
    const V3<V> w = kVelocities ? load3<V>(a.offset.ang + j) : zero;
    V turned = differs3(x, zero);
    if constexpr (kVelocities) turned = turned | differs3(w, zero);
    if (!any(turned)) {
        storeq<V>(a.out.rot + j, q);
        if constexpr (kVelocities) Flat<V>::load(a.input.ang + j).store(a.out.ang + j);
        return;
    }
    // out = exp(x) input; its rate J_l(x) x' + R(exp x) w_input.
    V3<V> jw;
    const Q<V> e = exp_and_jacobian_small<V, kVelocities>(x, w, jw);
    const Q<V> r = qmul(e, q);
    storeq<V>(a.out.rot + j, Q<V>{select(turned, r.w, q.w), select(turned, r.x, q.x), select(turned, r.y, q.y), select(turned, r.z, q.z)});
    if constexpr (kVelocities) {
        const V3<V> in_ang = load3<V>(a.input.ang + j);
        store3<V>(a.out.ang + j, select3(turned, jw + qrot(e, in_ang), in_ang));
    }
}

// op_hermite_prepare's rotations over a block: u = log(abs(qb qa^-1)) as a rotation vector and the
// end tangent w1 = J_l(u)^-1 (ang_b dt), one atan2 for both (as blend_block's path).
template <class V>
void hermite_prepare_block(const HermitePrepareBlockArgs& a, size_t j) {
    const Q<V> qa = loadq<V>(a.rot_a + j);
    Q<V> path = qmul(loadq<V>(a.rot_b + j), Q<V>{qa.w, -qa.x, -qa.y, -qa.z});
    const V flip = (path.w < V(0.0f)) & V(-0.0f);
    path = {path.w ^ flip, path.x ^ flip, path.y ^ flip, path.z ^ flip};
    const V3<V> pv{path.x, path.y, path.z};
    const V s = sqrt(dot(pv, pv)), one(1.0f);
    const PathLog<V> lg = path_log(path, s, atan2(s, path.w));
    const V3<V> v = load3<V>(a.ang_b + j) * V(a.dt);
    const V3<V> uv = cross(lg.u, v);
    store3<V>(a.u + j, lg.u);
    store3<V>(a.w1 + j, v - uv * V(0.5f) + cross(lg.u, uv) * lg.c);
    // Scaled: a scale other than 1 or a scale velocity at either end; its log scales (0 elsewhere).
    const V3<V> sa = load3<V>(a.scl_a + j), sb = load3<V>(a.scl_b + j), one3{one, one, one}, none{V(0.0f), V(0.0f), V(0.0f)};
    const V scaled = differs3(sa, one3) | differs3(sb, one3) | differs3(load3<V>(a.svl_a + j), none) | differs3(load3<V>(a.svl_b + j), none);
    alignas(32) float flags[V::N];
    scaled.store(flags);
    for (int k = 0; k < V::N; ++k) a.scaled[j + size_t(k)] = flags[k] != 0.0f;
    if (!any(scaled)) {
        zero3<V>(a.ls_a + j), zero3<V>(a.ls_b + j);
        return;
    }
    store3<V>(a.ls_a + j, V3<V>{log(sa.x) & scaled, log(sa.y) & scaled, log(sa.z) & scaled});
    store3<V>(a.ls_b + j, V3<V>{log(sb.x) & scaled, log(sb.y) & scaled, log(sb.z) & scaled});
}

// op_hermite over a block: positions and log scales component by component, rotations as the
// cubic in a's rotation-vector space with their exact rate.
template <class V>
void hermite_block(const HermiteBlockArgs& a, size_t j) {
    const V h00(a.h[0]), h10(a.h[1]), h01(a.h[2]), h11(a.h[3]);
    const V d00(a.d[0]), d10(a.d[1]), d01(a.d[2]), d11(a.d[3]);
    const V dt(a.dt), inv(a.inv);
    auto cubic = [&](const vec3* x0, const vec3* v0, const vec3* x1, const vec3* v1, vec3* value, vec3* rate) {
        const Flat<V> p0 = Flat<V>::load(x0 + j), m0 = Flat<V>::load(v0 + j), p1 = Flat<V>::load(x1 + j), m1 = Flat<V>::load(v1 + j);
        p0.map([&](V p, int k) { return h00 * p + h10 * (m0.r[k] * dt) + h01 * p1.r[k] + h11 * (m1.r[k] * dt); }).store(value + j);
        p0.map([&](V p, int k) { return (d00 * p + d10 * (m0.r[k] * dt) + d01 * p1.r[k] + d11 * (m1.r[k] * dt)) * inv; }).store(rate + j);
    };
    cubic(a.a.pos, a.a.vel, a.b.pos, a.b.vel, a.out.pos, a.out.vel);
    const V3<V> u = load3<V>(a.u + j), w0 = load3<V>(a.a.ang + j) * dt, w1 = load3<V>(a.w1 + j);
    const V3<V> phi = w0 * h10 + u * h01 + w1 * h11, dphi = w0 * d10 + u * d01 + w1 * d11;
    V3<V> jv;
    const Q<V> e = exp_and_jacobian_small<V, true>(phi, dphi, jv);
    storeq<V>(a.out.rot + j, qmul(e, loadq<V>(a.a.rot + j)));
    store3<V>(a.out.ang + j, jv * inv);
    bool scaled = false;
    for (int k = 0; k < V::N; ++k) scaled = scaled || a.scaled[j + size_t(k)];
    if (!scaled) {
        Flat<V>{{V(1.0f), V(1.0f), V(1.0f)}}.store(a.out.scl + j);
        zero3<V>(a.out.svl + j);
        return;
    }
    // Unscaled joints' log scales and scale velocities are 0: exp(0) = 1 exactly, a mixed block
    // needs no special case.
    cubic(a.ls_a, a.a.svl, a.ls_b, a.b.svl, a.out.scl, a.out.svl);
    Flat<V>::load(a.out.scl + j).map([](V l, int) { return exp(l); }).store(a.out.scl + j);
}

// The dispatch table of the kernels over vector type V (one per instantiating file).
template <class V>
const SimdOps* kernel_table() {
    static const SimdOps ops{V::N,
                             {&sample_cubic_block<V, false>, &sample_cubic_block<V, true>},
                             {&blend_block<V, false>, &blend_block<V, true>},
                             {&extrapolate_block<V, false>, &extrapolate_block<V, true>},
                             &offset_capture_block<V>,
                             &decay_flat<V>,
                             &lengths<V>,
                             {&offset_apply_block<V, false>, &offset_apply_block<V, true>},
                             &hermite_prepare_block<V>,
                             &hermite_block<V>};
    return &ops;
}

}  // namespace ks::simd_kernels
