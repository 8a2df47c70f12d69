// Joining with skeletons the client already holds: the handshake offers them by hash, bound to the
// token's proof; the server sends references instead of definitions, and the characters show as
// soon as their first states arrive. End to end in-process (InProcessRig) and over loopback with a
// StreamClient whose skeleton cache outlives its first session.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include <kinesync/client/stream_client.h>
#include <kinesync/server/stream_server.h>

#include "common/src/net/secure_channel.h"
#include "common/src/net/skeleton_hash.h"
#include "programs/server/sim/in_process_rig.h"
#include "tests/support/arm.h"
#include "tests/support/udp_harness.h"
#include "tests/support/wait.h"

using namespace ks;

namespace {

struct Join {
    int ticks = 0;             // from acceptance until every character shows whole (0: never in 20 s)
    size_t definition_bytes = 0;  // wire bytes of SkeletonDefs messages sent to the client
    uint64_t by_reference = 0, in_full = 0;
};

Join join(bool hold) {
    test::quiet_server_logger();
    const ClipLibrary lib = builtin_clip_library("game");
    InProcessRigConfig rc;
    rc.characters = 8;
    rc.clients = 1;
    rc.worker_threads = 0;
    rc.clients_hold_skeletons = hold;
    InProcessRig rig(lib, rc);
    const ClientSession& s = *rig.sessions()[0];
    Join j;
    int accepted = 0;
    for (int n = 1; n <= 20 * 60 && j.ticks == 0; ++n) {
        rig.tick(n);
        if (accepted == 0 && s.state() == ClientSession::State::Connected) accepted = n;
        if (accepted && s.characters().size() == 8 && s.arriving().empty()) j.ticks = n - accepted;
    }
    for (const InProcessRig::Sent& d : rig.sent_to(0))
        if (d.type == net::MessageType::SkeletonDefs) j.definition_bytes += d.wire_bytes;
    j.by_reference = rig.server().stats().skeletons_by_reference;
    j.in_full = rig.server().stats().skeletons_in_full;
    EXPECT_EQ(s.stats().skeleton_errors, 0u);
    return j;
}

}  // namespace

// The game rig's definition is about 2.5 kB; by reference, the SkeletonDefs messages carry only the
// hash and the characters. A server that ignored the offer (the broken variant: `hold` false is
// what it would do) sends the definition and joins later.
TEST(SkeletonRefs, AClientHoldingTheSkeletonJoinsWithAReferenceInsteadOfTheDefinition) {
    const Join cold = join(false), warm = join(true);
    RecordProperty("cold_ticks", cold.ticks);
    RecordProperty("warm_ticks", warm.ticks);
    RecordProperty("cold_definition_bytes", int(cold.definition_bytes));
    RecordProperty("warm_definition_bytes", int(warm.definition_bytes));
    ASSERT_GT(cold.ticks, 0);
    ASSERT_GT(warm.ticks, 0);
    EXPECT_EQ(cold.in_full, 1u);
    EXPECT_EQ(cold.by_reference, 0u);
    EXPECT_EQ(warm.in_full, 0u);
    EXPECT_EQ(warm.by_reference, 1u);
    EXPECT_GT(cold.definition_bytes, 2000u);
    EXPECT_LT(warm.definition_bytes, cold.definition_bytes / 5) << "a hash and eight characters (388 bytes when written)";
    EXPECT_LE(warm.ticks, cold.ticks);
}

// The token's proof covers the offer: a response whose hashes were changed on the way (to make the
// server send references the client cannot resolve) does not check, nor does a proof made over no
// offer (what a client whose proof left the list out would send).
TEST(SkeletonRefs, TheHandshakeProofCoversTheOfferedHashes) {
    net::Key key{};
    key[0] = 7;
    const net::Cookie cookie{9, 9, 9};
    std::vector<uint8_t> offer(2 * net::kSkeletonHashBytes, 0x5A);
    const auto proof = net::handshake_proof(key, cookie, 42, offer);
    EXPECT_TRUE(net::check_handshake_proof(key, cookie, 42, proof, offer));
    std::vector<uint8_t> changed = offer;
    changed[40] ^= 1;
    EXPECT_FALSE(net::check_handshake_proof(key, cookie, 42, proof, changed)) << "a changed hash";
    EXPECT_FALSE(net::check_handshake_proof(key, cookie, 42, proof, std::span(offer).first(32))) << "a hash left out";
    EXPECT_FALSE(net::check_handshake_proof(key, cookie, 42, proof, {})) << "the offer dropped";
    const auto blind = net::handshake_proof(key, cookie, 42);
    EXPECT_FALSE(net::check_handshake_proof(key, cookie, 42, blind, offer)) << "a proof that leaves the offer out";
}

using test::arm;

// The library as a game uses it: the first session receives the skeleton in full and keeps it in
// the cache directory, and the same client connecting again offers it (from memory: the cache is
// read once) and gets a reference; so does a new StreamClient, as after a restart (from the disk).
TEST(SkeletonRefs, AStreamClientsCacheMakesTheNextSessionTakeTheSkeletonByReference) {
    std::random_device rd;
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ks-refs-" + std::to_string(rd()) + std::to_string(rd()));
    StreamServerConfig sc;
    sc.bind = "127.0.0.1";
    sc.port = 0;
    sc.io = IoMode::OwnThread;
    StreamServer server(sc);
    const uint16_t sk = server.add_skeleton("arm", arm(), 0.01f);
    const uint16_t a = server.add_character(sk, "a");
    Pose p(3);
    for (int j = 0; j < 3; ++j) p.pos[size_t(j)] = arm().offsets[size_t(j)];
    auto session = [&](uint64_t expect_full, uint64_t expect_ref, int connections) {
        StreamClientConfig cc;
        cc.port = server.port();
        cc.skeleton_cache_dir = dir.string();
        StreamClient client(cc);
        for (int k = 0; k < connections; ++k) {
            client.connect();
            const bool shown = test::wait_until([&] { return client.character(a) && client.character(a)->ready; }, [&] {
                server.set_pose(a, p);
                server.end_tick();
                client.update();
            });
            ASSERT_TRUE(shown) << client.state_name() << " " << client.disconnect_reason();
            const StreamClientStats st = client.stats();
            EXPECT_EQ(st.skeleton_cache_refused, 0u) << st.skeleton_cache_problem;
            EXPECT_EQ(st.skeleton_cache_save_failures, 0u) << st.skeleton_cache_problem;
            EXPECT_EQ(client.character(a)->skeleton.names, arm().names);
            EXPECT_EQ(client.character(a)->skeleton_name, "arm");
            client.disconnect();
            test::wait_until([&] { return server.stats().clients.empty(); }, [&] { server.end_tick(); });
        }
        const StreamClientStats st = client.stats();
        EXPECT_EQ(st.session.skeletons_in_full, expect_full);
        EXPECT_EQ(st.session.skeletons_by_reference, expect_ref);
    };
    session(1, 1, 2);
    EXPECT_TRUE(std::filesystem::exists(dir / (net::to_hex(net::skeleton_hash(arm(), 0.01f)) + ".kskel")));
    session(0, 1, 1);
    EXPECT_EQ(server.stats().net.skeletons_in_full, 1u);
    EXPECT_EQ(server.stats().net.skeletons_by_reference, 2u);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
}
