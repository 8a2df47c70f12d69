#include "common/src/net/protocol.h"

#include <algorithm>

#include "common/src/net/protocol_detail.h"
#include "common/src/net/skeleton_coding.h"

namespace ks::net {

using detail::check_skeleton_def;

bool SkeletonAssembler::add(const wire::SkeletonDef& part, std::string* error) {
    auto fail = [&](const std::string& w) {
        if (error) *error = w;
        return false;
    };
    std::string why;
    detail::SkeletonJoints joints;
    size_t new_name_bytes = kMaxNewNameBytesPerPacket;  // a part of a checked packet holds no more
    if (check_skeleton_def(part, &why, &new_name_bytes, &joints) != DecodeError::None) return fail(why);
    const uint16_t id = part.skeleton_id();
    const int count = part.joint_count();
    const float mpu = part.metres_per_unit();
    auto it = std::find_if(parts_.begin(), parts_.end(), [&](const Partial& p) { return p.s.skeleton_id == id; });
    if (it == parts_.end()) {
        if (parts_.size() >= kMaxInProgress)
            return fail("skeleton " + std::to_string(id) + ": too many skeletons being assembled");
    } else if (it->s.skeleton.size() != count || it->s.metres_per_unit != mpu) {
        return fail("skeleton " + std::to_string(id) + ": part disagrees with earlier parts on joint count or units");
    }
    const int first = part.first_joint();
    const int n = part.part_joints();
    if (it != parts_.end()) {  // joints already received must be identical
        for (int i = 0; i < n; ++i) {
            const size_t j = size_t(first + i);
            if (!it->have[j]) continue;
            const vec3 o = joints.offsets[size_t(i)], oj = it->s.skeleton.offsets[j];
            if (it->s.skeleton.names[j] != joints.names[size_t(i)] || it->s.skeleton.parents[j] != joints.parents[size_t(i)] ||
                oj.x != o.x || oj.y != o.y || oj.z != o.z)
                return fail("skeleton " + std::to_string(id) + ": joint " + std::to_string(j) +
                            " differs from an earlier part");
        }
    } else {
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
    for (int i = 0; i < n; ++i) {
        const size_t j = size_t(first + i);
        if (it->have[j]) continue;
        it->s.skeleton.names[j] = std::move(joints.names[size_t(i)]);
        it->s.skeleton.parents[j] = joints.parents[size_t(i)];
        it->s.skeleton.offsets[j] = joints.offsets[size_t(i)];
        it->have[j] = 1;
        --it->missing;
    }
    return true;
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
    SkeletonAssembler a;
    if (!a.add(def, error)) return std::nullopt;
    return a.take(def.skeleton_id(), error);
}

}  // namespace ks::net
