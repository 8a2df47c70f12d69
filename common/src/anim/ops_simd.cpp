#include "common/src/anim/ops_simd.h"

#include "common/src/platform/cpu_features.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace ks {

const SimdOps* simd_ops_sse2();
const SimdOps* simd_ops_avx2();
const SimdOps* simd_ops_neon();

namespace {

// Whether the build has the level's kernels and the CPU (and OS) can run them.
bool cpu_has(SimdLevel l) {
    switch (l) {
        case SimdLevel::Scalar: return true;
        case SimdLevel::SSE2: return simd_ops_sse2() != nullptr;  // the x86-64 baseline
        case SimdLevel::AVX2: {
            static const bool avx2_fma = cpu_has_avx2_fma();
            return simd_ops_avx2() != nullptr && avx2_fma;
        }
        case SimdLevel::NEON: return simd_ops_neon() != nullptr;  // mandatory on AArch64
    }
    return false;
}

// The level itself if available, else the next narrower of its family, else scalar.
SimdLevel clamp(SimdLevel want) {
    while (!cpu_has(want)) want = want == SimdLevel::AVX2 ? SimdLevel::SSE2 : SimdLevel::Scalar;
    return want;
}

SimdLevel best() {
    if (const char* e = std::getenv("KS_SIMD")) {
        if (!std::strcmp(e, "scalar")) return SimdLevel::Scalar;
        if (!std::strcmp(e, "sse2")) return clamp(SimdLevel::SSE2);
        if (!std::strcmp(e, "avx2")) return clamp(SimdLevel::AVX2);
        if (!std::strcmp(e, "neon")) return clamp(SimdLevel::NEON);
    }
    for (SimdLevel l : {SimdLevel::AVX2, SimdLevel::SSE2, SimdLevel::NEON})
        if (cpu_has(l)) return l;
    return SimdLevel::Scalar;
}

std::atomic<int>& level() {
    static std::atomic<int> l{int(best())};
    return l;
}

}  // namespace

SimdLevel simd_level() { return SimdLevel(level().load(std::memory_order_relaxed)); }

void set_simd_level(SimdLevel want) { level().store(int(clamp(want))); }

const char* simd_level_name(SimdLevel l) {
    switch (l) {
        case SimdLevel::Scalar: return "scalar";
        case SimdLevel::SSE2: return "sse2";
        case SimdLevel::AVX2: return "avx2";
        case SimdLevel::NEON: return "neon";
    }
    return "?";
}

const SimdOps* simd_ops() {
    switch (simd_level()) {
        case SimdLevel::SSE2: return simd_ops_sse2();
        case SimdLevel::AVX2: return simd_ops_avx2();
        case SimdLevel::NEON: return simd_ops_neon();
        default: return nullptr;
    }
}

namespace {
constexpr size_t kMaxWidth = 8;

// What finishes a skeleton after the wide blocks: this architecture's 4-wide blocks (SSE2; less
// padding) when the wide kernels are 8-wide (AVX2); the kernels themselves when 4-wide (SSE2, NEON).
const SimdOps& tail_ops(const SimdOps& ops) {
    const SimdOps* four = simd_ops_sse2();
    return ops.width > 4 && four ? *four : ops;
}

// A copy of entries [first, first + count) padded to kMaxWidth by repeating the first one.
template <class T>
struct Pad {
    T v[kMaxWidth];
    Pad(const T* src, size_t first, size_t count) {
        for (size_t k = 0; k < kMaxWidth; ++k) v[k] = src[first + (k < count ? k : 0)];
    }
};
template <class T>
void copy_back(T* dst, const T* src, size_t first, size_t count) {
    for (size_t k = 0; k < count; ++k) dst[first + k] = src[k];
}
}  // namespace

void simd_sample_cubic(const SimdOps& ops, const CubicBlockArgs& a, size_t n, bool velocities) {
    const size_t w = size_t(ops.width);
    size_t j = 0;
    for (; j + w <= n; j += w) ops.cubic[velocities](a, j);
    const SimdOps& narrow = tail_ops(ops);
    for (; j + size_t(narrow.width) <= n; j += size_t(narrow.width)) narrow.cubic[velocities](a, j);
    if (j == n) return;
    const size_t rem = n - j;
    const Pad<vec3> pm(a.pos_m, j, rem), p0(a.pos_0, j, rem), p1(a.pos_1, j, rem), p2(a.pos_2, j, rem);
    const Pad<quat> r0(a.rot_0, j, rem);
    float rows[3][kMaxWidth * 4];
    const float* src[3] = {a.row_m0, a.row_01, a.row_12};
    for (int r = 0; r < 3; ++r)
        if (src[r])
            for (size_t k = 0; k < kMaxWidth; ++k)
                for (int c = 0; c < 4; ++c) rows[r][4 * k + size_t(c)] = src[r][4 * (j + (k < rem ? k : 0)) + size_t(c)];
    uint8_t scaled[kMaxWidth];
    for (size_t k = 0; k < kMaxWidth; ++k) scaled[k] = a.scaled[j + (k < rem ? k : 0)];
    const vec3 zero{};
    const vec3* ls[4] = {a.ls_m, a.ls_0, a.ls_1, a.ls_2};
    vec3 lpad[4][kMaxWidth];
    for (int r = 0; r < 4; ++r)
        for (size_t k = 0; k < kMaxWidth; ++k) lpad[r][k] = ls[r] ? ls[r][j + (k < rem ? k : 0)] : zero;
    vec3 pos[kMaxWidth], vel[kMaxWidth], ang[kMaxWidth], scl[kMaxWidth], svl[kMaxWidth];
    quat rot[kMaxWidth];
    CubicBlockArgs t = a;
    t.pos_m = pm.v, t.pos_0 = p0.v, t.pos_1 = p1.v, t.pos_2 = p2.v, t.rot_0 = r0.v;
    t.row_m0 = a.row_m0 ? rows[0] : nullptr, t.row_01 = a.row_01 ? rows[1] : nullptr, t.row_12 = a.row_12 ? rows[2] : nullptr;
    t.ls_m = lpad[0], t.ls_0 = lpad[1], t.ls_1 = lpad[2], t.ls_2 = lpad[3], t.scaled = scaled;
    t.out_pos = pos, t.out_vel = vel, t.out_rot = rot, t.out_ang = ang, t.out_scl = scl, t.out_svl = svl;
    narrow.cubic[velocities](t, 0);
    copy_back(a.out_pos, pos, j, rem);
    copy_back(a.out_rot, rot, j, rem);
    copy_back(a.out_scl, scl, j, rem);
    if (velocities) {
        copy_back(a.out_vel, vel, j, rem);
        copy_back(a.out_ang, ang, j, rem);
        copy_back(a.out_svl, svl, j, rem);
    }
}

void simd_blend(const SimdOps& ops, const BlendBlockArgs& a, size_t n, bool velocities) {
    const size_t w = size_t(ops.width);
    size_t j = 0;
    for (; j + w <= n; j += w) ops.blend[velocities](a, j);
    const SimdOps& narrow = tail_ops(ops);
    for (; j + size_t(narrow.width) <= n; j += size_t(narrow.width)) narrow.blend[velocities](a, j);
    if (j == n) return;
    const size_t rem = n - j;
    const Pad<vec3> lp(a.l_pos, j, rem), rp(a.r_pos, j, rem), ls(a.l_scl, j, rem), rs(a.r_scl, j, rem);
    const Pad<quat> lr(a.l_rot, j, rem), rr(a.r_rot, j, rem);
    BlendBlockArgs t = a;
    t.l_pos = lp.v, t.r_pos = rp.v, t.l_scl = ls.v, t.r_scl = rs.v, t.l_rot = lr.v, t.r_rot = rr.v;
    quat dirs[kMaxWidth];
    if (a.dirs) {
        const Pad<quat> d(a.dirs, j, rem);
        for (size_t k = 0; k < kMaxWidth; ++k) dirs[k] = d.v[k];
        t.dirs = dirs;
    }
    vec3 pos[kMaxWidth], vel[kMaxWidth], ang[kMaxWidth], scl[kMaxWidth], svl[kMaxWidth];
    quat rot[kMaxWidth];
    t.out_pos = pos, t.out_vel = vel, t.out_rot = rot, t.out_ang = ang, t.out_scl = scl, t.out_svl = svl;
    if (!velocities) {
        narrow.blend[0](t, 0);
    } else {
        const Pad<vec3> lv(a.l_vel, j, rem), rv(a.r_vel, j, rem), la(a.l_ang, j, rem), ra(a.r_ang, j, rem), lsv(a.l_svl, j, rem),
            rsv(a.r_svl, j, rem);
        t.l_vel = lv.v, t.r_vel = rv.v, t.l_ang = la.v, t.r_ang = ra.v, t.l_svl = lsv.v, t.r_svl = rsv.v;
        narrow.blend[1](t, 0);
        copy_back(a.out_vel, vel, j, rem);
        copy_back(a.out_ang, ang, j, rem);
        copy_back(a.out_svl, svl, j, rem);
    }
    copy_back(a.out_pos, pos, j, rem);
    copy_back(a.out_rot, rot, j, rem);
    copy_back(a.out_scl, scl, j, rem);
    if (a.dirs) copy_back(a.dirs, dirs, j, rem);
}

void simd_extrapolate(const SimdOps& ops, const ExtrapolateBlockArgs& a, size_t n, bool velocities) {
    const size_t w = size_t(ops.width);
    size_t j = 0;
    for (; j + w <= n; j += w) ops.extrapolate[velocities](a, j);
    const SimdOps& narrow = tail_ops(ops);
    for (; j + size_t(narrow.width) <= n; j += size_t(narrow.width)) narrow.extrapolate[velocities](a, j);
    if (j == n) return;
    const size_t rem = n - j;
    const Pad<vec3> p(a.pos, j, rem), v(a.vel, j, rem), an(a.ang, j, rem), s(a.scl, j, rem), sv(a.svl, j, rem);
    const Pad<quat> r(a.rot, j, rem);
    vec3 pos[kMaxWidth], vel[kMaxWidth], ang[kMaxWidth], scl[kMaxWidth], svl[kMaxWidth];
    quat rot[kMaxWidth];
    ExtrapolateBlockArgs t = a;
    t.pos = p.v, t.vel = v.v, t.ang = an.v, t.scl = s.v, t.svl = sv.v, t.rot = r.v;
    t.out_pos = pos, t.out_vel = vel, t.out_rot = rot, t.out_ang = ang, t.out_scl = scl, t.out_svl = svl;
    narrow.extrapolate[velocities](t, 0);
    copy_back(a.out_pos, pos, j, rem);
    copy_back(a.out_rot, rot, j, rem);
    copy_back(a.out_scl, scl, j, rem);
    if (!velocities) return;
    copy_back(a.out_vel, vel, j, rem);
    copy_back(a.out_ang, ang, j, rem);
    copy_back(a.out_svl, svl, j, rem);
}

namespace {
// Padded copies of a pose's and an offset's channels [first, first + count), and where a kernel
// writes them.
struct PoseInPad {
    Pad<vec3> pos, vel, ang, scl, svl;
    Pad<quat> rot;
    PoseInPad(const PoseIn& p, size_t first, size_t count)
        : pos(p.pos, first, count), vel(p.vel, first, count), ang(p.ang, first, count), scl(p.scl, first, count),
          svl(p.svl, first, count), rot(p.rot, first, count) {}
    PoseIn in() const { return {pos.v, vel.v, rot.v, ang.v, scl.v, svl.v}; }
};
struct OffsetPad {
    vec3 ch[6][kMaxWidth];
    OffsetPad() = default;
    OffsetPad(const OffsetIO& o, size_t first, size_t count) {
        const vec3* src[6] = {o.pos, o.vel, o.rot, o.ang, o.scl, o.svl};
        for (int c = 0; c < 6; ++c) {
            const Pad<vec3> p(src[c], first, count);
            std::copy(p.v, p.v + kMaxWidth, ch[c]);
        }
    }
    OffsetIO io() { return {ch[0], ch[1], ch[2], ch[3], ch[4], ch[5]}; }
    void copy_to(const OffsetIO& o, size_t first, size_t count) const {
        vec3* dst[6] = {o.pos, o.vel, o.rot, o.ang, o.scl, o.svl};
        for (int c = 0; c < 6; ++c) copy_back(dst[c], ch[c], first, count);
    }
};
// Runs the kernel pick(level) over whole blocks of the wide level, then the narrow one; returns
// where the tail starts.
template <class Args, class Pick>
size_t whole_blocks(const SimdOps& ops, Pick pick, const Args& a, size_t n) {
    size_t j = 0;
    for (; j + size_t(ops.width) <= n; j += size_t(ops.width)) pick(ops)(a, j);
    const SimdOps& narrow = tail_ops(ops);
    for (; j + size_t(narrow.width) <= n; j += size_t(narrow.width)) pick(narrow)(a, j);
    return j;
}
}  // namespace

void simd_offset_capture(const SimdOps& ops, const OffsetCaptureBlockArgs& a, size_t n) {
    const size_t j = whole_blocks(ops, [](const SimdOps& o) { return o.offset_capture; }, a, n);
    if (j == n) return;
    const PoseInPad src(a.src, j, n - j), dst(a.dst, j, n - j);
    OffsetPad out;
    tail_ops(ops).offset_capture(OffsetCaptureBlockArgs{src.in(), dst.in(), out.io()}, 0);
    out.copy_to(a.out, j, n - j);
}

void simd_decay_flat(const SimdOps& ops, float* x, float* v, size_t n, const float step[4]) {
    const size_t whole = n - n % size_t(ops.width);
    ops.decay_flat(x, v, whole, step);
    for (size_t i = whole; i < n; ++i) {
        const float x0 = x[i], v0 = v[i];
        x[i] = x0 * step[0] + v0 * step[1];
        v[i] = x0 * step[2] + v0 * step[3];
    }
}

void simd_lengths(const vec3* v, float* out, size_t n) {
    const SimdOps* ops = simd_ops();
    const size_t whole = ops ? n - n % size_t(ops->width) : 0;
    if (ops) ops->lengths(v, out, whole);
    for (size_t i = whole; i < n; ++i) out[i] = length(v[i]);
}

void simd_offset_apply(const SimdOps& ops, const OffsetApplyBlockArgs& a, size_t n, bool velocities) {
    const size_t j = whole_blocks(ops, [velocities](const SimdOps& o) { return o.offset_apply[velocities]; }, a, n);
    if (j == n) return;
    const size_t rem = n - j;
    OffsetPad off(a.offset, j, rem);
    const PoseInPad in(a.input, j, rem);
    vec3 pos[kMaxWidth], vel[kMaxWidth], ang[kMaxWidth], scl[kMaxWidth], svl[kMaxWidth];
    quat rot[kMaxWidth];
    tail_ops(ops).offset_apply[velocities](OffsetApplyBlockArgs{off.io(), in.in(), PoseOut{pos, vel, rot, ang, scl, svl}}, 0);
    copy_back(a.out.pos, pos, j, rem);
    copy_back(a.out.rot, rot, j, rem);
    copy_back(a.out.scl, scl, j, rem);
    if (!velocities) return;
    copy_back(a.out.vel, vel, j, rem);
    copy_back(a.out.ang, ang, j, rem);
    copy_back(a.out.svl, svl, j, rem);
}

void simd_hermite_prepare(const SimdOps& ops, const HermitePrepareBlockArgs& a, size_t n) {
    const size_t j = whole_blocks(ops, [](const SimdOps& o) { return o.hermite_prepare; }, a, n);
    if (j == n) return;
    const size_t rem = n - j;
    const Pad<quat> ra(a.rot_a, j, rem), rb(a.rot_b, j, rem);
    const Pad<vec3> ab(a.ang_b, j, rem), sa(a.scl_a, j, rem), sb(a.scl_b, j, rem), va(a.svl_a, j, rem), vb(a.svl_b, j, rem);
    vec3 u[kMaxWidth], w1[kMaxWidth], la[kMaxWidth], lb[kMaxWidth];
    uint8_t scaled[kMaxWidth];
    tail_ops(ops).hermite_prepare(HermitePrepareBlockArgs{ra.v, rb.v, ab.v, sa.v, sb.v, va.v, vb.v, a.dt, u, w1, la, lb, scaled}, 0);
    copy_back(a.u, u, j, rem), copy_back(a.w1, w1, j, rem), copy_back(a.ls_a, la, j, rem), copy_back(a.ls_b, lb, j, rem);
    copy_back(a.scaled, scaled, j, rem);
}

void simd_hermite(const SimdOps& ops, const HermiteBlockArgs& a, size_t n) {
    const size_t j = whole_blocks(ops, [](const SimdOps& o) { return o.hermite; }, a, n);
    if (j == n) return;
    const size_t rem = n - j;
    const PoseInPad pa(a.a, j, rem), pb(a.b, j, rem);
    const Pad<vec3> u(a.u, j, rem), w1(a.w1, j, rem), la(a.ls_a, j, rem), lb(a.ls_b, j, rem);
    const Pad<uint8_t> scaled(a.scaled, j, rem);
    vec3 pos[kMaxWidth], vel[kMaxWidth], ang[kMaxWidth], scl[kMaxWidth], svl[kMaxWidth];
    quat rot[kMaxWidth];
    HermiteBlockArgs t = a;
    t.a = pa.in(), t.b = pb.in(), t.u = u.v, t.w1 = w1.v, t.ls_a = la.v, t.ls_b = lb.v, t.scaled = scaled.v;
    t.out = PoseOut{pos, vel, rot, ang, scl, svl};
    tail_ops(ops).hermite(t, 0);
    const PoseOut& o = a.out;
    copy_back(o.pos, pos, j, rem), copy_back(o.vel, vel, j, rem), copy_back(o.rot, rot, j, rem);
    copy_back(o.ang, ang, j, rem), copy_back(o.scl, scl, j, rem), copy_back(o.svl, svl, j, rem);
}

}  // namespace ks
