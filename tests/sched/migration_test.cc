// Heterogeneity-aware moves alone: which model is fast enough, in what order jobs are tried,
// and when a move pays for the restart it costs.
#include "sched/migration.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

constexpr Millis kMinute = 60 * 1000;

TEST(Migration, OnlyAModelAtLeastAQuarterFasterIsWorthAMove) {
  EXPECT_TRUE(FastEnoughToMove(1250, 1000));
  EXPECT_FALSE(FastEnoughToMove(1249, 1000));
  EXPECT_TRUE(FastEnoughToMove(3000, 1000));
  EXPECT_FALSE(FastEnoughToMove(1000, 1000));
}

TEST(Migration, TheLargestSpeedUpIsTriedFirstTiesBySubmission) {
  std::vector<MoveCandidate> c = {{1.5, 7, 1, 1000}, {3.0, 9, 2, 500}, {1.5, 3, 3, 1000}};
  OrderMoveCandidates(c);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].id, 2u);
  EXPECT_EQ(c[1].id, 3u);  // submitted before job 1
  EXPECT_EQ(c[2].id, 1u);
}

TEST(Migration, TheSavingIsTheRestOfTheRunTimesTheSpeedUpsShare) {
  // 100 minutes left at the reference speed; twice as fast saves half.
  EXPECT_DOUBLE_EQ(MoveSaving(120 * kMinute, 20 * kMinute, 1000, 2000), 50.0 * kMinute);
  // At half the reference speed the rest takes twice as long, and so saves twice as much.
  EXPECT_DOUBLE_EQ(MoveSaving(120 * kMinute, 20 * kMinute, 500, 1000), 100.0 * kMinute);
  // Past its estimate nothing is left to save.
  EXPECT_DOUBLE_EQ(MoveSaving(10 * kMinute, 20 * kMinute, 1000, 2000), 0.0);
  // Without an estimate the run is taken as long: any real speed-up saves much.
  EXPECT_GT(MoveSaving(std::nullopt, 20 * kMinute, 1000, 1250), 1e15);
}

TEST(Migration, AMovePaysWhenItSavesMoreThanTwiceTheLostWorkAndAMinute) {
  // 10 minutes lost since the checkpoint: the move must save more than 21 minutes.
  EXPECT_FALSE(MovePays(21.0 * kMinute, 10 * kMinute, kMinute));
  EXPECT_TRUE(MovePays(21.0 * kMinute + 1, 10 * kMinute, kMinute));
  // Just checkpointed: a minute's saving is still not enough.
  EXPECT_FALSE(MovePays(60.0 * 1000, 0, kMinute));
  EXPECT_TRUE(MovePays(60.0 * 1000 + 1, 0, kMinute));
  // A longer reload (scheduler.restartCost) asks for more.
  EXPECT_FALSE(MovePays(21.0 * kMinute + 1, 10 * kMinute, 2 * kMinute));
}

}  // namespace
}  // namespace tessera
