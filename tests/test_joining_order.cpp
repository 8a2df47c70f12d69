// What a joining client is sent, in what order: its characters' snapshots follow their
// definitions without waiting for the definitions' acknowledgement, but a state the client may
// not have been able to decode (sent before the definition was acknowledged) is never a
// baseline; the definitions go at the client's whole budget; skeletons grown from one source
// travel as their differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/src/codec/snapshot_codec.h"
#include "programs/server/sim/in_process_rig.h"
#include "tests/support/snapshot_entries.h"
#include "tests/support/udp_harness.h"

using namespace ks;

namespace {

struct EntrySeen {
    uint32_t tick;
    uint16_t id;
    bool delta;
    uint32_t base_tick;
};

std::vector<EntrySeen> entries_of(const net::DecodedPacket& p) {
    std::vector<EntrySeen> out;
    const net::DecodedPacket::SnapshotView v = p.snapshot();
    for (const test::PayloadEntry& e : test::payload_entries(v.data)) {
        const bool delta = (e.mode & kModeMask) != 0;
        out.push_back({v.tick, e.id, delta, delta ? v.tick - e.base_age : v.tick});
    }
    return out;
}

// The deltas among the entries, each expected against a state sent at `from` or later.
size_t deltas_against_ticks_from(const std::vector<EntrySeen>& entries, int from) {
    size_t deltas = 0;
    for (const EntrySeen& e : entries)
        if (e.delta) {
            ++deltas;
            EXPECT_GE(int(e.base_tick), from) << "character " << e.id << " at tick " << e.tick << " against tick " << e.base_tick;
        }
    return deltas;
}

}  // namespace

// Client 3 of the rig is 4 ticks away each way: waiting for the acknowledgement of the last
// definition would hold its first snapshot back by at least 8 ticks.
TEST(JoiningOrder, SnapshotsFollowTheirDefinitionsWithoutARoundTrip) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library("game");
    InProcessRig rig(lib, InProcessRigConfig{.characters = 4, .clients = 4, .worker_threads = 0});
    for (int n = 1; n <= 120; ++n) rig.tick(n);
    const std::vector<InProcessRig::Sent>& sent = rig.sent_to(3);
    int last_defs = -1, first_snapshot = -1;
    for (const InProcessRig::Sent& s : sent) {
        if (s.type == net::MessageType::SkeletonDefs && first_snapshot < 0) last_defs = s.tick;
        if (s.type == net::MessageType::Snapshot && first_snapshot < 0) first_snapshot = s.tick;
    }
    ASSERT_GE(last_defs, 0);
    ASSERT_GE(first_snapshot, 0);
    RecordProperty("ticks_from_definitions_to_snapshot", first_snapshot - last_defs);
    // The round trip is 8 ticks; the last definition's bytes are repaid first (2-3 ticks), then the
    // next snapshot tick.
    EXPECT_LE(first_snapshot - last_defs, 5) << "not a round trip";
    EXPECT_TRUE(rig.sessions()[3]->arriving().empty()) << "every character shown within 2 s";
}

// The first sending of every definition is lost: the client receives snapshots of characters it
// cannot decode yet and acknowledges their datagrams. None of those states may become a baseline:
// every delta the server sends is against a state sent after the definition got through.
TEST(JoiningOrder, AStateSentBeforeItsDefinitionWasAcknowledgedIsNeverABaseline) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library();
    InProcessRigConfig rc{.characters = 3, .clients = 1, .worker_threads = 0};
    std::set<uint32_t> defs_seen;
    int defs_through = -1;  // the tick the first definition datagram was let through
    std::vector<EntrySeen> entries;
    int tick_now = 0;
    rc.drop_to_client = [&](int, const net::DecodedPacket& p) {
        if (p.type == net::MessageType::SkeletonDefs) {
            const uint32_t id = p.message<net::wire::SkeletonDefs>()->message_id();
            if (defs_seen.insert(id).second) return true;  // the first sending: lost
            if (defs_through < 0) defs_through = tick_now;
        }
        if (p.type == net::MessageType::Snapshot)
            for (const EntrySeen& e : entries_of(p)) entries.push_back(e);
        return false;
    };
    InProcessRig rig(lib, rc);
    for (tick_now = 1; tick_now <= 240; ++tick_now) rig.tick(tick_now);
    ASSERT_GE(defs_through, 0) << "the definitions were sent again";
    const auto before = std::count_if(entries.begin(), entries.end(), [&](const EntrySeen& e) { return int(e.tick) < defs_through; });
    EXPECT_GT(before, 0) << "snapshots went out before the definitions were acknowledged";
    EXPECT_GT(deltas_against_ticks_from(entries, defs_through), 0u) << "deltas once the definitions were acknowledged";
    const ClientSession& s = *rig.sessions()[0];
    EXPECT_TRUE(s.arriving().empty());
    EXPECT_EQ(s.characters().size(), 3u);
    EXPECT_GT(s.stats().entries_early, 0u) << "the entries that came before their skeleton, counted as such";
    EXPECT_EQ(s.stats().entries_refused, 0u) << "and not as refused";
    EXPECT_EQ(s.stats().resyncs_sent, 0u) << "nor answered with a resync";
}

// A stress rig's definition (1,000 joints, several datagrams) leaves at the client's budget. The
// reliable allowance starts with a datagram's worth banked, refills at the budget's rate, and a
// message goes while it is positive: so from the first definition datagram to the last, the bytes
// before the last are the budget's worth plus the bank, less what the allowance held when the last
// went (positive, at most a tick's refill). Waiting for a whole message's worth instead sends less.
TEST(JoiningOrder, DefinitionsLeaveAtTheWholeBudget) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library("stress");
    InProcessRig rig(lib, InProcessRigConfig{.characters = 2, .clients = 1, .worker_threads = 0});
    for (int n = 1; n <= 120; ++n) rig.tick(n);
    int first = -1, last = -1, datagrams = 0;
    size_t bytes = 0, last_bytes = 0;
    for (const InProcessRig::Sent& s : rig.sent_to(0))
        if (s.type == net::MessageType::SkeletonDefs) {
            if (first < 0) first = s.tick;
            last = s.tick;
            bytes += s.wire_bytes;
            last_bytes = s.wire_bytes;
            ++datagrams;
        }
    ASSERT_GE(datagrams, 5) << "several datagrams' worth of definitions";
    const double budget = 256000.0 / 8.0 * double(last - first) / 60.0, sent = double(bytes - last_bytes);
    RecordProperty("definition_bytes", int(bytes));
    RecordProperty("definition_ticks", last - first);
    const double bank = std::max(double(net::kMaxDatagram + net::kIpUdpHeaderBytes), 256000.0 / 8.0 / 30.0);
    const double tick = 256000.0 / 8.0 / 60.0;
    EXPECT_GT(sent, budget + bank - tick - 1.0) << "the budget's rate, none of it left unused";
    EXPECT_LE(sent, budget + bank + 1.0) << "within the budget";
}

namespace {

// Every SkeletonDefs byte sent to client 0 until it shows every character whole (or 2 s).
size_t definition_bytes_until_shown(const ClipLibrary& lib, int characters, InProcessRig** keep = nullptr) {
    auto rig = std::make_unique<InProcessRig>(lib, InProcessRigConfig{.characters = characters, .clients = 1, .worker_threads = 0});
    for (int n = 1; n <= 120 && !(rig->sessions()[0]->characters().size() == size_t(characters) && rig->sessions()[0]->arriving().empty()); ++n)
        rig->tick(n);
    size_t bytes = 0;
    for (const InProcessRig::Sent& s : rig->sent_to(0))
        if (s.type == net::MessageType::SkeletonDefs) bytes += s.wire_bytes;
    if (keep) *keep = rig.release();
    return bytes;
}

// The built-in game rig and a second skeleton grown from it (offsets changed on a fifth of its
// joints), with the same clips: characters alternate between them.
ClipLibrary grown_pair() {
    ClipLibrary two = builtin_clip_library("game");
    Skeleton grown = two.skeletons[0];
    for (size_t j = 0; j < grown.offsets.size(); j += 5) grown.offsets[j] = grown.offsets[j] * 1.1f;
    two.skeletons.push_back(grown);
    two.metres_per_unit.push_back(two.metres_per_unit[0]);
    two.skeleton_names.push_back("grown");
    const size_t clips = two.clips.size();
    for (size_t c = 0; c < clips; ++c) {
        two.clips.push_back(two.clips[c]);
        two.clips.back().skeleton = 1;
    }
    return two;
}

}  // namespace

// Two skeletons grown from one source (the second's offsets differ on a fifth of its joints): the
// second travels as its differences from the first, and the client holds both exactly as sent.
TEST(JoiningOrder, SkeletonsGrownFromOneSourceTravelAsTheirDifferences) {
    test::quiet_server_logger();
    const ClipLibrary one = builtin_clip_library("game"), two = grown_pair();
    const size_t alone = definition_bytes_until_shown(one, 2);
    InProcessRig* raw = nullptr;
    const size_t both = definition_bytes_until_shown(two, 2, &raw);
    const std::unique_ptr<InProcessRig> rig(raw);
    RecordProperty("one_skeleton_bytes", int(alone));
    RecordProperty("two_skeletons_bytes", int(both));
    EXPECT_LT(double(both), 1.35 * double(alone)) << "the second skeleton costs a fraction of the first";
    const ClientSession& s = *rig->sessions()[0];
    ASSERT_TRUE(s.arriving().empty() && s.characters().size() == 2u) << "both characters shown";
    for (uint16_t id = 0; id < 2; ++id) {
        const net::ReceivedSkeleton* held = s.skeleton(id);
        ASSERT_NE(held, nullptr) << id;
        EXPECT_EQ(net::skeleton_hash(held->skeleton, held->metres_per_unit), net::skeleton_hash(two.skeletons[id], two.metres_per_unit[id]))
            << "skeleton " << id << " as the server has it";
    }
}

// The first sending of the skeleton another is coded against is lost; the other's arrives and
// waits for it. No state sent before the base got through becomes a baseline, for the characters
// of either skeleton, and both are shown once it has.
TEST(JoiningOrder, ALostBaseHoldsBackTheSkeletonsCodedAgainstIt) {
    test::quiet_server_logger();
    InProcessRigConfig rc{.characters = 2, .clients = 1, .worker_threads = 0};
    std::optional<uint32_t> dropped;  // the message with the base's first part
    int base_through = -1;            // the tick it was sent again
    std::vector<EntrySeen> entries;
    int tick_now = 0;
    rc.drop_to_client = [&](int, const net::DecodedPacket& p) {
        if (p.type == net::MessageType::SkeletonDefs) {
            const auto* m = p.message<net::wire::SkeletonDefs>();
            if (dropped == m->message_id() && base_through < 0) base_through = tick_now;
            if (!dropped && m->defs() && m->defs()->Get(0)->skeleton_id() == 0) {
                dropped = m->message_id();
                return true;
            }
        }
        if (p.type == net::MessageType::Snapshot)
            for (const EntrySeen& e : entries_of(p)) entries.push_back(e);
        return false;
    };
    const ClipLibrary lib = grown_pair();  // the rig plays from it
    InProcessRig rig(lib, rc);
    for (tick_now = 1; tick_now <= 240; ++tick_now) rig.tick(tick_now);
    ASSERT_TRUE(dropped.has_value());
    ASSERT_GE(base_through, 0) << "the base's first part was sent again";
    EXPECT_GT(deltas_against_ticks_from(entries, base_through), 0u);
    const ClientSession& s = *rig.sessions()[0];
    EXPECT_TRUE(s.arriving().empty() && s.characters().size() == 2u) << "both characters shown";
    EXPECT_EQ(s.stats().skeleton_errors, 0u);
}
