#include "common/src/net/protocol.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/src/net/protocol_detail.h"

namespace ks::net {

namespace fb = ::flatbuffers;
using namespace detail;

static_assert(sizeof(wire::Vec3) == sizeof(vec3));

namespace {

bool finite(const wire::Vec3& v) { return std::isfinite(v.x()) && std::isfinite(v.y()) && std::isfinite(v.z()); }

}  // namespace

DecodeError detail::unpack_joint_names(const wire::SkeletonDef& d, size_t count, std::vector<std::string>* out, std::string* why) {
    auto fail = [&](const std::string& w, DecodeError e = DecodeError::BadSkeleton) {
        if (why) *why = w;
        return e;
    };
    const auto* packed = d.joint_names_packed();
    if (!packed) return fail("joint names missing");
    const uint8_t* b = packed->data();
    const size_t size = packed->size();
    std::string prev, name;
    size_t pos = 0;
    if (out) out->clear();
    for (size_t i = 0; i < count; ++i) {
        if (size - pos < 2) return fail("joint names end early, at name " + std::to_string(i));
        const size_t shared = b[pos], rest = b[pos + 1];
        pos += 2;
        if (shared > prev.size()) return fail("joint name " + std::to_string(i) + " shares more than the previous name has");
        if (rest > size - pos) return fail("joint name " + std::to_string(i) + " runs past the names");
        if (shared + rest > kMaxNameBytes) return fail("joint name " + std::to_string(i) + " too long", DecodeError::StringTooLong);
        name.assign(prev, 0, shared);
        name.append(reinterpret_cast<const char*>(b + pos), rest);
        pos += rest;
        if (out) out->push_back(name);
        prev.swap(name);
    }
    if (pos != size) return fail("joint names: " + std::to_string(size - pos) + " bytes left over");
    return DecodeError::None;
}

void detail::pack_joint_names(std::span<const std::string> names, std::vector<uint8_t>& out) {
    out.clear();
    std::string_view prev;
    for (const std::string& n : names) {  // names are at most kMaxNameBytes (check_def_input)
        size_t shared = 0;
        while (shared < n.size() && shared < prev.size() && n[shared] == prev[shared]) ++shared;
        out.push_back(uint8_t(shared));
        out.push_back(uint8_t(n.size() - shared));
        out.insert(out.end(), n.begin() + std::ptrdiff_t(shared), n.end());
        prev = n;
    }
}

// The semantic limits of one SkeletonDef (a whole skeleton or a part).
DecodeError detail::check_skeleton_def(const wire::SkeletonDef& d, std::string* why) {
    auto fail = [&](DecodeError e, const std::string& w) {
        if (why) *why = "skeleton " + std::to_string(d.skeleton_id()) + ": " + w;
        return e;
    };
    if (d.name() && d.name()->size() > kMaxNameBytes) return fail(DecodeError::StringTooLong, "name too long");
    const int count = d.joint_count();
    if (count > kMaxJoints) return fail(DecodeError::TooManyJoints, std::to_string(count) + " joints");
    if (count < 1) return fail(DecodeError::BadSkeleton, "no joints");
    const auto* parents = d.parents();
    const auto* offsets = d.offsets();
    if (!parents || !offsets) return fail(DecodeError::BadSkeleton, "joint arrays missing");
    const size_t n = parents->size();
    if (offsets->size() != n) return fail(DecodeError::BadSkeleton, "joint arrays of different lengths");
    std::string names_why;
    if (const DecodeError e = unpack_joint_names(d, n, nullptr, &names_why); e != DecodeError::None) return fail(e, names_why);
    if (n < 1) return fail(DecodeError::BadSkeleton, "a part without joints");
    const int first = d.first_joint();
    if (size_t(first) + n > size_t(count))
        return fail(DecodeError::BadSkeleton, "joints " + std::to_string(first) + ".." + std::to_string(first + int(n) - 1) +
                                                  " beyond joint_count " + std::to_string(count));
    if (!(std::isfinite(d.metres_per_unit()) && d.metres_per_unit() > 0.0f))
        return fail(DecodeError::BadSkeleton, "metres_per_unit not finite and positive");
    for (size_t i = 0; i < n; ++i) {
        const int joint = first + int(i);
        const int parent = parents->Get(fb::uoffset_t(i));
        if (parent < -1 || parent >= joint)
            return fail(DecodeError::BadSkeleton, "joint " + std::to_string(joint) + " has parent " + std::to_string(parent) +
                                                      ", which is not before it");
        if (!finite(*offsets->Get(fb::uoffset_t(i))))
            return fail(DecodeError::BadSkeleton, "joint " + std::to_string(joint) + " offset not finite");
    }
    return DecodeError::None;
}

void detail::check_def_input(const SkeletonDefInput& d) {
    if (!d.skeleton) throw std::invalid_argument("build_skeleton_defs: skeleton is null");
    const Skeleton& s = *d.skeleton;
    if (std::string err = s.validate(); !err.empty()) throw std::invalid_argument("build_skeleton_defs: " + err);
    if (s.size() < 1 || s.size() > kMaxJoints)
        throw std::invalid_argument("build_skeleton_defs: skeleton has " + std::to_string(s.size()) + " joints (1.." +
                                    std::to_string(kMaxJoints) + ")");
    const int count = d.joint_count < 0 ? s.size() - d.first_joint : d.joint_count;
    if (d.first_joint < 0 || count < 1 || d.first_joint + count > s.size())
        throw std::invalid_argument("build_skeleton_defs: joint run " + std::to_string(d.first_joint) + " + " +
                                    std::to_string(count) + " outside the skeleton's " + std::to_string(s.size()) +
                                    " joints");
    if (!(std::isfinite(d.metres_per_unit) && d.metres_per_unit > 0.0f))
        throw std::invalid_argument("build_skeleton_defs: metres_per_unit must be finite and positive");
    check_name(d.name, kMaxNameBytes, "skeleton name");
    for (int j = d.first_joint; j < d.first_joint + count; ++j) {
        check_name(s.names[size_t(j)], kMaxNameBytes, "joint name");
        if (!isfinite(s.offsets[size_t(j)])) throw std::invalid_argument("build_skeleton_defs: offset not finite");
    }
}

size_t detail::build_skeleton_defs_into(fb::FlatBufferBuilder& fbb, const PacketHeader& h, uint32_t message_id,
                                std::span<const SkeletonDefInput> defs, std::span<const CharacterInfoInput> characters,
                                std::span<const SkeletonRefInput> refs) {
    if (defs.size() > kMaxDefsPerPacket || characters.size() > kMaxCharactersPerPacket || refs.size() > kMaxRefsPerPacket)
        throw std::invalid_argument("build_skeleton_defs: more than " + std::to_string(kMaxDefsPerPacket) +
                                    " definitions, " + std::to_string(kMaxCharactersPerPacket) + " characters or " +
                                    std::to_string(kMaxRefsPerPacket) + " references in one packet");
    std::vector<fb::Offset<wire::SkeletonDef>> def_offsets;
    std::vector<uint8_t> packed;
    std::vector<int16_t> parents;
    std::vector<wire::Vec3> offsets;
    for (const SkeletonDefInput& d : defs) {
        check_def_input(d);
        const Skeleton& s = *d.skeleton;
        const int count = d.joint_count < 0 ? s.size() - d.first_joint : d.joint_count;
        parents.clear();
        offsets.clear();
        pack_joint_names(std::span<const std::string>(s.names).subspan(size_t(d.first_joint), size_t(count)), packed);
        for (int j = d.first_joint; j < d.first_joint + count; ++j) {
            parents.push_back(int16_t(s.parents[size_t(j)]));
            const vec3 o = s.offsets[size_t(j)];
            offsets.emplace_back(o.x, o.y, o.z);
        }
        const auto name = fbb.CreateString(d.name.data(), d.name.size());
        const auto names_vec = fbb.CreateVector(packed);
        const auto parent_vec = fbb.CreateVector(parents);
        const auto offset_vec = fbb.CreateVectorOfStructs(offsets);
        def_offsets.push_back(wire::CreateSkeletonDef(fbb, d.skeleton_id, name, uint16_t(s.size()), uint16_t(d.first_joint),
                                                      parent_vec, offset_vec, d.metres_per_unit, names_vec));
    }
    std::vector<fb::Offset<wire::CharacterInfo>> chars;
    for (const CharacterInfoInput& c : characters) {
        check_name(c.name, kMaxNameBytes, "character name");
        chars.push_back(wire::CreateCharacterInfo(fbb, c.character_id, c.skeleton_id,
                                                  fbb.CreateString(c.name.data(), c.name.size())));
    }
    std::vector<fb::Offset<wire::SkeletonRef>> ref_offsets;
    for (const SkeletonRefInput& r : refs) {
        check_name(r.name, kMaxNameBytes, "skeleton name");
        const auto name = fbb.CreateString(r.name.data(), r.name.size());
        ref_offsets.push_back(wire::CreateSkeletonRef(fbb, r.skeleton_id, name, fbb.CreateVector(r.hash.data(), r.hash.size())));
    }
    const auto defs_vec = def_offsets.empty() ? 0 : fbb.CreateVector(def_offsets);
    const auto chars_vec = chars.empty() ? 0 : fbb.CreateVector(chars);
    const auto refs_vec = ref_offsets.empty() ? 0 : fbb.CreateVector(ref_offsets);
    return finish(fbb, h, wire::CreateSkeletonDefs(fbb, message_id, defs_vec, chars_vec, refs_vec));
}

std::vector<uint8_t> build_skeleton_defs(const PacketHeader& h, uint32_t message_id,
                                         std::span<const SkeletonDefInput> defs,
                                         std::span<const CharacterInfoInput> characters,
                                         std::span<const SkeletonRefInput> refs) {
    auto& fbb = builder();
    build_skeleton_defs_into(fbb, h, message_id, defs, characters, refs);
    return take(fbb, "build_skeleton_defs");
}

std::vector<SkeletonDefsPlan> plan_skeleton_defs(std::span<const SkeletonDefInput> skeletons,
                                                 std::span<const CharacterInfoInput> characters, size_t max_bytes,
                                                 std::span<const SkeletonRefInput> refs) {
    max_bytes = std::min(max_bytes, kMaxDatagram);
    const PacketHeader worst{0xFFFF, 0xFFFF, 0xFFFFFFFFu};
    auto fits = [&](const SkeletonDefsPlan& p) {
        if (p.defs.size() > kMaxDefsPerPacket || p.characters.size() > kMaxCharactersPerPacket || p.refs.size() > kMaxRefsPerPacket)
            return false;
        return build_skeleton_defs_into(builder(), worst, 0xFFFFFFFFu, p.defs, p.characters, p.refs) <= max_bytes;
    };
    std::vector<SkeletonDefsPlan> plans;
    SkeletonDefsPlan cur;
    auto flush = [&] {
        if (!cur.defs.empty() || !cur.characters.empty() || !cur.refs.empty()) plans.push_back(std::move(cur));
        cur = {};
    };
    // A small item (a reference, a character) into the current packet, or the next one.
    auto add_whole = [&](auto& list, const auto& item, const char* what) {
        list.push_back(item);
        if (fits(cur)) return;
        list.pop_back();
        flush();  // cur is reset in place: `list` still names its member
        list.push_back(item);
        if (!fits(cur)) throw std::invalid_argument(std::string("plan_skeleton_defs: one ") + what + " does not fit the packet");
    };
    for (const SkeletonRefInput& r : refs) add_whole(cur.refs, r, "reference");
    for (const SkeletonDefInput& in : skeletons) {
        check_def_input(in);
        const int end = in.joint_count < 0 ? in.skeleton->size() : in.first_joint + in.joint_count;
        int j = in.first_joint;
        while (j < end) {
            SkeletonDefInput part = in;
            part.first_joint = j;
            part.joint_count = end - j;
            cur.defs.push_back(part);
            if (fits(cur)) {
                j = end;
                break;
            }
            // Largest run [j, j + k) that still fits next to what the packet already holds.
            int lo = 0, hi = end - j - 1;
            while (lo < hi) {
                const int mid = (lo + hi + 1) / 2;
                cur.defs.back().joint_count = mid;
                if (fits(cur)) lo = mid;
                else hi = mid - 1;
            }
            if (lo == 0) {
                cur.defs.pop_back();
                if (cur.defs.empty() && cur.characters.empty() && cur.refs.empty())
                    throw std::invalid_argument("plan_skeleton_defs: one joint does not fit " + std::to_string(max_bytes) +
                                                " bytes");
                flush();
                continue;
            }
            cur.defs.back().joint_count = lo;
            j += lo;
            flush();
        }
    }
    for (const CharacterInfoInput& c : characters) add_whole(cur.characters, c, "character");
    flush();
    return plans;
}

}  // namespace ks::net
