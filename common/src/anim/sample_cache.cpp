#include <kinesync/common/anim/sample_cache.h>

#include <kinesync/common/math/quat.h>

namespace ks {

namespace {
void put(float* row, quat to, quat from) {
    const vec3 u = quat_to_scaled_angle_axis(quat_abs(quat_mul_inv(to, from)));
    row[0] = u.x;
    row[1] = u.y;
    row[2] = u.z;
    row[3] = so3_left_jacobian_inv_coeff(dot(u, u));
}
}  // namespace

SampleCache build_sample_cache(const Clip& clip) {
    SampleCache c;
    c.frames = clip.frames;
    c.joints = clip.joints();
    if (clip.frames < 2) return c;
    const size_t nj = size_t(c.joints);
    c.seg.assign(size_t(clip.frames) * nj * 4, 0.0f);  // frames - 1 segments and the closing one
    for (int f = 0; f + 1 < clip.frames; ++f)
        for (int j = 0; j < c.joints; ++j) put(c.seg.data() + (size_t(f) * nj + size_t(j)) * 4, clip.rot(f + 1, j), clip.rot(f, j));
    const int last = clip.frames - 2;
    for (int j = 0; j < c.joints; ++j)
        put(c.seg.data() + (size_t(clip.frames - 1) * nj + size_t(j)) * 4, clip.rot(0, j), clip.rot(last, j));
    c.scaled.assign(nj, 0);
    bool any = false;
    for (int f = 0; f < clip.frames; ++f)
        for (int j = 0; j < c.joints; ++j) {
            const vec3 s = clip.scl(f, j);
            if (s.x != 1.0f || s.y != 1.0f || s.z != 1.0f) c.scaled[size_t(j)] = 1, any = true;
        }
    if (any) {
        c.log_scl.resize(size_t(clip.frames) * nj);
        for (int f = 0; f < clip.frames; ++f)
            for (int j = 0; j < c.joints; ++j) c.log_scl[size_t(f) * nj + size_t(j)] = log(clip.scl(f, j));
    }
    return c;
}

size_t sample_cache_bytes(const SampleCache& c) {
    return c.seg.size() * sizeof(float) + c.scaled.size() + c.log_scl.size() * sizeof(vec3);
}

}  // namespace ks
