// The library API a game links: a StreamServer fed a game's own skeleton and poses, a StreamClient
// showing them, over loopback, in both I/O modes; lifecycle (added at run time, teleported,
// removed); bad arguments refused; the recording a StreamServer writes.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include <kinesync/client/stream_client.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/record/recording.h>
#include <kinesync/common/errors.h>
#include <kinesync/server/stream_server.h>
#include "tests/support/arm.h"
#include "tests/support/wait.h"
#include "tests/support/scratch.h"

using namespace ks;
using ks::test::kDeadlineS;

namespace {

using test::arm;

// The arm swinging about its shoulder while its root walks along x.
Pose arm_pose(double t, float x0) {
    Pose p(3);
    const Skeleton s = arm();
    for (int j = 0; j < 3; ++j) p.pos[size_t(j)] = s.offsets[size_t(j)];
    p.pos[0] = {x0 + 100.0f * float(t), 0, 0};
    p.vel[0] = {100.0f, 0, 0};
    const float w = 2.0f, a = 0.6f * std::sin(w * float(t));
    p.rot[1] = quat_from_angle_axis(a, {0, 0, 1});
    p.ang[1] = {0, 0, 0.6f * w * std::cos(w * float(t))};
    return p;
}

struct Loop {
    StreamServer& server;
    StreamClient& client;
    double t = 0;
    std::vector<ClientEvent> events = {};
    // Real time: the server ticks at 60 Hz, the client renders every tick.
    void run(double seconds, const std::function<void(double)>& each_tick) {
        const auto start = std::chrono::steady_clock::now();
        for (int n = 1; n <= int(seconds * 60); ++n) {
            std::this_thread::sleep_until(start + std::chrono::microseconds(int64_t(n * 1e6 / 60)));
            step(each_tick);
        }
    }
    // The same until pred() holds (or the deadline passes).
    void run_until(const std::function<bool()>& pred, const std::function<void(double)>& each_tick) {
        const auto start = std::chrono::steady_clock::now();
        for (int n = 1; !pred() && std::chrono::steady_clock::now() - start < std::chrono::duration<double>(kDeadlineS); ++n) {
            std::this_thread::sleep_until(start + std::chrono::microseconds(int64_t(n * 1e6 / 60)));
            step(each_tick);
        }
    }
    void step(const std::function<void(double)>& each_tick) {
        t += 1.0 / 60;
        each_tick(t);
        server.end_tick();
        client.update();
        for (const ClientEvent& e : client.take_events()) events.push_back(e);
    }
    size_t count(ClientEventKind k, uint16_t id) const {
        size_t n = 0;
        for (const ClientEvent& e : events) n += e.kind == k && e.character == id;
        return n;
    }
};

// Global position of joint j of the truth at time t (cm).
vec3 truth_global(double t, float x0, int j) {
    Pose g(3);
    op_fk(g, arm_pose(t, x0), arm().parents);
    return g.pos[size_t(j)];
}

void game_over_loopback(IoMode server_io, IoMode client_io) {
    StreamServerConfig sc;
    sc.bind = "127.0.0.1";
    sc.port = 0;
    sc.io = server_io;
    StreamServer server(sc);
    const uint16_t sk = server.add_skeleton("arm", arm(), 0.01f);
    const uint16_t a = server.add_character(sk, "first");
    server.set_pose(a, arm_pose(0, 0));
    StreamClientConfig cc;
    cc.port = server.port();
    cc.io = client_io;
    StreamClient client(cc);
    client.connect();
    Loop loop{server, client};
    auto only_a = [&](double t) { server.set_pose(a, arm_pose(t, 0)); };
    loop.run(1.5, only_a);
    loop.run_until([&] { return client.character(a) && client.character(a)->ready; }, only_a);
    ASSERT_EQ(client.state(), ConnectionState::Connected);
    EXPECT_EQ(loop.count(ClientEventKind::Connected, 0), 1u);
    EXPECT_EQ(loop.count(ClientEventKind::CharacterAdded, a), 1u);
    EXPECT_GE(client.stats().session.challenges_own, 1u) << "on loopback the client knows the address the server sees";
    const RemoteCharacter* c = client.character(a);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->name, "first");
    EXPECT_EQ(c->skeleton_name, "arm");
    EXPECT_FLOAT_EQ(c->metres_per_unit, 0.01f);
    ASSERT_TRUE(c->ready);
    // The hand where the truth is at the rendered server time: within 3 cm (loopback, the default
    // strategy extrapolates with the snapshots' velocities; quantization and clock error remain).
    const vec3 hand = c->global.pos[2], want = truth_global(client.render_time(), 0, 2);
    EXPECT_LT(length(hand - want), 3.0f) << "hand " << hand.x << "," << hand.y << " truth " << want.x << "," << want.y;
    // The root's velocity arrives with it (100 cm/s along x), steady over 10 frames running: a
    // frame late on a slow machine (qemu) can leave a correction under way for a moment.
    int steady = 0;
    float vx = 0;
    loop.run_until([&] {
        const RemoteCharacter* now = client.character(a);
        if (!now) return false;
        vx = now->global.vel[0].x;
        steady = std::fabs(vx - 100.0f) < 5.0f ? steady + 1 : 0;
        return steady >= 10;
    }, only_a);
    EXPECT_GE(steady, 10) << "root velocity " << vx << " cm/s, not steady within 5 of 100";
    c = client.character(a);

    // A second character joins at run time; the first teleports; then the second leaves.
    const uint16_t b = server.add_character(sk, "second");
    server.set_pose(b, arm_pose(0, 500));
    auto both = [&](double t) {
        server.set_pose(a, arm_pose(t, 0));
        server.set_pose(b, arm_pose(t, 500));
    };
    loop.run(1.0, both);
    loop.run_until([&] { return client.character(b) && client.character(b)->ready; }, both);
    EXPECT_EQ(loop.count(ClientEventKind::CharacterAdded, b), 1u);
    ASSERT_NE(client.character(b), nullptr);
    EXPECT_TRUE(client.character(b)->ready);
    EXPECT_EQ(client.characters().size(), 2u);
    server.teleport(a);
    auto teleported = [&](double t) {
        server.set_pose(a, arm_pose(t, 3000));  // 30 m further
        server.set_pose(b, arm_pose(t, 500));
    };
    loop.run(0.5, teleported);
    loop.run_until([&] { return loop.count(ClientEventKind::Teleport, a) > 0; }, teleported);
    EXPECT_EQ(loop.count(ClientEventKind::Teleport, a), 1u);
    EXPECT_EQ(client.character(a)->epoch, 1u);
    EXPECT_LT(length(client.character(a)->global.pos[0] - truth_global(client.render_time(), 3000, 0)), 3.0f)
        << "shown at its new place, no blend across the teleport";
    server.remove_character(b);
    auto only_a_there = [&](double t) { server.set_pose(a, arm_pose(t, 3000)); };
    loop.run(0.5, only_a_there);
    loop.run_until([&] { return loop.count(ClientEventKind::CharacterRemoved, b) > 0; }, only_a_there);
    EXPECT_EQ(loop.count(ClientEventKind::CharacterRemoved, b), 1u);
    EXPECT_EQ(client.character(b), nullptr);
    EXPECT_EQ(client.characters().size(), 1u);
    // The client says goodbye; the server frees the slot.
    client.disconnect();
    loop.run_until([&] { return server.stats().clients.empty(); }, only_a_there);
    EXPECT_EQ(server.stats().clients.size(), 0u);
    EXPECT_EQ(server.stats().net.disconnects, 1u);
    EXPECT_EQ(server.stats().net.malformed, 0u);
}

}  // namespace

TEST(StreamApi, GameCharactersOverLoopbackPumped) { game_over_loopback(IoMode::Pumped, IoMode::Pumped); }
TEST(StreamApi, GameCharactersOverLoopbackOwnThreads) { game_over_loopback(IoMode::OwnThread, IoMode::OwnThread); }

TEST(StreamApi, ACharacterWithALookAheadIsShownByTheAheadFormOfTheStrategy) {
    // Two characters, one with the game's look-ahead (its pose 0.2 s on), one without; clients
    // with deadblend+sod, hermite and interp (which has no +ahead form).
    StreamServerConfig sc;
    sc.bind = "127.0.0.1";
    sc.port = 0;
    sc.io = IoMode::Pumped;
    StreamServer server(sc);
    const uint16_t sk = server.add_skeleton("arm", arm(), 0.01f);
    const uint16_t ahead = server.add_character(sk, "ahead"), present = server.add_character(sk, "present");
    const float horizon = 0.2f;
    auto feed = [&](double t) {
        server.set_pose(ahead, arm_pose(t, 0));
        server.set_look_ahead(ahead, arm_pose(t + horizon, 0), horizon, 0);
        server.set_pose(present, arm_pose(t, 500));
    };
    feed(0);
    double t = 0;  // the server's time: one tick per Loop step, across the clients below
    struct Case {
        Strategy configured, with_look_ahead;
    };
    for (Case k : {Case{Strategy::DeadBlendSod, Strategy::DeadBlendSodAhead}, Case{Strategy::Hermite, Strategy::HermiteAhead},
                   Case{Strategy::Interp, Strategy::Interp}}) {
        StreamClientConfig cc;
        cc.port = server.port();
        cc.io = IoMode::Pumped;
        cc.reconstruct.strategy = k.configured;
        StreamClient client(cc);
        client.connect();
        Loop loop{server, client, t};
        loop.run(1.5, feed);
        loop.run_until([&] {
            const RemoteCharacter *a = client.character(ahead), *p = client.character(present);
            return a && p && a->ready && p->ready;
        }, feed);
        ASSERT_EQ(client.state(), ConnectionState::Connected) << strategy_name(k.configured);
        const RemoteCharacter *a = client.character(ahead), *p = client.character(present);
        ASSERT_TRUE(a && p && a->ready && p->ready) << strategy_name(k.configured);
        EXPECT_EQ(a->strategy, k.with_look_ahead) << strategy_name(k.configured);
        EXPECT_EQ(p->strategy, k.configured) << strategy_name(k.configured);
        EXPECT_TRUE(a->look_ahead) << strategy_name(k.configured);
        EXPECT_FALSE(p->look_ahead) << strategy_name(k.configured);
        if (uses_look_ahead(a->strategy)) {
            // Shown at the rendered time from look-ahead poses that came before it: the hand within 3 cm.
            const vec3 hand = a->global.pos[2], want = truth_global(client.render_time(), 0, 2);
            EXPECT_LT(length(hand - want), 3.0f) << strategy_name(a->strategy);
        }
        client.disconnect();
        loop.run(0.1, feed);
        t = loop.t;
    }
}

TEST(StreamApi, BadArgumentsAreRefusedWithTheirReason) {
    StreamServerConfig sc;
    sc.network = false;
    StreamServer server(sc);
    Skeleton bad = arm();
    bad.parents[1] = 2;  // parent after child
    EXPECT_THROW(server.add_skeleton("bad", bad), ks::Error);
    Skeleton huge;
    for (int j = 0; j < 1025; ++j) {
        char name[16];
        std::snprintf(name, sizeof name, "j%d", j);  // not "j" + to_string: GCC 12's false -Wrestrict at -O3
        huge.names.push_back(name);
        huge.parents.push_back(j - 1);
        huge.offsets.push_back({0, 1, 0});
    }
    try {
        server.add_skeleton("huge", huge);
        FAIL() << "a 1025-joint skeleton was accepted";
    } catch (const ks::Error& e) {
        EXPECT_EQ(e.code(), ks::Errc::InvalidSkeleton);
        EXPECT_NE(std::string(e.what()).find("1025 joints"), std::string::npos) << e.what();
    }
    const uint16_t sk = server.add_skeleton("arm", arm());
    EXPECT_THROW(server.add_character(uint16_t(sk + 1)), ks::Error);
    const uint16_t c = server.add_character(sk);
    try {
        server.set_pose(c, Pose(2));
        FAIL() << "a 2-joint pose for a 3-joint skeleton was accepted";
    } catch (const ks::Error& e) {
        EXPECT_EQ(e.code(), ks::Errc::InvalidPose);
        EXPECT_NE(std::string(e.what()).find("expected 3"), std::string::npos) << e.what();
    }
    EXPECT_THROW(server.set_pose(uint16_t(c + 7), Pose(3)), ks::Error);
    EXPECT_THROW(server.teleport(uint16_t(c + 7)), ks::Error);
    EXPECT_EQ(server.teleport(c), 1u);
    EXPECT_EQ(server.reset(c), 2u);
    EXPECT_EQ(server.epoch(c), 2u);
    sc.network = true;
    sc.bind = "not an address";
    try {
        StreamServer s2(sc);
        FAIL() << "bound 'not an address'";
    } catch (const ks::Error& e) {
        EXPECT_EQ(e.code(), ks::Errc::Network);
        EXPECT_NE(std::string(e.what()).find("cannot listen on UDP not an address"), std::string::npos) << e.what();
    }
    sc.bind = "127.0.0.1";
    sc.tick_hz = 59.94f;  // travels as uint16: refused, not truncated to 59
    EXPECT_THROW(StreamServer{sc}, ks::Error);
    sc.tick_hz = 60.0f;
    sc.snapshot_hz = 25.0f;  // not every n-th tick
    EXPECT_THROW(StreamServer{sc}, ks::Error);
    StreamClientConfig cc;
    cc.host = "no-such-host.invalid";
    EXPECT_THROW(StreamClient{cc}, ks::Error);
    // The look-ahead strategy's own settings are checked like the others, named in the error.
    struct BadField {
        const char* name;
        void (*spoil)(ReconstructConfig&);
    };
    for (BadField b : {BadField{"reconstruct.ahead_correction_f", [](ReconstructConfig& r) { r.ahead_correction_f = 0.0f; }},
                       BadField{"reconstruct.ahead_correction_accel_max",
                                [](ReconstructConfig& r) { r.ahead_correction_accel_max = std::nanf(""); }},
                       BadField{"reconstruct.ahead_root_accel_max", [](ReconstructConfig& r) { r.ahead_root_accel_max = 0.0f; }},
                       BadField{"reconstruct.predict_root_halflife_s", [](ReconstructConfig& r) { r.predict_root_halflife_s = -1.0f; }}}) {
        StreamClientConfig bad;
        b.spoil(bad.reconstruct);
        try {
            StreamClient client(bad);
            FAIL() << b.name << " was accepted";
        } catch (const ks::Error& e) {
            EXPECT_EQ(e.code(), ks::Errc::InvalidConfig) << b.name;
            EXPECT_NE(std::string(e.what()).find(b.name), std::string::npos) << e.what();
        }
    }
}

TEST(StreamApi, AnOfflineServerRecordsTheGamesCharactersAndEvents) {
    StreamServerConfig sc;
    sc.network = false;
    sc.io = IoMode::Pumped;
    sc.record_path = ks::test::scratch_path("stream-api.ksrec");
    sc.record_scenario = "stream api test";
    {
        StreamServer server(sc);
        const uint16_t sk = server.add_skeleton("arm", arm(), 0.01f);
        const uint16_t a = server.add_character(sk, "walker");
        for (int n = 1; n <= 120; ++n) {
            if (n == 60) server.teleport(a);
            server.set_pose(a, arm_pose(n / 60.0, n >= 60 ? 1000.0f : 0.0f));
            EXPECT_EQ(server.end_tick(), uint32_t(n));
        }
        server.close();
    }
    const RecordingReadResult rec = read_recording(sc.record_path);
    ASSERT_FALSE(rec.truncated);
    EXPECT_EQ(rec.header.scenario, "stream api test");
    ASSERT_EQ(rec.header.characters.size(), 1u);
    EXPECT_EQ(rec.header.characters[0].name, "walker");
    EXPECT_EQ(rec.header.skeleton_names[0], "arm");
    ASSERT_EQ(rec.frames.size(), 120u);
    EXPECT_EQ(rec.frames[59].tick, 60u);
    ASSERT_EQ(rec.frames[59].events.size(), 1u);
    EXPECT_EQ(rec.frames[59].events[0].tick, 60u);
    EXPECT_EQ(rec.frames[59].events[0].epoch, 1u);
    EXPECT_EQ(rec.frames[58].characters[0].epoch, 0u);
    EXPECT_EQ(rec.frames[59].characters[0].epoch, 1u);
    EXPECT_NEAR(rec.frames[119].characters[0].pose.pos[0].x, 1000.0f + 200.0f, 1e-3f);
}

TEST(StreamApi, TheNearestCharacterComesFirstWhenTheBudgetIsTight) {
    // 12 characters 10 m apart along x; a budget of about two characters a snapshot; the client
    // watches from next to character 11, with a near group of one.
    StreamServerConfig sc;
    sc.bind = "127.0.0.1";
    sc.port = 0;
    sc.io = IoMode::Pumped;
    sc.bandwidth_bps = 12000.0f;  // 50 bytes a snapshot: a few of these small characters
    sc.relevance.near_count = 1;
    StreamServer server(sc);
    const uint16_t sk = server.add_skeleton("arm", arm(), 0.01f);
    std::vector<uint16_t> ids;
    for (int i = 0; i < 12; ++i) ids.push_back(server.add_character(sk));
    StreamClientConfig cc;
    cc.port = server.port();
    cc.viewpoint = vec3{110.0f, 0.0f, 1.0f};  // metres; character i stands at x = 10 i m
    StreamClient client(cc);
    client.connect();
    Loop loop{server, client};
    auto snapshots_of = [&](int i) {
        const RemoteCharacter* c = client.character(ids[size_t(i)]);
        return c ? c->snapshots : uint64_t(0);
    };
    // Until the nearest has had 70 snapshots (over 2 s at 30 Hz) and the farthest some.
    loop.run_until([&] { return client.characters().size() == 12 && snapshots_of(11) >= 70 && snapshots_of(0) > 0; }, [&](double t) {
        for (int i = 0; i < 12; ++i) server.set_pose(ids[size_t(i)], arm_pose(t, 1000.0f * float(i)));
    });
    ASSERT_EQ(client.characters().size(), 12u);
    const uint64_t near = snapshots_of(11), far = snapshots_of(0), next = snapshots_of(10);
    // The nearest nearly every snapshot; the farthest a fraction of that, less often than its
    // neighbour 10 m nearer.
    EXPECT_GE(near, 70u) << "near " << near << " next " << next << " far " << far;
    EXPECT_LT(far * 4, near) << "far " << far << " near " << near;
    EXPECT_GT(far, 0u) << "the farthest is still refreshed now and then";
    EXPECT_LE(far, next);
}

// close() with the I/O on its own thread: every client hears "server shutting down" before the
// socket closes (it does not have to time out), and the recording is complete.
TEST(StreamApi, CloseSaysGoodbyeToClientsWithTheIoOnItsOwnThread) {
    const std::string path = ks::test::scratch_path("close_goodbye.ksrec");
    StreamServerConfig sc;
    sc.bind = "127.0.0.1";
    sc.port = 0;
    sc.io = IoMode::OwnThread;
    sc.record_path = path;
    StreamServer server(sc);
    const uint16_t sk = server.add_skeleton("arm", arm(), 0.01f);
    const uint16_t a = server.add_character(sk, "first");
    server.set_pose(a, arm_pose(0, 0));
    StreamClientConfig cc;
    cc.port = server.port();
    cc.timeout_s = 10 * kDeadlineS;  // a disconnect seen below is the server's goodbye, not a timeout
    StreamClient c1(cc), c2(cc);
    c1.connect();
    c2.connect();
    Loop l1{server, c1};
    l1.run(1.1, [&](double t) {  // 66 ticks: not a whole number of 60-tick chunks
        server.set_pose(a, arm_pose(t, 0));
        c2.update();
    });
    // Connected, however slow the machine, and still a partial chunk.
    l1.run_until([&] {
        return c1.state() == ConnectionState::Connected && c2.state() == ConnectionState::Connected && server.tick() % 60 != 0;
    }, [&](double t) {
        server.set_pose(a, arm_pose(t, 0));
        c2.update();
    });
    ASSERT_EQ(c1.state(), ConnectionState::Connected);
    ASSERT_EQ(c2.state(), ConnectionState::Connected);
    const uint32_t ticks = server.tick();
    server.close();
    ks::test::wait_until([&] { return c1.state() == ConnectionState::Disconnected && c2.state() == ConnectionState::Disconnected; },
                         [&] {
                             c1.update();
                             c2.update();
                         });
    EXPECT_EQ(c1.state(), ConnectionState::Disconnected);
    EXPECT_EQ(c2.state(), ConnectionState::Disconnected);
    EXPECT_EQ(c1.disconnect_code(), DisconnectCode::ServerShutdown) << c1.disconnect_reason();
    EXPECT_EQ(c2.disconnect_code(), DisconnectCode::ServerShutdown) << c2.disconnect_reason();
    const RecordingReadResult rec = read_recording(path);
    EXPECT_FALSE(rec.truncated);
    EXPECT_EQ(rec.frames.size(), size_t(ticks)) << "every tick, the last partial chunk included";
    std::remove(path.c_str());
}
