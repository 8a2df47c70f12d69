#include <kinesync/common/anim/ops_fk.h>

#include "common/src/anim/op_checks.h"

#include "common/src/anim/ops_simd.h"
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ks {

namespace {

// quat_mul in the SIMD kernel's order: (w b + x b1) + (y b2 + z b3), the sums paired as the
// vector lanes pair them. One arithmetic order whatever the instruction set, so a world pose is
// the same bits on x86-64 (SSE2, AVX2) and on AArch64 (where FK runs this scalar path).
constexpr quat quat_mul_paired(quat a, quat b) {
    return {(a.w * b.w - a.x * b.x) - (a.y * b.y + a.z * b.z), (a.w * b.x + a.x * b.w) + (a.y * b.z - a.z * b.y),
            (a.w * b.y - a.x * b.z) + (a.y * b.w + a.z * b.x), (a.w * b.z + a.x * b.y) + (a.z * b.w - a.y * b.x)};
}

// The scalar reference: kform_mul inline, on the arrays, with the two rotations of the linear
// velocity merged: R (w.vel s) + R (w.pos s svl) = R ((w.vel + w.pos svl) s). quat_mul_vec3 and
// cross already add in the SIMD kernel's order.
void fk_scalar(Pose& global, const Pose& local, Span<const int> parents) {
    for (size_t i = 0; i < parents.size(); ++i) {
        const int p = parents[i];
        if (p < 0) {
            global.set(int(i), local.get(int(i)));
            continue;
        }
        const size_t q = size_t(p);
        const quat vr = global.rot[q];
        const vec3 vs = global.scl[q], vsv = global.svl[q], vang = global.ang[q];
        const vec3 r = quat_mul_vec3(vr, local.pos[i] * vs);
        global.pos[i] = r + global.pos[q];
        global.rot[i] = quat_mul_paired(vr, local.rot[i]);
        global.scl[i] = local.scl[i] * vs;
        global.vel[i] = quat_mul_vec3(vr, (local.vel[i] + local.pos[i] * vsv) * vs) + global.vel[q] + cross(vang, r);
        global.ang[i] = quat_mul_vec3(vr, local.ang[i]) + vang;
        global.svl[i] = local.svl[i] + vsv;
    }
}

void fk_static_scalar(Pose& global, const Pose& local, Span<const int> parents) {
    for (size_t i = 0; i < parents.size(); ++i) {
        const int p = parents[i];
        if (p < 0) {
            global.pos[i] = local.pos[i];
            global.rot[i] = local.rot[i];
            global.scl[i] = local.scl[i];
        } else {
            const size_t q = size_t(p);
            global.pos[i] = quat_mul_vec3(global.rot[q], local.pos[i] * global.scl[q]) + global.pos[q];
            global.rot[i] = quat_mul_paired(global.rot[q], local.rot[i]);
            global.scl[i] = local.scl[i] * global.scl[q];
        }
    }
}

#if defined(__SSE2__)
// SSE2 FK, one joint at a time with each vec3 in one register (x, y, z, 0) and each quaternion in
// one (w, x, y, z); a packed 12-byte vec3 takes three operations to load or store.
inline __m128 ld3(const vec3& v) {
    return _mm_movelh_ps(_mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(&v.x)), _mm_load_ss(&v.z));
}
inline void st3(vec3& v, __m128 a) {
    _mm_storel_pi(reinterpret_cast<__m64*>(&v.x), a);
    _mm_store_ss(&v.z, _mm_movehl_ps(a, a));
}
inline __m128 ldq(const quat& q) { return _mm_loadu_ps(&q.w); }
inline void stq(quat& q, __m128 a) { _mm_storeu_ps(&q.w, a); }
#define KS_SHUF(a, i0, i1, i2, i3) _mm_shuffle_ps(a, a, _MM_SHUFFLE(i3, i2, i1, i0))
inline __m128 yzx(__m128 a) { return KS_SHUF(a, 1, 2, 0, 3); }
inline __m128 flip(__m128 a, float x, float y, float z, float w) { return _mm_xor_ps(a, _mm_set_ps(w, z, y, x)); }

// cross(a, b) = (a b.yzx - a.yzx b).yzx, with a.yzx given.
inline __m128 cross_with(__m128 a, __m128 a_yzx, __m128 b) {
    return yzx(_mm_sub_ps(_mm_mul_ps(a, yzx(b)), _mm_mul_ps(a_yzx, b)));
}

// Rotation by one quaternion, its shuffles made once for several vectors: v + w t + u x t,
// t = 2 u x v (quat_mul_vec3).
struct Rotator {
    __m128 u, u_yzx, w, x, y, z;
    explicit Rotator(__m128 q)
        : u(KS_SHUF(q, 1, 2, 3, 0)), u_yzx(KS_SHUF(q, 2, 3, 1, 0)), w(KS_SHUF(q, 0, 0, 0, 0)), x(KS_SHUF(q, 1, 1, 1, 1)),
          y(KS_SHUF(q, 2, 2, 2, 2)), z(KS_SHUF(q, 3, 3, 3, 3)) {}
    __m128 rotate(__m128 v) const {
        __m128 t = cross_with(u, u_yzx, v);
        t = _mm_add_ps(t, t);
        return _mm_add_ps(_mm_add_ps(v, _mm_mul_ps(w, t)), cross_with(u, u_yzx, t));
    }
    // quat_mul(q, b) = w b + x (-bx, bw, -bz, by) + y (-by, bz, bw, -bx) + z (-bz, -by, bx, bw).
    __m128 mul(__m128 b) const {
        const __m128 b1 = flip(KS_SHUF(b, 1, 0, 3, 2), -0.0f, 0.0f, -0.0f, 0.0f);
        const __m128 b2 = flip(KS_SHUF(b, 2, 3, 0, 1), -0.0f, 0.0f, 0.0f, -0.0f);
        const __m128 b3 = flip(KS_SHUF(b, 3, 2, 1, 0), -0.0f, -0.0f, 0.0f, 0.0f);
        return _mm_add_ps(_mm_add_ps(_mm_mul_ps(w, b), _mm_mul_ps(x, b1)), _mm_add_ps(_mm_mul_ps(y, b2), _mm_mul_ps(z, b3)));
    }
};
#undef KS_SHUF

// Each joint's parent is read back from `global`, already written: no scratch, so nothing
// thread_local with a destructor (tests/thread_exit_test.sh says why).
template <bool kVelocities>
void fk_sse2(Pose& global, const Pose& local, Span<const int> parents) {
    for (size_t i = 0; i < parents.size(); ++i) {
        const int p = parents[i];
        const __m128 lp = ld3(local.pos[i]), lr = ldq(local.rot[i]), ls = ld3(local.scl[i]);
        if (p < 0) {
            stq(global.rot[i], lr);
            st3(global.pos[i], lp);
            st3(global.scl[i], ls);
            if constexpr (kVelocities) {
                st3(global.vel[i], ld3(local.vel[i])), st3(global.ang[i], ld3(local.ang[i]));
                st3(global.svl[i], ld3(local.svl[i]));
            }
            continue;
        }
        const size_t q = size_t(p);
        const __m128 gs = ld3(global.scl[q]);
        const Rotator rq(ldq(global.rot[q]));
        const __m128 r = rq.rotate(_mm_mul_ps(lp, gs));
        st3(global.pos[i], _mm_add_ps(r, ld3(global.pos[q])));
        stq(global.rot[i], rq.mul(lr));
        st3(global.scl[i], _mm_mul_ps(ls, gs));
        if constexpr (kVelocities) {
            const __m128 gsv = ld3(global.svl[q]), gang = ld3(global.ang[q]);
            const __m128 lin = _mm_mul_ps(_mm_add_ps(ld3(local.vel[i]), _mm_mul_ps(lp, gsv)), gs);
            st3(global.vel[i], _mm_add_ps(_mm_add_ps(rq.rotate(lin), ld3(global.vel[q])), cross_with(gang, yzx(gang), r)));
            st3(global.ang[i], _mm_add_ps(rq.rotate(ld3(local.ang[i])), gang));
            st3(global.svl[i], _mm_add_ps(ld3(local.svl[i]), gsv));
        }
    }
}
#endif

}  // namespace

void op_fk(Pose& global, const Pose& local, Span<const int> parents) {
    detail::check_parents(__func__, parents, detail::check_poses(__func__, {{"local", &local}, {"global", &global}}));
#if defined(__SSE2__)
    if (simd_level() != SimdLevel::Scalar) return fk_sse2<true>(global, local, parents);
#endif
    fk_scalar(global, local, parents);
}

void op_fk_static(Pose& global, const Pose& local, Span<const int> parents) {
    detail::check_parents(__func__, parents, detail::check_poses(__func__, {{"local", &local}, {"global", &global}}));
#if defined(__SSE2__)
    if (simd_level() != SimdLevel::Scalar) return fk_sse2<false>(global, local, parents);
#endif
    fk_static_scalar(global, local, parents);
}

void op_bk(Pose& local, const Pose& global, Span<const int> parents) {
    detail::check_parents(__func__, parents, detail::check_poses(__func__, {{"global", &global}, {"local", &local}}));
    for (int i = 0; i < global.size(); ++i) {
        const int p = parents[size_t(i)];
        local.set(i, p < 0 ? global.get(i) : kform_div(global.get(p), global.get(i)));
    }
}

void op_finite_diff(Pose& out, const Pose& curr, const Pose& prev, float dt) {
    detail::check_poses(__func__, {{"curr", &curr}, {"prev", &prev}, {"out", &out}});
    detail::check_positive(__func__, "dt", dt);
    for (size_t i = 0; i < size_t(curr.size()); ++i) {
        out.pos[i] = curr.pos[i];
        out.rot[i] = curr.rot[i];
        out.scl[i] = curr.scl[i];
        out.vel[i] = (curr.pos[i] - prev.pos[i]) / dt;
        out.ang[i] = quat_differentiate_angular_velocity(curr.rot[i], prev.rot[i], dt);
        out.svl[i] = log(curr.scl[i] / prev.scl[i]) / dt;
    }
}

void op_finite_diff_central(Pose& out, const Pose& plus, const Pose& minus, float h) {
    detail::check_poses(__func__, {{"plus", &plus}, {"minus", &minus}, {"out", &out}});
    detail::check_positive(__func__, "h", h);
    for (size_t i = 0; i < size_t(plus.size()); ++i) {
        out.vel[i] = (plus.pos[i] - minus.pos[i]) / (2.0f * h);
        out.ang[i] = quat_differentiate_angular_velocity(plus.rot[i], minus.rot[i], 2.0f * h);
        out.svl[i] = log(plus.scl[i] / minus.scl[i]) / (2.0f * h);
    }
}

void op_integrate(Pose& out, const Pose& in, float dt) {
    detail::check_poses(__func__, {{"in", &in}, {"out", &out}});
    detail::check_finite(__func__, "dt", dt);
    for (int i = 0; i < in.size(); ++i) out.set(i, kform_integrate(in.get(i), dt));
}

}  // namespace ks
