#include "common/src/net/skeleton_coding.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>

#include "common/src/codec/range_coder.h"

namespace ks::net::detail {

namespace {

constexpr int kNameLengthBits = 7;  // shared and new bytes of a name: 0..127 (the decoder allows 64)
constexpr int kGammaBits = 4;       // a distance's bit count: 1..15

uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// Adaptive probabilities that a bit is 0 (1/4096), moving 1/32 of the way toward each bit seen.
template <int Bits>
struct Tree {
    std::array<uint16_t, size_t(1) << Bits> p;
    Tree() { p.fill(uint16_t(kProbOne / 2)); }
};
void adapt(uint16_t& p, int bit) {
    if (bit) p = uint16_t(p - (p >> 5));
    else p = uint16_t(p + ((kProbOne - p) >> 5));
}

// One direction of the coder; encoder and decoder walk the same models in the same order.
struct Writer {
    RangeEncoder& rc;
    int bit(uint16_t& p, int b) {
        rc.encode_bit(p, b);
        adapt(p, b);
        return b;
    }
    uint32_t raw(uint32_t v, int n) {
        rc.encode_bypass(v, n);
        return v;
    }
};
struct Reader {
    RangeDecoder& rc;
    int bit(uint16_t& p, int) {
        const int b = rc.decode_bit(p);
        adapt(p, b);
        return b;
    }
    uint32_t raw(uint32_t, int n) { return rc.decode_bypass(n); }
};

template <int Bits, class C>
uint32_t tree(C& c, Tree<Bits>& t, uint32_t v, size_t context_base = 0) {
    uint32_t m = 1;
    for (int k = Bits - 1; k >= 0; --k) m = 2 * m + uint32_t(c.bit(t.p[context_base + m], int((v >> k) & 1u)));
    return m - (1u << Bits);
}
// v >= 1 as its bit count (modelled) and the bits below its leading one (raw); 0 when the
// decoded bit count is 0 (no such value).
template <class C>
uint32_t gamma(C& c, Tree<kGammaBits>& t, uint32_t v) {
    const int nb = tree(c, t, uint32_t(std::bit_width(v)));
    if (nb == 0) return 0;
    return (1u << (nb - 1)) | c.raw(v & ((1u << (nb - 1)) - 1u), nb - 1);
}

struct Models {
    Tree<1> parent_is_previous, parent_is_sibling, parent_after;
    Tree<kGammaBits> parent_distance, match_distance;
    Tree<kNameLengthBits> name_shared, name_new;
    Tree<8> name_byte;
    Tree<1> offset_repeats, offset_matches;
    Tree<1> base_name, base_parent, base_offset;  // the base skeleton's joint's, unchanged
    Tree<2> match_sign;  // per component (index 1..3)
    Tree<2> zero, sign;  // per component (index 1..3)
    std::array<Tree<8>, 3> exponent;
    std::array<Tree<4>, 3> mantissa_top;
};
constexpr int kRawMantissaBits = 19;

using Key = std::array<uint32_t, 3>;  // an offset's components without their signs
Key magnitudes(const std::array<uint32_t, 3>& b) { return {b[0] & 0x7FFFFFFFu, b[1] & 0x7FFFFFFFu, b[2] & 0x7FFFFFFFu}; }

template <class C>
uint32_t literal_component(C& c, Models& m, int k, uint32_t b) {
    if (c.bit(m.zero.p[size_t(k) + 1], b != 0) == 0) return 0;
    const uint32_t s = uint32_t(c.bit(m.sign.p[size_t(k) + 1], int(b >> 31)));
    const uint32_t e = tree(c, m.exponent[size_t(k)], (b >> 23) & 0xFFu);
    const uint32_t top = tree(c, m.mantissa_top[size_t(k)], (b >> kRawMantissaBits) & 0xFu);
    const uint32_t rest = c.raw(b & ((1u << kRawMantissaBits) - 1u), kRawMantissaBits);
    return s << 31 | e << 23 | top << kRawMantissaBits | rest;
}

template <class C>
uint32_t name_length(C& c, Tree<kNameLengthBits>& t, size_t v) {
    return tree(c, t, uint32_t(v));
}

// A name front-coded against the previous one (joint i of the part).
template <class Where, class Fail>
DecodeError decode_name(Reader& r, Models& m, size_t i, SkeletonJoints& out, const Where& where, size_t* new_name_bytes,
                        const Fail& fail) {
    const size_t shared = name_length(r, m.name_shared, 0);
    const size_t fresh = name_length(r, m.name_new, 0);
    const std::string& prev = i > 0 ? out.names[i - 1] : out.names[i];  // the first shares nothing
    if (shared > (i > 0 ? prev.size() : 0)) return fail(where() + "'s name shares more than the previous name has");
    if (shared + fresh > kMaxNameBytes) return fail(where() + "'s name is too long", DecodeError::StringTooLong);
    if (fresh > *new_name_bytes)
        return fail(where() + "'s name: more new name bytes than one packet may carry (" + std::to_string(kMaxNewNameBytesPerPacket) + ")");
    *new_name_bytes -= fresh;
    std::string name(prev, 0, shared);
    for (size_t k = 0; k < fresh; ++k) name.push_back(char(tree(r, m.name_byte, 0)));
    out.names[i] = std::move(name);
    return DecodeError::None;
}

}  // namespace

void code_skeleton_joints(int first, std::span<const std::string> names, std::span<const int> parents,
                          std::span<const vec3> offsets, std::vector<uint8_t>& out, std::vector<size_t>* bounds,
                          size_t stop_beyond, const Skeleton* base) {
    RangeEncoder rc(out);
    if (bounds) bounds->clear();
    Writer w{rc};
    Models m;
    std::string_view prev;
    std::array<uint32_t, 3> prev_bits{};
    std::map<Key, int> seen;  // magnitudes -> the latest joint in the part with them
    for (size_t i = 0; i < names.size(); ++i) {
        const int j = first + int(i);
        const bool based = base && j < base->size();
        // Name: the base's, or bytes shared with the previous name, then the new ones.
        const std::string_view name = std::string_view(names[i]).substr(0, (1u << kNameLengthBits) - 1);
        if (!based || w.bit(m.base_name.p[1], name != base->names[size_t(j)])) {
            const size_t shared = shared_prefix(name, prev);
            name_length(w, m.name_shared, shared);
            name_length(w, m.name_new, name.size() - shared);
            for (size_t k = shared; k < name.size(); ++k) tree(w, m.name_byte, uint8_t(name[k]));
        }
        prev = name;
        // Parent: the base's, the joint before, the previous joint's parent, or a distance back (a
        // forward one, which no valid skeleton has, behind a flag).
        const int p = parents[i];
        if ((!based || w.bit(m.base_parent.p[1], p != base->parents[size_t(j)])) && w.bit(m.parent_is_previous.p[1], p != j - 1) &&
            (i == 0 || w.bit(m.parent_is_sibling.p[1], p != parents[i - 1]))) {
            const int back = j - 1 - p;
            w.bit(m.parent_after.p[1], back < 0);
            gamma(w, m.parent_distance, uint32_t(std::abs(back)));
        }
        // Offset: the base's, the previous joint's, an earlier joint's up to signs, or three floats.
        const std::array<uint32_t, 3> b{bits_of(offsets[i].x), bits_of(offsets[i].y), bits_of(offsets[i].z)};
        const Key key = magnitudes(b);
        const auto match = seen.find(key);
        const vec3* bo = based ? &base->offsets[size_t(j)] : nullptr;
        if (bo && w.bit(m.base_offset.p[1], b != std::array<uint32_t, 3>{bits_of(bo->x), bits_of(bo->y), bits_of(bo->z)}) == 0) {
            // the base's offset
        } else if (i == 0 || w.bit(m.offset_repeats.p[1], b != prev_bits)) {
            if (i > 0 && w.bit(m.offset_matches.p[1], match == seen.end()) == 0) {
                const int earlier = match->second;
                gamma(w, m.match_distance, uint32_t(j - earlier));
                const auto& e = offsets[size_t(earlier - first)];
                const std::array<uint32_t, 3> eb{bits_of(e.x), bits_of(e.y), bits_of(e.z)};
                for (int k = 0; k < 3; ++k) w.bit(m.match_sign.p[size_t(k) + 1], int((b[size_t(k)] ^ eb[size_t(k)]) >> 31));
            } else {
                for (int k = 0; k < 3; ++k) literal_component(w, m, k, b[size_t(k)]);
            }
        }
        seen[key] = j;
        prev_bits = b;
        if (bounds) bounds->push_back(rc.size_bound());
        if (rc.size_bound() > stop_beyond) return;
    }
    rc.finish();
}

DecodeError decode_skeleton_joints(std::span<const uint8_t> in, int first, size_t n, SkeletonJoints& out,
                                   std::string* why, size_t* new_name_bytes, const Skeleton* base) {
    auto fail = [&](const std::string& w, DecodeError e = DecodeError::BadSkeleton) {
        if (why) *why = w;
        return e;
    };
    RangeDecoder rc(in);
    Reader r{rc};
    Models m;
    out.names.assign(n, {});
    out.parents.assign(n, -1);
    out.offsets.assign(n, vec3{});
    std::array<uint32_t, 3> prev_bits{};
    for (size_t i = 0; i < n; ++i) {
        const int j = first + int(i);
        auto where = [j] { return "joint " + std::to_string(j); };
        const bool based = base && j < base->size();
        if (based && r.bit(m.base_name.p[1], 0) == 0) {
            out.names[i] = base->names[size_t(j)];  // the base's names are checked already
        } else if (const DecodeError e = decode_name(r, m, i, out, where, new_name_bytes, fail); e != DecodeError::None) {
            return e;
        }

        int p = j - 1;
        if (based && r.bit(m.base_parent.p[1], 0) == 0) {
            p = base->parents[size_t(j)];
        } else if (r.bit(m.parent_is_previous.p[1], 0)) {
            if (i > 0 && r.bit(m.parent_is_sibling.p[1], 0) == 0) {
                p = out.parents[i - 1];
            } else {
                const bool after = r.bit(m.parent_after.p[1], 0);
                const uint32_t back = gamma(r, m.parent_distance, 0);
                if (after || back == 0 || back > uint32_t(j))
                    return fail(where() + "'s parent is not before it (or is below -1)");
                p = j - 1 - int(back);
            }
        }
        if (p < -1 || p >= j) return fail(where() + " has parent " + std::to_string(p) + ", which is not before it");
        out.parents[i] = p;

        std::array<uint32_t, 3> b = prev_bits;
        if (based && r.bit(m.base_offset.p[1], 0) == 0) {
            const vec3& e = base->offsets[size_t(j)];
            b = {bits_of(e.x), bits_of(e.y), bits_of(e.z)};
        } else if (i == 0 || r.bit(m.offset_repeats.p[1], 0)) {
            if (i > 0 && r.bit(m.offset_matches.p[1], 0) == 0) {
                const uint32_t back = gamma(r, m.match_distance, 0);
                if (back == 0 || back > i) return fail(where() + "'s offset matches no earlier joint of the part");
                const vec3 e = out.offsets[i - back];
                b = {bits_of(e.x), bits_of(e.y), bits_of(e.z)};
                for (int k = 0; k < 3; ++k) b[size_t(k)] ^= uint32_t(r.bit(m.match_sign.p[size_t(k) + 1], 0)) << 31;
            } else {
                for (int k = 0; k < 3; ++k) b[size_t(k)] = literal_component(r, m, k, 0);
            }
        }
        const vec3 o{float_of(b[0]), float_of(b[1]), float_of(b[2])};
        if (!(std::isfinite(o.x) && std::isfinite(o.y) && std::isfinite(o.z))) return fail(where() + " offset not finite");
        out.offsets[i] = o;
        prev_bits = b;
    }
    if (rc.overrun() > kMaxImpliedBytes) return fail("joints end early (the coded stream is cut short)");
    if (rc.consumed() < in.size()) return fail("joints: " + std::to_string(in.size() - rc.consumed()) + " bytes left over");
    return DecodeError::None;
}

}  // namespace ks::net::detail
