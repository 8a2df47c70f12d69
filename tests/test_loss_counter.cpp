// The client's loss counts: datagrams from gaps in the server's sequence, snapshot ticks only where
// datagrams are missing (a tick the server chose not to send is not lost).
#include <gtest/gtest.h>

#include "client/src/loss_counter.h"

namespace ks {
namespace {

constexpr uint32_t kStep = 2;  // 30 Hz snapshots of 60 Hz ticks

TEST(LossCounter, TicksTheServerSkippedAreNotLost) {
    // Nothing moved for ten ticks: the server sent nothing, and the sequence has no gap.
    LossCounter l;
    l.on_snapshot(1, 2, kStep);
    l.on_datagram(2);  // a Pong
    l.on_snapshot(3, 22, kStep);
    EXPECT_EQ(l.counts().snapshots_lost, 0u);
    EXPECT_EQ(l.counts().datagrams_lost, 0u);
    EXPECT_EQ(l.counts().snapshots_received, 2u);
}

TEST(LossCounter, ASnapshotLostOnTheWayIsLostAndLateWhenItLands) {
    LossCounter l;
    l.on_snapshot(1, 2, kStep);
    l.on_snapshot(3, 6, kStep);  // 2 (tick 4) missing
    EXPECT_EQ(l.counts().snapshots_lost, 1u);
    EXPECT_EQ(l.counts().datagrams_lost, 1u);
    l.on_snapshot(2, 4, kStep);
    EXPECT_EQ(l.counts().snapshots_lost, 0u);
    EXPECT_EQ(l.counts().snapshots_late, 1u);
    EXPECT_EQ(l.counts().datagrams_lost, 0u);
    EXPECT_EQ(l.counts().datagrams_late, 1u);
    EXPECT_EQ(l.counts().snapshots_received, 3u);
    l.on_snapshot(2, 4, kStep);  // a duplicate changes nothing
    EXPECT_EQ(l.counts().snapshots_late, 1u);
    EXPECT_EQ(l.counts().snapshots_received, 3u);
}

TEST(LossCounter, LostTicksAreAtMostTheDatagramsMissing) {
    // Six ticks skipped, two datagrams missing between: at most two snapshots lost.
    LossCounter l;
    l.on_snapshot(10, 100, kStep);
    l.on_snapshot(13, 114, kStep);
    EXPECT_EQ(l.counts().snapshots_lost, 2u);
    EXPECT_EQ(l.counts().datagrams_lost, 2u);
    // One of them was an event, arriving late: one snapshot lost at most.
    l.on_datagram(11);
    EXPECT_EQ(l.counts().snapshots_lost, 1u);
    EXPECT_EQ(l.counts().datagrams_lost, 1u);
    // The other was tick 106: none lost.
    l.on_snapshot(12, 106, kStep);
    EXPECT_EQ(l.counts().snapshots_lost, 0u);
    EXPECT_EQ(l.counts().snapshots_late, 1u);
}

TEST(LossCounter, ALostPartOfATickLosesNoTick) {
    // Tick 4 was not sent; the datagram missing is a part of tick 2, before its last part.
    LossCounter l;
    l.on_snapshot(1, 2, kStep);
    l.on_snapshot(3, 2, kStep);  // part 3 of tick 2; 2 (part 2) missing
    l.on_snapshot(4, 6, kStep);
    EXPECT_EQ(l.counts().snapshots_lost, 0u);
    EXPECT_EQ(l.counts().datagrams_lost, 1u);
    EXPECT_EQ(l.counts().snapshots_received, 2u);
}

TEST(LossCounter, ASnapshotOvertakenByAPongIsNeitherLostNorLate) {
    LossCounter l;
    l.on_snapshot(1, 2, kStep);
    l.on_datagram(3);            // the Pong, first
    l.on_snapshot(2, 4, kStep);  // late in the sequence, yet the newest tick
    l.on_snapshot(4, 6, kStep);
    EXPECT_EQ(l.counts().datagrams_lost, 0u);
    EXPECT_EQ(l.counts().datagrams_late, 1u);
    EXPECT_EQ(l.counts().snapshots_lost, 0u);
    EXPECT_EQ(l.counts().snapshots_late, 0u);
    EXPECT_EQ(l.counts().snapshots_received, 3u);
}

TEST(LossCounter, WhatCameBeforeTheFirstDatagramIsNotCounted) {
    // The Accept was resent (the first one lost): what the server sent before it arrives late, or
    // was dropped before the handshake ended; none of it was lost on this connection's way.
    LossCounter l;
    l.on_datagram(5);
    l.on_datagram(3);
    l.on_snapshot(4, 2, kStep);
    EXPECT_EQ(l.counts().datagrams_lost, 0u);
    EXPECT_EQ(l.counts().datagrams_late, 0u);
    l.on_snapshot(6, 4, kStep);
    EXPECT_EQ(l.counts().snapshots_received, 1u);
    EXPECT_EQ(l.counts().snapshots_lost, 0u);
}

TEST(LossCounter, AJumpForgetsWhatItSkippedOverAndTheWindowEndsWhereItSays) {
    LossCounter l;
    l.on_datagram(1);
    const uint16_t newest = uint16_t(1 + LossCounter::kWindow + 10);
    l.on_datagram(newest);
    EXPECT_EQ(l.counts().datagrams_lost, uint64_t(LossCounter::kWindow + 9));
    l.on_datagram(uint16_t(newest - 5));  // skipped over, inside the window: late
    EXPECT_EQ(l.counts().datagrams_late, 1u);
    l.on_datagram(uint16_t(newest - LossCounter::kWindow + 1));  // the window's oldest
    EXPECT_EQ(l.counts().datagrams_late, 2u);
    l.on_datagram(uint16_t(newest - LossCounter::kWindow));  // just out of it: stays lost
    EXPECT_EQ(l.counts().datagrams_late, 2u);
    EXPECT_EQ(l.counts().datagrams_lost, uint64_t(LossCounter::kWindow + 7));
}

TEST(LossCounter, TheSequenceWraps) {
    LossCounter l;
    uint16_t s = 65530;
    for (uint32_t tick = 2; tick < 40; tick += kStep) l.on_snapshot(s++, tick, kStep);
    EXPECT_EQ(l.counts().datagrams_lost, 0u);
    EXPECT_EQ(l.counts().snapshots_lost, 0u);
    EXPECT_EQ(l.counts().snapshots_received, 19u);
    l.on_snapshot(s, 42, kStep);
    EXPECT_EQ(l.counts().snapshots_lost, 0u) << "tick 40 was not sent";
    l.on_snapshot(uint16_t(s + 2), 46, kStep);
    EXPECT_EQ(l.counts().datagrams_lost, 1u);
    EXPECT_EQ(l.counts().snapshots_lost, 1u);
}

TEST(LossCounter, TooLateIsLostAndALongJumpCostsLittle) {
    LossCounter l;
    l.on_snapshot(1, 2, kStep);
    l.on_snapshot(3, 6, kStep);
    for (uint16_t s = 4; s < 4 + LossCounter::kWindow; ++s) l.on_datagram(s);
    l.on_snapshot(2, 4, kStep);  // over the window late: stays lost
    EXPECT_EQ(l.counts().snapshots_lost, 1u);
    EXPECT_EQ(l.counts().datagrams_late, 0u);
    // Half the sequence space ahead (a forged datagram on an unsealed link): counted, not listed.
    const uint16_t far = uint16_t(4 + LossCounter::kWindow + 30000);
    l.on_snapshot(far, 4000000000u, kStep);
    EXPECT_EQ(l.counts().datagrams_lost, 1u + 30000u);
    EXPECT_EQ(l.counts().snapshots_lost, 1u + LossCounter::kWindow - 1) << "at most the missing ones remembered";
}

TEST(LossCounter, ANewConnectionStartsItsSequenceAndKeepsTheCounts) {
    LossCounter l;
    l.on_snapshot(100, 2, kStep);
    l.on_snapshot(102, 6, kStep);
    l.restart();
    l.on_datagram(0);  // the new connection's Accept
    l.on_snapshot(1, 500, kStep);
    EXPECT_EQ(l.counts().datagrams_lost, 1u);
    EXPECT_EQ(l.counts().snapshots_lost, 1u);
    EXPECT_EQ(l.counts().snapshots_received, 3u);
}

}  // namespace
}  // namespace ks
