#include "common/src/net/protocol.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/src/net/protocol_detail.h"
#include "common/src/net/skeleton_coding.h"

namespace ks::net {

namespace fb = ::flatbuffers;
using namespace detail;

// The semantic limits of one SkeletonDef (a whole skeleton or a part), its joints decoded.
DecodeError detail::check_skeleton_def(const wire::SkeletonDef& d, std::string* why, size_t* new_name_bytes,
                                       SkeletonJoints* joints, const Skeleton* base) {
    auto fail = [&](DecodeError e, const std::string& w) {
        if (why) *why = "skeleton " + std::to_string(d.skeleton_id()) + ": " + w;
        return e;
    };
    if (d.name() && d.name()->size() > kMaxNameBytes) return fail(DecodeError::StringTooLong, "name too long");
    const int count = d.joint_count();
    if (count > kMaxJoints) return fail(DecodeError::TooManyJoints, std::to_string(count) + " joints");
    if (count < 1) return fail(DecodeError::BadSkeleton, "no joints");
    const int n = d.part_joints();
    if (n < 1) return fail(DecodeError::BadSkeleton, "a part without joints");
    const int first = d.first_joint();
    if (first + n > count)
        return fail(DecodeError::BadSkeleton, "joints " + std::to_string(first) + ".." + std::to_string(first + n - 1) +
                                                  " beyond joint_count " + std::to_string(count));
    if (!(std::isfinite(d.metres_per_unit()) && d.metres_per_unit() > 0.0f))
        return fail(DecodeError::BadSkeleton, "metres_per_unit not finite and positive");
    if (!d.joints_coded()) return fail(DecodeError::BadSkeleton, "joints missing");
    const int32_t b = d.base_skeleton();
    if (b < -1 || b > 0xFFFF || b == int32_t(d.skeleton_id()))
        return fail(DecodeError::BadSkeleton, "base_skeleton " + std::to_string(b) + " (-1, or another skeleton's id)");
    if (b >= 0 && base == nullptr) return DecodeError::None;  // decoded once the base is held
    SkeletonJoints scratch;
    std::string joints_why;
    const std::span<const uint8_t> coded(d.joints_coded()->data(), d.joints_coded()->size());
    if (const DecodeError e = decode_skeleton_joints(coded, first, size_t(n), joints ? *joints : scratch, &joints_why, new_name_bytes,
                                                     b >= 0 ? base : nullptr);
        e != DecodeError::None)
        return fail(e, joints_why);
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
    if ((d.base_id >= 0) != (d.base != nullptr) || d.base_id > 0xFFFF || d.base_id < -1 || d.base_id == int(d.skeleton_id))
        throw std::invalid_argument("build_skeleton_defs: base_id " + std::to_string(d.base_id) +
                                    " (-1 without a base skeleton, or another skeleton's id with one)");
    if (d.base)
        if (std::string err = d.base->validate(); !err.empty()) throw std::invalid_argument("build_skeleton_defs: base skeleton: " + err);
    for (int j = d.first_joint; j < d.first_joint + count; ++j) {
        check_name(s.names[size_t(j)], kMaxNameBytes, "joint name");
        if (!isfinite(s.offsets[size_t(j)])) throw std::invalid_argument("build_skeleton_defs: offset not finite");
    }
}

namespace {

int joints_of(const SkeletonDefInput& d) { return d.joint_count < 0 ? d.skeleton->size() - d.first_joint : d.joint_count; }

// Codes the joints of d onto `out`; with `bounds`, the bytes the stream would take if it ended
// after each of them (upper bounds), as far as the first beyond `stop_beyond`.
void code_joints(const SkeletonDefInput& d, std::vector<uint8_t>& out, std::vector<size_t>* bounds = nullptr,
                 size_t stop_beyond = std::numeric_limits<size_t>::max()) {
    const Skeleton& s = *d.skeleton;
    const size_t first = size_t(d.first_joint), count = size_t(joints_of(d));
    std::vector<int> parents(s.parents.begin() + std::ptrdiff_t(first), s.parents.begin() + std::ptrdiff_t(first + count));
    code_skeleton_joints(d.first_joint, std::span<const std::string>(s.names).subspan(first, count), parents,
                         std::span<const vec3>(s.offsets).subspan(first, count), out, bounds, stop_beyond, d.base);
}

// The name bytes a part's first k joints spell out anew (the first joint's whole name, then what
// each does not share with the one before), for k = 1 .. its joints.
std::vector<size_t> new_name_bytes(const SkeletonDefInput& d) {
    std::vector<size_t> sums;
    std::string_view prev;
    size_t total = 0;
    for (int j = d.first_joint; j < d.first_joint + joints_of(d); ++j) {
        const std::string& n = d.skeleton->names[size_t(j)];
        total += n.size() - detail::shared_prefix(n, prev);
        sums.push_back(total);
        prev = n;
    }
    return sums;
}

// The base among the whole skeletons defined before `at` (the latest kMaxBaseCandidates) that
// codes `at` smallest, if any codes it smaller than no base.
constexpr size_t kMaxBaseCandidates = 8;
SkeletonDefInput with_best_base(std::span<const SkeletonDefInput> defs, size_t at) {
    SkeletonDefInput best = defs[at];
    if (best.base || best.first_joint != 0 || joints_of(best) != best.skeleton->size()) return best;
    std::vector<uint8_t> out;
    code_joints(best, out);
    size_t best_bytes = out.size();
    for (size_t k = at; k-- > 0 && at - k <= kMaxBaseCandidates;) {
        const SkeletonDefInput& c = defs[k];
        if (c.first_joint != 0 || joints_of(c) != c.skeleton->size() || c.skeleton_id == best.skeleton_id) continue;
        SkeletonDefInput trial = defs[at];
        trial.base_id = c.skeleton_id;
        trial.base = c.skeleton;
        out.clear();
        code_joints(trial, out);
        if (out.size() < best_bytes) {
            best_bytes = out.size();
            best = trial;
        }
    }
    return best;
}

}  // namespace

size_t detail::build_skeleton_defs_into(fb::FlatBufferBuilder& fbb, const PacketHeader& h, uint32_t message_id,
                                        std::span<const SkeletonDefInput> defs,
                                        std::span<const std::span<const uint8_t>> coded,
                                        std::span<const CharacterInfoInput> characters,
                                        std::span<const SkeletonRefInput> refs) {
    if (defs.size() > kMaxDefsPerPacket || characters.size() > kMaxCharactersPerPacket || refs.size() > kMaxRefsPerPacket)
        throw std::invalid_argument("build_skeleton_defs: more than " + std::to_string(kMaxDefsPerPacket) +
                                    " definitions, " + std::to_string(kMaxCharactersPerPacket) + " characters or " +
                                    std::to_string(kMaxRefsPerPacket) + " references in one packet");
    std::vector<fb::Offset<wire::SkeletonDef>> def_offsets;
    for (size_t i = 0; i < defs.size(); ++i) {
        const SkeletonDefInput& d = defs[i];
        const auto name = fbb.CreateString(d.name.data(), d.name.size());
        const auto coded_vec = fbb.CreateVector(coded[i].data(), coded[i].size());
        wire::SkeletonDefBuilder b(fbb);
        b.add_skeleton_id(d.skeleton_id);
        b.add_name(name);
        b.add_joint_count(uint16_t(d.skeleton->size()));
        b.add_first_joint(uint16_t(d.first_joint));
        b.add_metres_per_unit(d.metres_per_unit);
        b.add_part_joints(uint16_t(joints_of(d)));
        b.add_joints_coded(coded_vec);
        b.add_base_skeleton(d.base_id);
        def_offsets.push_back(b.Finish());
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
    std::vector<std::vector<uint8_t>> coded(defs.size());
    std::vector<std::span<const uint8_t>> spans;
    for (size_t i = 0; i < defs.size(); ++i) {
        check_def_input(defs[i]);
        code_joints(defs[i], coded[i]);
        spans.emplace_back(coded[i]);
    }
    auto fbb = builder();
    build_skeleton_defs_into(fbb, h, message_id, defs, spans, characters, refs);
    return take(fbb, "build_skeleton_defs");
}

std::vector<uint8_t> build_skeleton_defs(const PacketHeader& h, uint32_t message_id, const SkeletonDefsPlan& plan) {
    if (plan.coded.size() != plan.defs.size()) return build_skeleton_defs(h, message_id, plan.defs, plan.characters, plan.refs);
    std::vector<std::span<const uint8_t>> spans(plan.coded.begin(), plan.coded.end());
    auto fbb = builder();
    build_skeleton_defs_into(fbb, h, message_id, plan.defs, spans, plan.characters, plan.refs);
    return take(fbb, "build_skeleton_defs");
}

// A packet's size depends on its coded joints only through their lengths, and grows with them: the
// plan sizes each part with its joints' upper bound (zeros of that length), so every message built
// from it fits. One coding pass per part gives the bound for every run length.
std::vector<SkeletonDefsPlan> plan_skeleton_defs(std::span<const SkeletonDefInput> skeletons,
                                                 std::span<const CharacterInfoInput> characters, size_t max_bytes,
                                                 std::span<const SkeletonRefInput> refs) {
    max_bytes = std::min(max_bytes, kMaxDatagram);
    const PacketHeader worst{0xFFFF, 0xFFFF, 0xFFFFFFFFu};
    std::vector<uint8_t> zeros;
    std::vector<size_t> cur_bounds, cur_names;  // per definition in cur: its coded joints' bound, its new name bytes
    auto fits = [&](const SkeletonDefsPlan& p) {
        if (p.defs.size() > kMaxDefsPerPacket || p.characters.size() > kMaxCharactersPerPacket || p.refs.size() > kMaxRefsPerPacket)
            return false;
        int joints = 0;
        for (const SkeletonDefInput& d : p.defs) joints += d.joint_count;
        size_t names = 0;
        for (size_t n : cur_names) names += n;
        if (joints > kMaxJointsPerPacket || names > kMaxNewNameBytesPerPacket) return false;
        for (size_t b : cur_bounds) zeros.resize(std::max(zeros.size(), b));  // before any span points into it
        std::vector<std::span<const uint8_t>> coded;
        for (size_t b : cur_bounds) coded.emplace_back(zeros.data(), b);
        auto fbb = builder();
        return build_skeleton_defs_into(fbb, worst, 0xFFFFFFFFu, p.defs, coded, p.characters, p.refs) <= max_bytes;
    };
    std::vector<SkeletonDefsPlan> plans;
    SkeletonDefsPlan cur;
    auto flush = [&] {
        if (!cur.defs.empty() || !cur.characters.empty() || !cur.refs.empty()) plans.push_back(std::move(cur));
        cur = {};
        cur_bounds.clear();
        cur_names.clear();
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
    std::vector<uint8_t> scratch;
    std::vector<size_t> bounds, names;
    for (size_t at = 0; at < skeletons.size(); ++at) {
        check_def_input(skeletons[at]);
        const SkeletonDefInput in = with_best_base(skeletons, at);
        const int end = in.first_joint + joints_of(in);
        int j = in.first_joint;
        while (j < end) {
            SkeletonDefInput part = in;
            part.first_joint = j;
            part.joint_count = end - j;
            scratch.clear();
            code_joints(part, scratch, &bounds, max_bytes);  // no more than a datagram's worth
            names = new_name_bytes(part);
            cur.defs.push_back(part);
            cur_bounds.push_back(bounds.back());
            cur_names.push_back(names.back());
            if (int(bounds.size()) == end - j && fits(cur)) {  // coded whole and finished
                cur.coded.push_back(scratch);
                j = end;
                break;
            }
            // Largest run [j, j + k) that still fits next to what the packet already holds.
            int lo = 0, hi = std::min(end - j - 1, int(bounds.size()));
            while (lo < hi) {
                const int mid = (lo + hi + 1) / 2;
                cur.defs.back().joint_count = mid;
                cur_bounds.back() = bounds[size_t(mid - 1)];
                cur_names.back() = names[size_t(mid - 1)];
                if (fits(cur)) lo = mid;
                else hi = mid - 1;
            }
            if (lo == 0) {
                cur.defs.pop_back();
                cur_bounds.pop_back();
                cur_names.pop_back();
                if (cur.defs.empty() && cur.characters.empty() && cur.refs.empty())
                    throw std::invalid_argument("plan_skeleton_defs: one joint does not fit " + std::to_string(max_bytes) +
                                                " bytes");
                flush();
                continue;
            }
            cur.defs.back().joint_count = lo;
            cur_bounds.back() = bounds[size_t(lo - 1)];
            cur_names.back() = names[size_t(lo - 1)];
            cur.coded.emplace_back();
            code_joints(cur.defs.back(), cur.coded.back());
            j += lo;
            flush();
        }
    }
    for (const CharacterInfoInput& c : characters) add_whole(cur.characters, c, "character");
    flush();
    return plans;
}

}  // namespace ks::net
