#include "common/src/net/protocol.h"

#include <algorithm>

#include "common/src/net/protocol_detail.h"
#include "common/src/net/skeleton_coding.h"

namespace ks::net {

using detail::check_skeleton_def;

bool SkeletonAssembler::add(const wire::SkeletonDef& part, std::string* error, const HeldSkeletons& held) {
    auto fail = [&](const std::string& w) {
        if (error) *error = w;
        return false;
    };
    const uint16_t id = part.skeleton_id();
    const int32_t base_id = part.base_skeleton();
    const Skeleton* base = base_id >= 0 && held ? held(uint16_t(base_id)) : nullptr;
    std::string why;
    detail::SkeletonJoints joints;
    size_t new_name_bytes = kMaxNewNameBytesPerPacket;  // a part of a checked packet holds no more
    if (check_skeleton_def(part, &why, &new_name_bytes, &joints, base) != DecodeError::None) return fail(why);
    if (base_id >= 0 && base == nullptr) return wait(part, error);
    return place(Placed{id, part.joint_count(), part.metres_per_unit(), part.name() ? part.name()->str() : std::string(),
                        part.first_joint()},
                 joints, error);
}

// A part coded against a skeleton not held yet: its coded bytes kept (each charged at least
// kWaitingOverheadBytes) until resolve() finds the base. Duplicates are kept once.
bool SkeletonAssembler::wait(const wire::SkeletonDef& part, std::string* error) {
    Waiting w{{part.skeleton_id(), part.joint_count(), part.metres_per_unit(), part.name() ? part.name()->str() : std::string(),
               part.first_joint()},
              part.part_joints(), uint16_t(part.base_skeleton()),
              std::vector<uint8_t>(part.joints_coded()->begin(), part.joints_coded()->end())};
    for (const Waiting& o : waiting_)
        if (o.at.id == w.at.id && o.at.first == w.at.first && o.count == w.count && o.base == w.base && o.coded == w.coded) return true;
    const size_t cost = w.coded.size() + kWaitingOverheadBytes;
    if (waiting_bytes_ + cost > kMaxWaitingBytes) {
        if (error)
            *error = "skeleton " + std::to_string(w.at.id) + ": more than " + std::to_string(kMaxWaitingBytes) +
                     " bytes of parts wait for the skeletons they are coded against";
        return false;
    }
    waiting_bytes_ += cost;
    waiting_.push_back(std::move(w));
    return true;
}

// Decoded joints into their skeleton's partial (made when it is the first part).
bool SkeletonAssembler::place(const Placed& at, detail::SkeletonJoints& joints, std::string* error) {
    auto it = std::find_if(parts_.begin(), parts_.end(), [&](const Partial& p) { return p.s.skeleton_id == at.id; });
    if (it == parts_.end()) {
        if (parts_.size() >= kMaxInProgress) {
            if (error) *error = "skeleton " + std::to_string(at.id) + ": too many skeletons being assembled";
            return false;
        }
        Partial p;
        p.s.skeleton_id = at.id;
        p.s.metres_per_unit = at.metres_per_unit;
        p.s.skeleton.names.assign(size_t(at.joint_count), {});
        p.s.skeleton.parents.assign(size_t(at.joint_count), -1);
        p.s.skeleton.offsets.assign(size_t(at.joint_count), vec3{});
        p.have.assign(size_t(at.joint_count), 0);
        p.missing = at.joint_count;
        parts_.push_back(std::move(p));
        it = parts_.end() - 1;
    } else if (it->s.skeleton.size() != at.joint_count || it->s.metres_per_unit != at.metres_per_unit) {
        if (error) *error = "skeleton " + std::to_string(at.id) + ": part disagrees with earlier parts on joint count or units";
        return false;
    }
    if (!at.name.empty() && it->s.name.empty()) it->s.name = at.name;
    return apply(*it, at.first, joints, error);
}

// Joints already received must be identical; the new ones are taken.
bool SkeletonAssembler::apply(Partial& p, int first, detail::SkeletonJoints& joints, std::string* error) {
    const int n = int(joints.names.size());
    for (int i = 0; i < n; ++i) {
        const size_t j = size_t(first + i);
        if (!p.have[j]) continue;
        const vec3 o = joints.offsets[size_t(i)], oj = p.s.skeleton.offsets[j];
        if (p.s.skeleton.names[j] != joints.names[size_t(i)] || p.s.skeleton.parents[j] != joints.parents[size_t(i)] ||
            oj.x != o.x || oj.y != o.y || oj.z != o.z) {
            if (error) *error = "skeleton " + std::to_string(p.s.skeleton_id) + ": joint " + std::to_string(j) + " differs from an earlier part";
            return false;
        }
    }
    for (int i = 0; i < n; ++i) {
        const size_t j = size_t(first + i);
        if (p.have[j]) continue;
        p.s.skeleton.names[j] = std::move(joints.names[size_t(i)]);
        p.s.skeleton.parents[j] = joints.parents[size_t(i)];
        p.s.skeleton.offsets[j] = joints.offsets[size_t(i)];
        p.have[j] = 1;
        --p.missing;
    }
    return true;
}

void SkeletonAssembler::resolve(const HeldSkeletons& held, std::vector<std::string>* errors) {
    if (!held) return;
    for (auto w = waiting_.begin(); w != waiting_.end();) {
        const Skeleton* base = held(w->base);
        if (!base) {
            ++w;
            continue;
        }
        detail::SkeletonJoints joints;
        std::string why;
        size_t new_name_bytes = kMaxNewNameBytesPerPacket;
        const DecodeError e = detail::decode_skeleton_joints(w->coded, w->at.first, size_t(w->count), joints, &why, &new_name_bytes, base);
        if (e != DecodeError::None) why = "skeleton " + std::to_string(w->at.id) + ": " + why;
        if ((e != DecodeError::None || !place(w->at, joints, &why)) && errors) errors->push_back(why);
        waiting_bytes_ -= w->coded.size() + kWaitingOverheadBytes;
        w = waiting_.erase(w);
    }
}

std::vector<uint16_t> SkeletonAssembler::completed() const {
    std::vector<uint16_t> ids;
    for (const Partial& p : parts_)
        if (p.missing == 0) ids.push_back(p.s.skeleton_id);
    return ids;
}

bool SkeletonAssembler::complete(uint16_t skeleton_id) const {
    for (const Partial& p : parts_)
        if (p.s.skeleton_id == skeleton_id) return p.missing == 0;
    return false;
}

std::optional<ReceivedSkeleton> SkeletonAssembler::take(uint16_t skeleton_id, std::string* error) {
    auto it = std::find_if(parts_.begin(), parts_.end(), [&](const Partial& p) { return p.s.skeleton_id == skeleton_id; });
    if (it == parts_.end() || it->missing > 0) {
        if (error) *error = "skeleton " + std::to_string(skeleton_id) + " is incomplete";
        return std::nullopt;
    }
    ReceivedSkeleton s = std::move(it->s);
    parts_.erase(it);
    if (std::string why = s.skeleton.validate(); !why.empty()) {
        if (error) *error = "skeleton " + std::to_string(skeleton_id) + ": " + why;
        return std::nullopt;
    }
    return s;
}

std::optional<ReceivedSkeleton> skeleton_from_wire(const wire::SkeletonDef& def, std::string* error) {
    if (def.first_joint() != 0 || def.part_joints() != def.joint_count()) {
        if (error)
            *error = "skeleton " + std::to_string(def.skeleton_id()) +
                     ": a part, not a whole skeleton (use SkeletonAssembler)";
        return std::nullopt;
    }
    if (def.base_skeleton() >= 0) {
        if (error)
            *error = "skeleton " + std::to_string(def.skeleton_id()) + ": coded against skeleton " +
                     std::to_string(def.base_skeleton()) + " (use SkeletonAssembler with the skeletons held)";
        return std::nullopt;
    }
    SkeletonAssembler a;
    if (!a.add(def, error)) return std::nullopt;
    return a.take(def.skeleton_id(), error);
}

}  // namespace ks::net
