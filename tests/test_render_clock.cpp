// The render clock: server time = local time + an offset that slews towards the estimate.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "client/src/render_clock.h"

using namespace ks;

TEST(RenderClock, FirstCallSnapsToTheEstimate) {
    RenderClock c;
    EXPECT_DOUBLE_EQ(c.at(12.0, 3.25), 15.25);
    EXPECT_DOUBLE_EQ(c.offset(), 3.25);
    // A negative offset too, and a fresh clock snaps whatever the local time.
    RenderClock d(0.01, 0.02);
    EXPECT_DOUBLE_EQ(d.at(100.5, -40.0), 60.5);
    EXPECT_DOUBLE_EQ(d.offset(), -40.0);
}

TEST(RenderClock, SmallChangesAreSlewedNeverStepped) {
    for (double max_slew : {0.01, 0.05}) {
        for (double change : {+0.012, -0.015, +0.004}) {  // all below snap_s = 20 ms
            RenderClock c(max_slew, 0.02);
            const double dt = 1.0 / 60.0, base = 5.0;
            double local = 1.0, prev = c.at(local, base);
            const double need = std::fabs(change) / max_slew;  // local seconds the slew takes
            bool reached = false;
            double reached_at = 0;
            for (int k = 1; k <= int(2.0 * need / dt) + 10; ++k) {
                local += dt;
                const double server = c.at(local, base + change);
                const double d = server - prev;
                EXPECT_GE(d, dt * (1.0 - max_slew) - 1e-12) << "frame " << k;
                EXPECT_LE(d, dt * (1.0 + max_slew) + 1e-12) << "frame " << k;
                // The offset moves at exactly the slew rate until it arrives.
                const double moved = std::fabs(c.offset() - base);
                EXPECT_LE(moved, std::fabs(change) + 1e-12);
                if (!reached) {
                    EXPECT_NEAR(moved, std::min(std::fabs(change), max_slew * (local - 1.0)), 1e-9) << k;
                }
                if (!reached && std::fabs(c.offset() - (base + change)) < 1e-12) {
                    reached = true;
                    reached_at = local - 1.0;
                }
                prev = server;
            }
            EXPECT_TRUE(reached) << "slew " << max_slew << " change " << change;
            EXPECT_NEAR(reached_at, need, dt + 1e-9);
            EXPECT_DOUBLE_EQ(c.offset(), base + change) << "settled on the estimate";
        }
    }
}

TEST(RenderClock, NoLocalTimeNoSlew) {
    // Repeated calls at the same local time do not move the offset (the slew is per local second).
    RenderClock c;
    c.at(2.0, 1.0);
    for (int i = 0; i < 100; ++i) EXPECT_DOUBLE_EQ(c.at(2.0, 1.015), 3.0);
    EXPECT_DOUBLE_EQ(c.offset(), 1.0);
}

TEST(RenderClock, LargeGapsAreStepped) {
    for (double gap : {+0.05, -0.05, +0.5, -3.0}) {
        RenderClock c(0.01, 0.02);
        const double dt = 1.0 / 60.0;
        double local = 0.0;
        for (int k = 0; k < 10; ++k, local += dt) c.at(local, 7.0);
        const double server = c.at(local, 7.0 + gap);
        EXPECT_DOUBLE_EQ(c.offset(), 7.0 + gap) << gap;
        EXPECT_DOUBLE_EQ(server, local + 7.0 + gap) << gap;
    }
    // A gap just under snap_s is slewed (one frame's worth), not stepped.
    RenderClock c(0.01, 0.02);
    c.at(0.0, 7.0);
    c.at(0.1, 7.019);
    EXPECT_NEAR(c.offset(), 7.0 + 0.01 * 0.1, 1e-12);
}

TEST(RenderClock, MonotonicUnderJitteringEstimates) {
    // Local time non-decreasing (frame times jitter, some frames repeat the time), the estimate
    // jitters by +-5 ms around a slowly drifting value: the server time never goes backwards and
    // never advances faster than (1 + max_slew) local.
    std::mt19937 gen(11);
    std::uniform_real_distribution<double> jitter(-0.005, 0.005), frame(0.0, 0.03);
    RenderClock c(0.01, 0.02);
    double local = 3.0, prev = c.at(local, 0.25);
    for (int k = 0; k < 20000; ++k) {
        const double d_local = (k % 17 == 0) ? 0.0 : frame(gen);
        local += d_local;
        const double estimate = 0.25 + 1e-4 * std::sin(local * 0.01) + jitter(gen);
        const double server = c.at(local, estimate);
        EXPECT_GE(server, prev) << "frame " << k;
        EXPECT_LE(server - prev, d_local * (1.0 + 0.01) + 1e-12) << "frame " << k;
        EXPECT_GE(server - prev, d_local * (1.0 - 0.01) - 1e-12) << "frame " << k;
        // The slewed offset stays within the jitter band (it never overshoots the estimates).
        EXPECT_LT(std::fabs(c.offset() - 0.25), 0.0052) << "frame " << k;
        prev = server;
    }
}

TEST(RenderClock, DefaultsSlewFivePercentAndStepAQuarterSecond) {
    RenderClock c;
    c.at(0.0, 1.0);
    c.at(1.0, 1.2);  // under 0.25 s: slewed, 5 % of one local second
    EXPECT_NEAR(c.offset(), 1.05, 1e-12);
    c.at(2.0, 1.6);  // 0.55 s away: stepped
    EXPECT_DOUBLE_EQ(c.offset(), 1.6);
}
