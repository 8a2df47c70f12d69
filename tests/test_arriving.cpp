// A joining client can say which characters are still on their way: announced, but without a
// skeleton yet or with parts (characters of more than 96 joints travel in parts) never decoded.
#include <gtest/gtest.h>

#include "common/src/codec/snapshot_codec.h"
#include "programs/server/sim/in_process_rig.h"
#include "tests/support/udp_harness.h"

using namespace ks;

TEST(Arriving, AJoiningClientListsTheCharactersNotYetWholeUntilEveryPartHasArrived) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library("stress");
    InProcessRigConfig rc;
    rc.characters = 3;
    rc.clients = 1;
    rc.worker_threads = 0;
    InProcessRig rig(lib, rc);
    const ClientSession& s = *rig.sessions()[0];
    const uint32_t joints = uint32_t(lib.skeletons[0].size()), parts = part_count(joints);
    ASSERT_GT(parts, 1u) << "the stress rig travels in parts";
    bool saw_some_parts = false;
    int whole_at = 0;
    for (int n = 1; n <= 60 * 60 && whole_at == 0; ++n) {
        rig.tick(n);
        const std::vector<ClientSession::Arriving> a = s.arriving();
        for (const ClientSession::Arriving& c : a) {
            EXPECT_LE(c.parts_received, c.parts);
            if (c.skeleton) {
                EXPECT_EQ(c.parts, parts) << "character " << c.character;
                if (c.parts_received > 0) saw_some_parts = true;
            }
        }
        if (s.characters().size() == size_t(rc.characters) && a.empty()) whole_at = n;
    }
    ASSERT_GT(whole_at, 0) << "every character arrived within a minute";
    RecordProperty("whole_after_ticks", whole_at);
    EXPECT_TRUE(saw_some_parts) << "a character with some of its parts is still arriving";
    // Whole means every part decoded: the decoder holds each part of each character at some tick.
    for (uint16_t id : s.characters())
        for (uint32_t k = 0; k < parts; ++k) {
            bool held = false;
            for (int t = whole_at; t > 0 && t > whole_at - 240 && !held; --t) held = s.decoder().find(id, uint32_t(t), part_range(joints, k)) != nullptr;
            EXPECT_TRUE(held) << "character " << id << " part " << k;
        }
}

namespace {

// Ticks from the client's acceptance until it shows every character whole (0: never, within 20 s).
int ticks_to_show_all(const std::string& rig, int characters) {
    const ClipLibrary lib = builtin_clip_library(rig);
    InProcessRigConfig rc;
    rc.characters = characters;
    rc.clients = 1;
    rc.worker_threads = 0;  // the default budget, 256 kbit/s
    InProcessRig rig_(lib, rc);
    const ClientSession& s = *rig_.sessions()[0];
    int accepted = 0;
    for (int n = 1; n <= 20 * 60; ++n) {
        rig_.tick(n);
        if (accepted == 0 && s.state() == ClientSession::State::Connected) accepted = n;
        if (accepted && s.characters().size() == size_t(characters) && s.arriving().empty()) return n - accepted;
    }
    return 0;
}

}  // namespace

// Joining at the default budget (the simulated ticks of InProcessRig, 17 ms each way): 8 game rigs
// (250 joints, one skeleton) show whole within 0.5 s of acceptance and 8 stress rigs (1,000
// joints) within 2 s. The skeleton's bytes are repaid while they travel (SnapshotBuilder::idle),
// not after: charged afterwards, the first snapshots waited 12 ticks more.
TEST(Arriving, EightGameRigsShowWithinHalfASecondAndEightStressRigsWithinTwo) {
    test::quiet_server_logger();
    const int game = ticks_to_show_all("game", 8), stress = ticks_to_show_all("stress", 8);
    RecordProperty("game_rig_ticks", game);
    RecordProperty("stress_rig_ticks", stress);
    EXPECT_GT(game, 0);
    EXPECT_LE(game, 30) << "8 game rigs: " << game << " ticks after acceptance";
    EXPECT_GT(stress, 0);
    EXPECT_LE(stress, 120) << "8 stress rigs: " << stress << " ticks after acceptance";
}
