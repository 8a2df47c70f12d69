// Server's reliable delivery: definitions queued and planned, acknowledged and confirmed (with
// their skeleton chains), and reliable messages resent within the bandwidth budget.
#include "server/src/net/server.h"
#include "server/src/net/server_session.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ks::net {

void Server::queue_definitions(Session& s, std::span<const uint16_t> skeletons, std::span<const uint16_t> characters) {
    if (skeletons.empty() && characters.empty()) return;
    std::vector<SkeletonDefInput> defs;
    std::vector<SkeletonRefInput> refs;
    for (uint16_t id : skeletons) {
        const Roster::SkeletonEntry& e = roster_.skeletons.at(id);
        if (!s.client_skeletons.empty()) {
            const SkeletonHash& h = skeleton_hash_of(id);
            if (std::find(s.client_skeletons.begin(), s.client_skeletons.end(), h) != s.client_skeletons.end()) {
                refs.push_back({id, e.name, h});
                continue;
            }
        }
        defs.push_back({id, e.name, &e.skeleton, e.metres_per_unit, 0, -1});
    }
    stats_.skeletons_by_reference += refs.size();
    stats_.skeletons_in_full += defs.size();
    std::vector<CharacterInfoInput> chars;
    for (uint16_t id : characters) {
        const Roster::CharacterEntry& e = roster_.characters.at(id);
        chars.push_back({id, e.skeleton, e.name});
    }
    for (const auto& plan : plans_for(defs, chars, refs)) {
        const uint32_t mid = next_message_id_++;
        std::vector<uint16_t> defines;
        for (const CharacterInfoInput& c : plan->plan.characters) defines.push_back(c.character_id);
        // The plan's skeletons point into the roster, which keeps every skeleton; it owns its names.
        s.reliable.push_back({mid, [plan, mid](const PacketHeader& h) { return build_skeleton_defs(h, mid, plan->plan); },
                              -1e9, -1, 0, false, std::move(defines), 0, {}});
        s.reliable.back().bytes = s.reliable.back().build({}).size();
        for (const SkeletonDefInput& d : plan->plan.defs) {
            s.reliable.back().skeletons.push_back(d.skeleton_id);
            if (d.base_id >= 0) s.skeleton_base[d.skeleton_id] = uint16_t(d.base_id);
        }
        for (const SkeletonRefInput& r : plan->plan.refs) s.reliable.back().skeletons.push_back(r.skeleton_id);
    }
}

// Clients that join while the roster stands still are sent the same definitions: planned (and
// their joints coded) once, for the first of them.
const std::vector<std::shared_ptr<const Server::OwnedPlan>>& Server::plans_for(std::span<const SkeletonDefInput> defs,
                                                                                std::span<const CharacterInfoInput> chars,
                                                                                std::span<const SkeletonRefInput> refs) {
    PlanKey key;
    for (const SkeletonDefInput& d : defs) key.defs.push_back(d.skeleton_id);
    for (const SkeletonRefInput& r : refs) key.refs.push_back(r.skeleton_id);
    for (const CharacterInfoInput& c : chars) key.characters.emplace_back(c.character_id, c.skeleton_id, std::string(c.name));
    if (key == plan_key_ && !plans_.empty()) return plans_;
    plans_.clear();
    // Sealing adds up to kMaxSealOverhead bytes to every datagram.
    for (SkeletonDefsPlan& p : plan_skeleton_defs(defs, chars, secure_ ? kMaxDatagram - kMaxSealOverhead : kMaxDatagram, refs)) {
        auto owned = std::make_shared<OwnedPlan>();
        owned->plan = std::move(p);
        auto own = [&](std::string_view& v) { v = owned->names.emplace_back(v); };  // a deque keeps its elements in place
        for (SkeletonDefInput& d : owned->plan.defs) own(d.name);
        for (CharacterInfoInput& c : owned->plan.characters) own(c.name);
        for (SkeletonRefInput& r : owned->plan.refs) own(r.name);
        plans_.push_back(std::move(owned));
    }
    plan_key_ = std::move(key);
    return plans_;
}

// Skeleton ids are never reused for another skeleton, so a hash computed once holds.
const SkeletonHash& Server::skeleton_hash_of(uint16_t id) {
    auto it = skeleton_hashes_.find(id);
    if (it == skeleton_hashes_.end()) {
        const Roster::SkeletonEntry& e = roster_.skeletons.at(id);
        it = skeleton_hashes_.emplace(id, skeleton_hash(e.skeleton, e.metres_per_unit)).first;
    }
    return it->second;
}

void Server::mark_acked(Session& s, uint32_t message_id) {
    for (auto& r : s.reliable)
        if (r.message_id == message_id) r.acked = true;
}

// Acknowledged definitions confirm their characters (unless removed since) once every piece of
// their skeleton, and of the skeletons it is coded against, is acknowledged too (a large skeleton
// spans several messages).
void Server::confirm_definitions(Session& s) {
    for (const auto& r : s.reliable) {
        if (!r.acked) continue;
        for (uint16_t c : r.defines)
            if (roster_.characters.count(c)) {
                s.defined.insert(c);
                s.def_sent_s[c] = std::max(s.def_sent_s[c], r.last_sent);
            }
        for (uint16_t k : r.skeletons) s.skeleton_sent_s[k] = std::max(s.skeleton_sent_s[k], r.last_sent);
    }
    s.reliable.erase(std::remove_if(s.reliable.begin(), s.reliable.end(), [](const auto& r) { return r.acked; }), s.reliable.end());
    const std::set<uint16_t> queued = skeletons_queued(s, false);
    for (auto it = s.defined.begin(); it != s.defined.end();) {
        const auto c = roster_.characters.find(*it);
        if (c != roster_.characters.end() && chain_pending(s, c->second.skeleton, queued)) {
            ++it;
            continue;
        }
        if (c != roster_.characters.end()) {
            s.known.insert(*it);
            s.confirmed[*it] = std::max(s.def_sent_s[*it], chain_sent_s(s, c->second.skeleton));
        }
        s.def_sent_s.erase(*it);
        it = s.defined.erase(it);
    }
}

// The skeletons a queued reliable message carries (a piece of), of the messages not sent exactly
// once if `not_once`.
std::set<uint16_t> Server::skeletons_queued(const Session& s, bool not_once) {
    std::set<uint16_t> out;
    for (const auto& r : s.reliable)
        if (!not_once || r.sends != 1) out.insert(r.skeletons.begin(), r.skeletons.end());
    return out;
}

// The latest acknowledged sending of a message carrying (a piece of) the skeleton or one it is coded
// against.
double Server::chain_sent_s(const Session& s, uint16_t skeleton) {
    double latest = 0;
    for (size_t depth = 0; depth <= s.skeleton_base.size(); ++depth) {
        if (const auto it = s.skeleton_sent_s.find(skeleton); it != s.skeleton_sent_s.end()) latest = std::max(latest, it->second);
        const auto b = s.skeleton_base.find(skeleton);
        if (b == s.skeleton_base.end()) break;
        skeleton = b->second;
    }
    return latest;
}

// Whether the skeleton, or one it is coded against (the chain the plans made), is in `queued`.
bool Server::chain_pending(const Session& s, uint16_t skeleton, const std::set<uint16_t>& queued) {
    for (size_t depth = 0; depth <= s.skeleton_base.size(); ++depth) {
        if (queued.count(skeleton)) return true;
        const auto it = s.skeleton_base.find(skeleton);
        if (it == s.skeleton_base.end()) return false;
        skeleton = it->second;
    }
    return true;  // a cycle, which no plan makes: never ready
}

// Characters whose definition and whole skeleton chain have been sent once, and not yet again, are
// known: their snapshots may follow unconfirmed. A definition sent again was not acknowledged in
// time (lost, or a client that does not acknowledge): its character's snapshots wait for the
// confirmation.
void Server::mark_sent_definitions(Session& s) {
    const std::set<uint16_t> not_once = skeletons_queued(s, true);
    for (const auto& r : s.reliable)
        for (uint16_t c : r.defines) {
            const auto it = roster_.characters.find(c);
            if (it == roster_.characters.end() || s.confirmed.count(c)) continue;
            if (r.sends == 1 && !chain_pending(s, it->second.skeleton, not_once)) s.known.insert(c);
            else s.known.erase(c);
        }
    for (uint16_t c : s.defined) {  // acknowledged, a piece of its skeleton chain not
        const auto it = roster_.characters.find(c);
        if (it != roster_.characters.end() && chain_pending(s, it->second.skeleton, not_once)) s.known.erase(c);
    }
}

double Server::reliable_burst_bytes() const {
    return std::max(double(kMaxDatagram + kIpUdpHeaderBytes), cfg_.bandwidth_bps / 8.0 / std::max(1.0f, cfg_.snapshot_hz));
}

void Server::send_reliable(Session& s, bool force) {
    const double t = now_s();
    // Reliable messages share the client's bandwidth budget with its snapshots: they spend an
    // allowance that refills at the budget's rate (a snapshot's or a datagram's worth banked, so a
    // burst cannot overrun the budget), and what they send is taken from the next snapshots'
    // budget (send()). A message goes while the allowance is positive and may leave it in debt by
    // up to its own size, repaid at the budget's rate: waiting for a whole message's worth instead
    // left the allowance full and unused for part of every wait (joining skeletons went at three
    // quarters of the budget).
    const double per_s = s.rate.rate_bps() / 8.0;
    const double bank = reliable_burst_bytes();
    s.reliable_allowance = std::min(bank, s.reliable_allowance + (t - s.allowance_last) * per_s);
    s.allowance_last = t;
    for (auto& r : s.reliable) {
        // Each resend waits twice as long as the one before (0.5, 1, 2 s at most): a client
        // that stops acknowledging costs less and less, and is dropped (see publish) soon.
        const double wait = std::min(cfg_.reliable_resend_s * double(1u << std::min(r.sends, 3)), 2.0);
        if (r.acked || (!force && t - r.last_sent < wait)) continue;
        const double cost = double(r.bytes + kIpUdpHeaderBytes + (s.sealer ? kMaxSealOverhead : 0));
        if (s.reliable_allowance <= 0) break;  // in order: later messages wait too
        s.reliable_allowance -= cost;
        r.last_sent = t;
        if (r.first_sent < 0) r.first_sent = t;
        ++r.sends;
        send(s, r.build, kTagReliable | r.message_id);
    }
    mark_sent_definitions(s);
}

}  // namespace ks::net
