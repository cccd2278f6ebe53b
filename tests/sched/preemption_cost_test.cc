// The preemption cost model's pure parts: a stop's cost, a preemptor's gain, the protection a
// run has after its start, and whether waiting for the victims' checkpoints is cheaper.
#include "sched/preemption_cost.h"

#include <gtest/gtest.h>

#include <vector>

#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::kMin;
using testing::kSec;

TEST(PreemptionCost, AStopCostsItsLostWorkAndRestartMoreEachTimeTheJobWasStoppedBefore) {
  // Two devices, 3 minutes since the checkpoint, a 1 minute restart: 8 device-minutes.
  EXPECT_DOUBLE_EQ(StopCost({2000, 3 * kMin, kMin, 0}), 8.0 * kMin);
  // The third stop of the same run costs three times as much.
  EXPECT_DOUBLE_EQ(StopCost({2000, 3 * kMin, kMin, 2}), 24.0 * kMin);
  // A quarter of a device, just checkpointed: only its restart.
  EXPECT_DOUBLE_EQ(StopCost({250, 0, kMin, 0}), 0.25 * kMin);
  EXPECT_DOUBLE_EQ(StopCost({1000, -5, -5, -1}), 0.0);
}

TEST(PreemptionCost, AGainIsTheWaitAvoidedWeightedByTheClassesBetween) {
  // Eight devices that would wait 10 minutes, in the victims' class: 80 device-minutes.
  EXPECT_DOUBLE_EQ(PreemptionGain(8000, 10 * kMin, 0), 80.0 * kMin);
  // normal (500) over low (200): four times that.
  EXPECT_DOUBLE_EQ(PreemptionGain(8000, 10 * kMin, 300), 320.0 * kMin);
  EXPECT_DOUBLE_EQ(PreemptionGain(8000, 10 * kMin, -300), 80.0 * kMin);
  EXPECT_DOUBLE_EQ(PreemptionGain(8000, -1, 300), 0.0);
  EXPECT_TRUE(PreemptionPays(2.0, 1.0));
  EXPECT_FALSE(PreemptionPays(1.0, 1.0));
}

TEST(PreemptionCost, ProtectionDoublesWithEachPreemptionUpToEightTimes) {
  EXPECT_EQ(ProtectedFor(10 * kMin, 0), 10 * kMin);
  EXPECT_EQ(ProtectedFor(10 * kMin, 1), 20 * kMin);
  EXPECT_EQ(ProtectedFor(10 * kMin, 3), 80 * kMin);
  EXPECT_EQ(ProtectedFor(10 * kMin, 50), 80 * kMin);
  EXPECT_EQ(ProtectedFor(0, 5), 0);
}

TEST(PreemptionCost, ASearchThatFoundNothingBacksOffDoublingUpToEightMinutes) {
  EXPECT_EQ(SearchBackoff(1), 30 * kSec);
  EXPECT_EQ(SearchBackoff(2), kMin);
  EXPECT_EQ(SearchBackoff(3), 2 * kMin);
  EXPECT_EQ(SearchBackoff(4), 4 * kMin);
  EXPECT_EQ(SearchBackoff(5), 8 * kMin);
  EXPECT_EQ(SearchBackoff(6), kMaxSearchBackoff);
  EXPECT_EQ(SearchBackoff(1000), kMaxSearchBackoff);
  EXPECT_EQ(SearchBackoff(0), kSearchBackoff);  // as after one failure
}

TEST(PreemptionCost, WaitingForCheckpointsWhenThePreemptorsWaitCostsLessThanTheLostWork) {
  // One device, 4 of 5 minutes since its checkpoint: a 1-device preemptor waits the minute
  // (1 device-minute against 4 lost).
  EXPECT_EQ(WaitForCheckpoints(1000, {{1000, 4 * kMin, 5 * kMin}}), kMin);
  // An 8-device preemptor idling that minute costs more than the 4 lost: stop now.
  EXPECT_EQ(WaitForCheckpoints(8000, {{1000, 4 * kMin, 5 * kMin}}), 0);
  // Until the last victim that would lose work checkpoints; one that just did costs nothing.
  EXPECT_EQ(
      WaitForCheckpoints(
          1000, {{1000, 4 * kMin, 5 * kMin}, {2000, 3 * kMin, 5 * kMin}, {4000, 0, 5 * kMin}}),
      2 * kMin);
  // A victim that never checkpoints would wait for ever: stop now.
  EXPECT_EQ(WaitForCheckpoints(1000, {{1000, 4 * kMin, 5 * kMin}, {1000, kMin, 0}}), 0);
  EXPECT_EQ(WaitForCheckpoints(1000, {}), 0);
}

}  // namespace
}  // namespace tessera
