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
    const int count = part.joint_count();
    const float mpu = part.metres_per_unit();
    auto it = std::find_if(parts_.begin(), parts_.end(), [&](const Partial& p) { return p.s.skeleton_id == id; });
    if (it == parts_.end()) {
        if (parts_.size() >= kMaxInProgress)
            return fail("skeleton " + std::to_string(id) + ": too many skeletons being assembled");
    } else if (it->s.skeleton.size() != count || it->s.metres_per_unit != mpu) {
        return fail("skeleton " + std::to_string(id) + ": part disagrees with earlier parts on joint count or units");
    }
    const bool waits = base_id >= 0 && base == nullptr;
    const size_t coded_bytes = part.joints_coded()->size();
    if (waits && waiting_bytes_ + coded_bytes > kMaxWaitingBytes)
        return fail("skeleton " + std::to_string(id) + ": more than " + std::to_string(kMaxWaitingBytes) +
                    " bytes of parts wait for the skeletons they are coded against");
    if (it == parts_.end()) {
        Partial p;
        p.s.skeleton_id = id;
        p.s.metres_per_unit = mpu;
        p.s.skeleton.names.assign(size_t(count), {});
        p.s.skeleton.parents.assign(size_t(count), -1);
        p.s.skeleton.offsets.assign(size_t(count), vec3{});
        p.have.assign(size_t(count), 0);
        p.missing = count;
        parts_.push_back(std::move(p));
        it = parts_.end() - 1;
    }
    if (part.name() && it->s.name.empty()) it->s.name = part.name()->str();
    if (waits) {
        it->waiting.push_back({part.first_joint(), part.part_joints(), uint16_t(base_id),
                               std::vector<uint8_t>(part.joints_coded()->begin(), part.joints_coded()->end())});
        waiting_bytes_ += coded_bytes;
        return true;
    }
    return apply(*it, part.first_joint(), joints, error);
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
    for (Partial& p : parts_)
        for (auto w = p.waiting.begin(); w != p.waiting.end();) {
            const Skeleton* base = held(w->base);
            if (!base) {
                ++w;
                continue;
            }
            detail::SkeletonJoints joints;
            std::string why;
            size_t new_name_bytes = kMaxNewNameBytesPerPacket;
            const DecodeError e = detail::decode_skeleton_joints(w->coded, w->first, size_t(w->count), joints, &why, &new_name_bytes, base);
            if (e != DecodeError::None) why = "skeleton " + std::to_string(p.s.skeleton_id) + ": " + why;
            if ((e != DecodeError::None || !apply(p, w->first, joints, &why)) && errors) errors->push_back(why);
            waiting_bytes_ -= w->coded.size();
            w = p.waiting.erase(w);
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
    for (const Waiting& w : it->waiting) waiting_bytes_ -= w.coded.size();  // duplicates of joints it has
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
