// The defaults on clips never used to tune them (docs/FIDELITY.md, "The validation set"), recorded
// as kinesync-server records (30 s here, 60 s in docs/RESULTS.md). The bounds are the targets where
// they hold, and otherwise this test's measured figures with a margin, so a change that makes the
// defaults worse on unseen motion fails.
#include <gtest/gtest.h>

#include "programs/server/sim/world_streamer.h"
#include "programs/testbench/replay.h"
#include <kinesync/common/record/recording.h>
#include <kinesync/server/stream_server.h>
#include "tests/support/scratch.h"
#include "tests/support/udp_harness.h"
#include "tests/support/validation.h"

using namespace ks;

namespace {

RecordingReadResult record_validation(double seconds) {
    const ClipLibrary lib = load_clip_library(test::validation_clips());
    WorldConfig wc;
    wc.characters = 4;
    wc.seed = 7;
    wc.controller.teleport_every_s = 7.0f;
    wc.controller.reset_every_s = 11.0f;
    World world(lib, wc);
    StreamServerConfig sc;
    sc.network = false;
    sc.io = IoMode::Pumped;
    sc.record_path = test::scratch_path("validation.ksrec");
    {
        StreamServer server(sc);
        WorldStreamer streamer(world, server, 0);
        streamer.set_look_ahead(0.25, 2);
        streamer.set_decision_restart(WorldStreamer::kDecisionRestartS);
        while (world.tick() < uint32_t(seconds * 60)) streamer.step();
        server.close();
    }
    RecordingReadResult rec = read_recording(sc.record_path);
    std::remove(sc.record_path.c_str());
    return rec;
}

const FidelityResult& of(const ReplayResult& r, Strategy s) {
    for (const auto& x : r.strategies)
        if (x.strategy == s) return x.result;
    throw std::runtime_error(std::string("no result for ") + strategy_name(s));
}

}  // namespace

TEST(Validation, TheDefaultsHoldOnClipsNeverTunedOn) {
    KS_REQUIRE_VALIDATION_CLIPS();
    test::quiet_server_logger();
    const RecordingReadResult rec = record_validation(30.0);
    for (const char* profile : {"broadband", "mobile"}) {
        ReplayConfig cfg;
        cfg.profile = net_profile(profile);
        cfg.strategies = {Strategy::Interp, Strategy::DeadBlendSod, Strategy::DeadBlendSodAhead};
        const ReplayResult r = run_replay(rec, cfg);
        const FidelityResult &interp = of(r, Strategy::Interp), &sod = of(r, Strategy::DeadBlendSod),
                             &ahead = of(r, Strategy::DeadBlendSodAhead);
        SCOPED_TRACE(profile);
        std::printf("validation %s: interp %.2f cm, %lld pops; deadblend+sod %.2f cm, accel %.2f, %lld pops; "
                    "deadblend+sod+ahead %.2f cm, accel %.2f, %lld pops\n",
                    profile, interp.present_err_cm.mean, (long long)interp.pops, sod.present_err_cm.mean, sod.accel_rms_ratio,
                    (long long)sod.pops, ahead.present_err_cm.mean, ahead.accel_rms_ratio, (long long)ahead.pops);
        EXPECT_EQ(sod.teleport_smear_frames, 0);
        EXPECT_EQ(ahead.teleport_smear_frames, 0);
        const bool broadband = std::string(profile) == "broadband";
        // Targets that hold: the velocity-only default within a quarter of interp's error at
        // broadband and within 3 times its pops at mobile; the look-ahead default within a tenth
        // of interp's error, as smooth as the look-ahead targets ask (1.15), with fewer pops.
        EXPECT_LE(ahead.present_err_cm.mean, interp.present_err_cm.mean / 10);
        EXPECT_LE(ahead.accel_rms_ratio, 1.15);
        EXPECT_LE(ahead.pops, interp.pops);
        // Missed targets (error 1/4 of interp's at mobile, accel <= 1.3 broadband / 1.5 mobile,
        // pops <= 3x interp's at broadband): this test's measured figures (30 s: 1/2.8, 1.76 and
        // 2.06, 5.0x) with a margin, so they do not get worse unseen.
        if (broadband) {
            EXPECT_LE(sod.present_err_cm.mean, interp.present_err_cm.mean / 4);
            EXPECT_LE(sod.accel_rms_ratio, 2.0);
            EXPECT_LE(sod.pops, 6 * interp.pops);
        } else {
            EXPECT_LE(sod.present_err_cm.mean, interp.present_err_cm.mean / 2.5);
            EXPECT_LE(sod.accel_rms_ratio, 2.3);
            EXPECT_LE(sod.pops, 3 * interp.pops);
        }
    }
}
