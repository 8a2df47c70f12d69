#include "common/src/net/skeleton_hash.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

#include <kinesync/common/errors.h>
#include <kinesync/common/net/tokens.h>

#include "common/src/crypto/crypto.h"

namespace ks::net {

namespace {

constexpr uint8_t kMagic[4] = {'K', 'S', 'K', 'L'};
constexpr uint8_t kFormat = 1;
constexpr size_t kHeadBytes = 11;     // magic, format, joint count, metres per unit
constexpr size_t kMaxJointName = 64;  // as on the wire (kMaxNameBytes)

void put_u16(std::vector<uint8_t>& o, uint16_t v) {
    o.push_back(uint8_t(v));
    o.push_back(uint8_t(v >> 8));
}
void put_f32(std::vector<uint8_t>& o, float f) {
    const uint32_t v = std::bit_cast<uint32_t>(f);
    for (int i = 0; i < 4; ++i) o.push_back(uint8_t(v >> (8 * i)));
}

// Bounds-checked little-endian reads; each failure says where.
struct Reader {
    std::span<const uint8_t> b;
    size_t pos = 0;
    std::string* why;
    bool fail(const std::string& w) {
        if (why) *why = "byte " + std::to_string(pos) + ": " + w;
        return false;
    }
    bool need(size_t n, const char* what) { return b.size() - pos >= n || fail(std::string("ends inside ") + what); }
    uint16_t u16() {
        const uint16_t v = uint16_t(b[pos] | b[pos + 1] << 8);
        pos += 2;
        return v;
    }
    float f32() {
        uint32_t v = 0;
        for (int i = 0; i < 4; ++i) v |= uint32_t(b[pos + size_t(i)]) << (8 * i);
        pos += 4;
        return std::bit_cast<float>(v);
    }
};

}  // namespace

std::vector<uint8_t> canonical_skeleton(const Skeleton& s, float metres_per_unit) {
    s.check("canonical_skeleton");
    if (!(std::isfinite(metres_per_unit) && metres_per_unit > 0.0f))
        throw Error(Errc::InvalidSkeleton, "canonical_skeleton: metres_per_unit " + std::to_string(metres_per_unit) +
                                               " is not finite and positive", "metres_per_unit");
    std::vector<uint8_t> o(kMagic, kMagic + 4);
    o.push_back(kFormat);
    put_u16(o, uint16_t(s.size()));
    put_f32(o, metres_per_unit);
    for (int j = 0; j < s.size(); ++j) {
        const std::string& name = s.names[size_t(j)];
        if (name.size() > kMaxJointName)
            throw Error(Errc::InvalidSkeleton, "canonical_skeleton: joint " + std::to_string(j) + "'s name has " +
                                                   std::to_string(name.size()) + " bytes (at most 64)", "names", j);
        put_u16(o, uint16_t(int16_t(s.parents[size_t(j)])));
        const vec3 v = s.offsets[size_t(j)];
        put_f32(o, v.x);
        put_f32(o, v.y);
        put_f32(o, v.z);
        o.push_back(uint8_t(name.size()));
        o.insert(o.end(), name.begin(), name.end());
    }
    return o;
}

SkeletonHash hash_canonical_skeleton(std::span<const uint8_t> canonical) {
    SkeletonHash h{};
    crypto::keyed_hash(h, canonical);
    return h;
}

SkeletonHash skeleton_hash(const Skeleton& s, float metres_per_unit) {
    return hash_canonical_skeleton(canonical_skeleton(s, metres_per_unit));
}

std::optional<CanonicalSkeleton> parse_canonical_skeleton(std::span<const uint8_t> bytes, std::string* why) {
    Reader r{bytes, 0, why};
    if (!r.need(kHeadBytes, "the header")) return std::nullopt;
    if (std::memcmp(bytes.data(), kMagic, 4) != 0) return r.fail("not a kinesync skeleton (no KSKL)"), std::nullopt;
    r.pos = 4;
    if (bytes[4] != kFormat) return r.fail("format " + std::to_string(bytes[4]) + " (this build reads 1)"), std::nullopt;
    r.pos = 5;
    const int count = r.u16();
    if (count < 1 || count > kMaxJoints) return r.fail(std::to_string(count) + " joints (1..1024)"), std::nullopt;
    CanonicalSkeleton out;
    out.metres_per_unit = r.f32();
    if (!(std::isfinite(out.metres_per_unit) && out.metres_per_unit > 0.0f))
        return r.fail("metres per unit not finite and positive"), std::nullopt;
    Skeleton& s = out.skeleton;
    for (int j = 0; j < count; ++j) {
        const std::string joint = "joint " + std::to_string(j);
        if (!r.need(15, joint.c_str())) return std::nullopt;
        const int parent = int16_t(r.u16());
        if (parent < -1 || parent >= j) return r.fail(joint + " has parent " + std::to_string(parent)), std::nullopt;
        const vec3 v{r.f32(), r.f32(), r.f32()};
        if (!isfinite(v)) return r.fail(joint + "'s offset is not finite"), std::nullopt;
        const size_t len = bytes[r.pos++];
        if (len > kMaxJointName) return r.fail(joint + "'s name has " + std::to_string(len) + " bytes"), std::nullopt;
        if (!r.need(len, (joint + "'s name").c_str())) return std::nullopt;
        s.names.emplace_back(reinterpret_cast<const char*>(bytes.data() + r.pos), len);
        r.pos += len;
        s.parents.push_back(parent);
        s.offsets.push_back(v);
    }
    if (r.pos != bytes.size()) return r.fail(std::to_string(bytes.size() - r.pos) + " bytes after the last joint"), std::nullopt;
    if (std::string e = s.validate(); !e.empty()) return r.fail(e), std::nullopt;
    return out;
}

// A hash is 32 bytes, as a key is: the same hex (lower case only, so a name has one spelling).
static_assert(std::is_same_v<SkeletonHash, Key>);

std::string to_hex(const SkeletonHash& h) { return key_to_hex(h); }

std::optional<SkeletonHash> skeleton_hash_from_hex(std::string_view hex) {
    if (std::any_of(hex.begin(), hex.end(), [](char c) { return c >= 'A' && c <= 'F'; })) return std::nullopt;
    return key_from_hex(hex);
}

}  // namespace ks::net
