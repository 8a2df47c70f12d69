// kinesync's public boundary: what a game hands over is checked in every build type and refused
// with a typed error naming the field, the joint and the value; a connection that fails says why.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include <kinesync/client/stream_client.h>
#include <kinesync/common/anim/ops_blend.h>
#include <kinesync/common/anim/ops_dead_blend.h>
#include <kinesync/common/anim/ops_fk.h>
#include <kinesync/common/anim/ops_ik.h>
#include <kinesync/common/anim/ops_lookat.h>
#include <kinesync/common/anim/ops_sample.h>
#include <kinesync/common/conventions.h>
#include <kinesync/common/errors.h>
#include <kinesync/server/stream_server.h>

#include "client/src/session.h"
#include "common/src/net/connect_token.h"
#include "common/src/net/protocol.h"
#include "common/src/net/secure_channel.h"
#include "tests/support/wait.h"

using namespace ks;

namespace {

Skeleton arm() {
    Skeleton s;
    s.names = {"shoulder", "elbow", "wrist"};
    s.parents = {-1, 0, 1};
    s.offsets = {{0, 1.5f, 0}, {0.3f, 0, 0}, {0.25f, 0, 0}};
    return s;
}

StreamServerConfig pumped_server() {
    StreamServerConfig c;
    c.port = 0;
    c.io = IoMode::Pumped;
    return c;
}

// Runs f and returns the ks::Error it throws (fails the test when it throws none).
template <class F>
Error error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "no ks::Error thrown";
    return Error(Errc::Ok, "");
}

}  // namespace

TEST(Boundary, ANaNPoseIsRefusedNamingTheJoint) {
    StreamServer server(pumped_server());
    const uint16_t c = server.add_character(server.add_skeleton("arm", arm()));
    Pose p(arm());
    p.vel[2].y = std::nanf("");
    const Error e = error_of([&] { server.set_pose(c, p); });
    EXPECT_EQ(e.code(), Errc::InvalidPose);
    EXPECT_EQ(e.field(), "pose.vel");
    EXPECT_EQ(e.joint(), 2);
    EXPECT_NE(std::string(e.what()).find("joint 2 (wrist)"), std::string::npos) << e.what();
    p.vel[2].y = 0;
    p.pos[1].x = INFINITY;
    EXPECT_EQ(error_of([&] { server.set_pose(c, p); }).field(), "pose.pos");
}

TEST(Boundary, QuaternionsMustBeUnitAndScalesPositive) {
    StreamServer server(pumped_server());
    const uint16_t c = server.add_character(server.add_skeleton("arm", arm()));
    Pose p(arm());
    p.rot[0] = quat{5, 0, 0, 0};
    const Error e = error_of([&] { server.set_pose(c, p); });
    EXPECT_EQ(e.code(), Errc::InvalidPose);
    EXPECT_EQ(e.joint(), 0);
    EXPECT_NE(std::string(e.what()).find("not a unit quaternion"), std::string::npos) << e.what();
    p.rot[0] = quat{1.0f + 0.5f * kUnitQuatTolerance, 0, 0, 0};  // within the tolerance
    EXPECT_NO_THROW(server.set_pose(c, p));
    p.scl[1] = vec3{1, 0, 1};
    EXPECT_EQ(error_of([&] { server.set_pose(c, p); }).field(), "pose.scl");
}

TEST(Boundary, SkeletonsNeedOneRootJointZeroAndParentsFirst) {
    StreamServer server(pumped_server());
    Skeleton two = arm();
    two.parents = {-1, 0, -1};
    Error e = error_of([&] { server.add_skeleton("two roots", two); });
    EXPECT_EQ(e.code(), Errc::InvalidSkeleton);
    EXPECT_EQ(e.joint(), 2);
    EXPECT_NE(std::string(e.what()).find("second root"), std::string::npos) << e.what();
    EXPECT_EQ(error_of([&] { server.add_skeleton("empty", Skeleton{}); }).code(), Errc::InvalidSkeleton);
    Skeleton late = arm();
    late.parents = {-1, 2, 0};
    EXPECT_EQ(error_of([&] { server.add_skeleton("late", late); }).joint(), 1);
    Skeleton nan = arm();
    nan.offsets[1].z = std::nanf("");
    EXPECT_EQ(error_of([&] { server.add_skeleton("nan", nan); }).field(), "skeleton.offsets");
    Skeleton big;
    for (int j = 0; j <= kMaxJoints; ++j) big.names.push_back(""), big.parents.push_back(j - 1), big.offsets.push_back({});
    EXPECT_EQ(error_of([&] { server.add_skeleton("big", big); }).code(), Errc::InvalidSkeleton);
    EXPECT_EQ(error_of([&] { server.add_character(77); }).code(), Errc::UnknownId);
}

TEST(Boundary, ASkeletonBuiltPoseStartsAtTheRestPose) {
    const Skeleton s = arm();
    const Pose p(s);
    for (int j = 0; j < s.size(); ++j) {
        EXPECT_FLOAT_EQ(p.pos[size_t(j)].x, s.offsets[size_t(j)].x);
        EXPECT_FLOAT_EQ(p.pos[size_t(j)].y, s.offsets[size_t(j)].y);
        EXPECT_FLOAT_EQ(p.rot[size_t(j)].w, 1.0f);
    }
    Pose g(s.size());
    op_fk(g, p, s.parents);
    EXPECT_FLOAT_EQ(g.pos[2].x, 0.55f);  // not collapsed to a point
}

TEST(Boundary, OpsRefuseWrongSizesInEveryBuild) {
    const Skeleton s = arm();
    Pose local(s), global(2);
    EXPECT_EQ(error_of([&] { op_fk(global, local, s.parents); }).code(), Errc::InvalidPose);
    global.resize(3);
    global.rot.pop_back();  // one array short: still refused
    EXPECT_EQ(error_of([&] { op_fk(global, local, s.parents); }).field(), "global");
    global.resize(3);
    const std::vector<int> bad_parents = {-1, 5, 1};
    EXPECT_EQ(error_of([&] { op_fk(global, local, bad_parents); }).code(), Errc::InvalidSkeleton);
    const std::vector<int> short_parents = {-1, 0};
    EXPECT_EQ(error_of([&] { op_fk(global, local, short_parents); }).field(), "parents");
    Pose other(4);
    EXPECT_EQ(error_of([&] { op_blend(global, local, other, 0.5f, 0.0f); }).field(), "rhs");
    EXPECT_NO_THROW(op_fk(global, local, s.parents));
}

TEST(Boundary, ConfigurationsAreChecked) {
    StreamServerConfig sc = pumped_server();
    sc.tick_hz = 60.5f;
    EXPECT_EQ(error_of([&] { StreamServer{sc}; }).field(), "config.tick_hz");
    sc = pumped_server();
    sc.bandwidth_bps = std::nanf("");
    EXPECT_EQ(error_of([&] { StreamServer{sc}; }).code(), Errc::InvalidConfig);
    StreamClientConfig cc;
    cc.timeout_s = 0;
    EXPECT_EQ(error_of([&] { StreamClient{cc}; }).field(), "config.timeout_s");
    cc = {};
    cc.reconstruct.interp_delay_s = -1;
    EXPECT_EQ(error_of([&] { StreamClient{cc}; }).field(), "config.reconstruct.interp_delay_s");
}

namespace {

// Pumps a server and its clients until `client` is disconnected (or the deadline passes).
void run_until_disconnected(StreamServer& server, StreamClient& client, std::initializer_list<StreamClient*> others = {}) {
    test::wait_until([&] { return client.state() == ConnectionState::Disconnected; }, [&] {
        server.end_tick();
        server.poll();
        for (StreamClient* o : others) o->update();
        client.update();
    }, test::kDeadlineS, std::chrono::milliseconds(5));
}

}  // namespace

TEST(Boundary, ATokenFromAnotherKeyEndsWithItsReason) {
    StreamServerConfig sc = pumped_server();
    sc.private_key = net::random_key();
    StreamServer server(sc);
    net::TokenRequest r;
    r.servers = {"127.0.0.1:" + std::to_string(server.port())};
    StreamClientConfig cc;
    cc.io = IoMode::Pumped;
    cc.timeout_s = 3.0;  // the refusal is only noted: the attempt ends at the timeout, reporting it
    cc.connect_token = net::issue_connect_token(net::random_key(), r, net::unix_now_s());
    StreamClient client(cc);
    client.connect();
    run_until_disconnected(server, client);
    EXPECT_EQ(client.disconnect_code(), DisconnectCode::TokenInvalid) << client.disconnect_reason();
    EXPECT_NE(client.disconnect_reason().find("connect token invalid"), std::string::npos) << client.disconnect_reason();
}

TEST(Boundary, AnExpiredTokenIsRefusedBeforeSending) {
    const net::Key key = net::random_key();
    net::TokenRequest r;
    r.servers = {"127.0.0.1:40999"};
    r.valid_for_s = 10;
    StreamClientConfig cc;
    cc.io = IoMode::Pumped;
    cc.connect_token = net::issue_connect_token(key, r, net::unix_now_s() - 60);
    StreamClient client(cc);
    client.connect();
    client.update();
    EXPECT_EQ(client.state(), ConnectionState::Disconnected);
    EXPECT_EQ(client.disconnect_code(), DisconnectCode::TokenExpired);
    EXPECT_EQ(client.stats().session.datagrams_out, 0u);
}

TEST(Boundary, NoAnswerNamesTheLikelyCauses) {
    StreamClientConfig cc;
    cc.io = IoMode::Pumped;
    cc.port = 9;  // discard: nobody answers
    cc.timeout_s = 0.3;
    StreamClient client(cc);
    client.connect();
    test::wait_until([&] { return client.state() == ConnectionState::Disconnected; }, [&] { client.update(); }, test::kDeadlineS,
                     std::chrono::milliseconds(10));
    EXPECT_EQ(client.disconnect_code(), DisconnectCode::NoAnswer);
    EXPECT_NE(client.disconnect_reason().find("not running"), std::string::npos) << client.disconnect_reason();
}

TEST(Conventions, EveryEngineRoundTripsAndKeepsRotationsConsistent) {
    kform k;
    k.pos = {0.3f, 1.2f, -0.7f};
    k.rot = quat_normalize(quat{0.8f, 0.2f, -0.5f, 0.3f});
    k.scl = {1.0f, 2.0f, 0.5f};
    k.vel = {1, 2, 3};
    k.ang = {0.4f, -1.1f, 2.0f};
    k.svl = {0.1f, 0.2f, 0.3f};
    const vec3 v{0.1f, -0.4f, 0.9f};
    for (Engine e : {Engine::Unreal, Engine::Unity, Engine::Godot, Engine::Kinesync}) {
        const kform out = kform_to_engine(k, e, 0.01f);
        const kform back = kform_from_engine(out, e, 0.01f);
        EXPECT_NEAR(length(back.pos - k.pos), 0.0f, 1e-6f);
        EXPECT_NEAR(length(back.ang - k.ang), 0.0f, 1e-6f);
        EXPECT_NEAR(std::fabs(back.rot.w - k.rot.w) + std::fabs(back.rot.x - k.rot.x), 0.0f, 1e-6f);
        EXPECT_NEAR(length(back.scl - k.scl), 0.0f, 1e-6f);
        // Rotating then converting equals converting then rotating (directions, unit-free).
        const kform dir = kform_to_engine(kform_from_pos_vel(quat_mul_vec3(k.rot, v), {}), e, 1.0f);
        const vec3 rotated = quat_mul_vec3(out.rot, kform_to_engine(kform_from_pos_vel(v, {}), e, 1.0f).pos);
        const float s = engine_convention(e).units_per_metre;
        EXPECT_NEAR(length(dir.pos / s - rotated / s), 0.0f, 1e-5f);
        // The angular velocity is the converted rotation's own (a finite difference of it).
        const float h = 1e-3f;
        const quat later = quat_mul(quat_from_scaled_angle_axis(k.ang * h), k.rot);
        const quat later_e = kform_to_engine(kform{k.pos, later, k.scl, {}, {}, {}}, e, 0.01f).rot;
        EXPECT_NEAR(length(quat_differentiate_angular_velocity(later_e, out.rot, h) - out.ang), 0.0f, 5e-3f);
    }
    EXPECT_NEAR(kform_to_engine(k, Engine::Unreal, 0.01f).pos.z, 1.2f, 1e-6f);   // Y up in cm -> Z up in cm
    EXPECT_NEAR(kform_to_engine(k, Engine::Unreal, 1.0f).pos.z, 120.0f, 1e-4f);  // metres -> cm
    EXPECT_NEAR(kform_to_engine(k, Engine::Unity, 1.0f).pos.x, -0.3f, 1e-6f);    // left-handed: X flips
    EXPECT_EQ(error_of([&] { kform_to_engine(k, Engine::Unity, 0.0f); }).field(), "metres_per_unit");
}

TEST(Conventions, VelocitiesFromTwoPosesTakeTheShortArc) {
    Pose prev(2), curr(2), out(2);
    const vec3 w{0.3f, -2.0f, 1.0f};
    const float dt = 1.0f / 60.0f;
    prev.rot[1] = quat_normalize(quat{0.9f, 0.1f, 0.3f, -0.2f});
    curr.rot[1] = quat_mul(quat_from_scaled_angle_axis(w * dt), prev.rot[1]);
    curr.rot[1] = -curr.rot[1];  // the same rotation, the other hemisphere
    curr.pos[0] = {0.1f, 0, 0};
    curr.scl[0] = {2, 1, 1};
    derive_velocities(out, curr, prev, dt);
    EXPECT_NEAR(length(out.ang[1] - w), 0.0f, 2e-3f);
    EXPECT_NEAR(out.vel[0].x, 6.0f, 1e-3f);
    EXPECT_NEAR(out.svl[0].x, std::log(2.0f) * 60.0f, 1e-3f);
    EXPECT_EQ(error_of([&] { derive_velocities(out, curr, prev, 0.0f); }).field(), "dt");
    Pose short_pose(1);
    EXPECT_EQ(error_of([&] { derive_velocities(out, curr, short_pose, dt); }).code(), Errc::InvalidPose);
}

TEST(Boundary, AFullServerSaysSo) {
    StreamServerConfig sc = pumped_server();
    sc.max_clients = 1;
    StreamServer server(sc);
    StreamClientConfig cc;
    cc.io = IoMode::Pumped;
    cc.port = server.port();
    cc.timeout_s = test::kDeadlineS;  // "server full" ends the attempt at once (dev mode)
    StreamClient first(cc), second(cc);
    first.connect();
    test::wait_until([&] { return first.state() == ConnectionState::Connected; }, [&] {
        server.end_tick();
        server.poll();
        first.update();
    }, test::kDeadlineS, std::chrono::milliseconds(5));
    ASSERT_EQ(first.state(), ConnectionState::Connected);
    second.connect();
    run_until_disconnected(server, second, {&first});
    EXPECT_EQ(second.disconnect_code(), DisconnectCode::ServerFull) << second.disconnect_reason();
    EXPECT_EQ(first.state(), ConnectionState::Connected);
}

TEST(Boundary, AServerOfAnotherVersionIsReportedAsSuch) {
    // What a server of another protocol version answers a ConnectRequest with: a Disconnect this
    // client cannot decode. The handshake then ends with VersionMismatch, not "no answer".
    std::vector<uint8_t> reply = net::build_disconnect({0, 0, 0}, "version mismatch", uint8_t(DisconnectCode::VersionMismatch));
    const auto d = net::decode_packet(reply);
    ASSERT_TRUE(d);
    const size_t at = size_t(reinterpret_cast<const uint8_t*>(d->packet()->header()) - d->storage.data());
    reply[at + 4] = uint8_t(net::kProtocolVersion + 1);  // the header's version field
    ClientSessionConfig cfg;
    cfg.timeout_s = 1.0;
    ClientSession session(cfg);
    session.connect(0.0);
    session.on_datagram(reply, 0.1);
    session.update(2.0);
    EXPECT_EQ(session.state(), ConnectionState::Disconnected);
    EXPECT_EQ(session.disconnect_code(), DisconnectCode::VersionMismatch);
    EXPECT_NE(session.disconnect_reason().find("another protocol version"), std::string::npos) << session.disconnect_reason();
}

TEST(Boundary, OpsRefuseNonFiniteArgumentsAndImpossibleShapes) {
    Clip clip;
    clip.skeleton = arm();
    clip.resize(4);
    Pose out(3), global(3), local(arm());
    EXPECT_EQ(error_of([&] { op_sample_cubic(out, clip, std::nan("")); }).field(), "time");
    EXPECT_EQ(error_of([&] { op_sample_linear(out, clip, INFINITY, Wrap::Loop); }).field(), "time");
    EXPECT_EQ(error_of([&] { op_sample_cubic(out, clip, 0.1, Wrap(7)); }).field(), "wrap");
    EXPECT_EQ(error_of([&] { op_sample_linear(out, clip, 1e308, Wrap::Loop); }).field(), "time / clip.frame_dt");
    clip.frame_dt = 0;
    EXPECT_EQ(error_of([&] { op_sample_linear(out, clip, 0.1); }).field(), "clip.frame_dt");
    EXPECT_EQ(error_of([&] { op_blend(out, local, local, std::nanf(""), 0.0f); }).field(), "alpha");
    EXPECT_EQ(error_of([&] { op_finite_diff(out, local, local, 0.0f); }).field(), "dt");
    op_fk(global, local, arm().parents);
    EXPECT_EQ(error_of([&] { op_lookat(local, global, 2, {1, 1, 1}, {}, {0, 0, 0}); }).field(), "fwd");
    EXPECT_EQ(error_of([&] { op_lookat(local, global, 2, {std::nanf(""), 1, 1}, {}, {1, 0, 0}); }).field(), "target_pos");
    EXPECT_EQ(error_of([&] { op_two_bone_ik_static(local, global, 0, 2, 2, {1, 0, 0}); }).code(), Errc::InvalidArgument);
    Pose lp(arm()), gp(3);
    EXPECT_EQ(error_of([&] { op_two_bone_ik(local, lp, global, gp, arm().parents, 0, 2, 1, {1, 0, 0}, {}, 0.01f); }).field(), "b");
    Pose transition(5);
    std::vector<quat> dirs(3);
    EXPECT_EQ(error_of([&] { op_dead_blending_transition(transition, dirs, local); }).field(), "transition");
    EXPECT_EQ(transition.size(), 5) << "an op never resizes";
}

TEST(Boundary, TheServerRefusesCallsAfterClose) {
    StreamServer server(pumped_server());
    const uint16_t c = server.add_character(server.add_skeleton("arm", arm()));
    server.close();
    EXPECT_EQ(error_of([&] { server.set_pose(c, Pose(arm())); }).code(), Errc::State);
    EXPECT_EQ(error_of([&] { server.add_character(0); }).code(), Errc::State);
    EXPECT_EQ(error_of([&] { server.teleport(c); }).code(), Errc::State);
    EXPECT_EQ(error_of([&] { server.end_tick(); }).code(), Errc::State);
}

TEST(Boundary, EnumsAndViewpointsOutOfRangeAreRefused) {
    StreamClientConfig cc;
    cc.io = IoMode(7);
    EXPECT_EQ(error_of([&] { StreamClient{cc}; }).field(), "config.io");
    cc = {};
    cc.reconstruct.strategy = Strategy(42);
    EXPECT_EQ(error_of([&] { StreamClient{cc}; }).field(), "config.reconstruct.strategy");
    StreamServerConfig sc = pumped_server();
    sc.io = IoMode(7);
    EXPECT_EQ(error_of([&] { StreamServer{sc}; }).field(), "config.io");
    cc = {};
    cc.io = IoMode::Pumped;
    StreamClient client(cc);
    EXPECT_EQ(error_of([&] { client.set_viewpoint({std::nanf(""), 0, 0}); }).code(), Errc::InvalidArgument);
    kform k;
    EXPECT_EQ(error_of([&] { kform_to_engine(k, Engine(9), 1.0f); }).field(), "engine");
    k.rot = quat{5, 0, 0, 0};
    EXPECT_EQ(error_of([&] { kform_to_engine(k, Engine::Unity, 1.0f); }).code(), Errc::InvalidPose);
    Pose p(2);
    p.vel[1].x = INFINITY;
    const Error e = error_of([&] { pose_to_engine(p, p, Engine::Unreal, 0.01f); });
    EXPECT_EQ(e.joint(), 1);
    EXPECT_EQ(e.field(), "in.vel");
}
