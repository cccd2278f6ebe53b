// The preemption cost model's pure parts: a stop's cost, when a preemption pays (a displacement
// within the class too), the protection a run has after its start, and whether waiting for the
// victims' checkpoints is cheaper.
#include "sched/preemption_cost.h"

#include <gtest/gtest.h>

#include <vector>

#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::kMin;
using testing::kSec;

TEST(PreemptionCost, AStopCostsItsLostWorkAndRestartMoreEachTimeTheJobWasStoppedBefore) {
  // 3 minutes since the checkpoint, a 1 minute restart: 4 job-minutes, whatever its devices.
  EXPECT_DOUBLE_EQ(StopCost({3 * kMin, kMin, 0}), 4.0 * kMin);
  // The third stop of the same run costs three times as much.
  EXPECT_DOUBLE_EQ(StopCost({3 * kMin, kMin, 2}), 12.0 * kMin);
  // Just checkpointed: only its restart.
  EXPECT_DOUBLE_EQ(StopCost({0, kMin, 0}), 1.0 * kMin);
  EXPECT_DOUBLE_EQ(StopCost({-5, -5, -1}), 0.0);
}

TEST(PreemptionCost, VictimsRankByTheirCostPerDeviceFreed) {
  // One run of 8 devices losing 4 minutes is cheaper per device than a quarter device losing
  // one: the room comes from fewer jobs' work.
  EXPECT_DOUBLE_EQ(StopCostPerDevice({3 * kMin, kMin, 0}, 8000), 0.5 * kMin);
  EXPECT_DOUBLE_EQ(StopCostPerDevice({0, kMin, 0}, 250), 4.0 * kMin);
  EXPECT_DOUBLE_EQ(StopCostPerDevice({0, kMin, 0}, 0), 1000.0 * kMin);  // as a thousandth
}

TEST(PreemptionCost, AClassWeighsOneAndAHundredthPerPriorityPointAbove) {
  EXPECT_DOUBLE_EQ(ClassWeight(0), 1.0);
  EXPECT_DOUBLE_EQ(ClassWeight(300), 4.0);  // normal (500) over low (200)
  EXPECT_DOUBLE_EQ(ClassWeight(600), 7.0);  // high (800) over low
  EXPECT_DOUBLE_EQ(ClassWeight(-300), 1.0);
}

TEST(PreemptionCost, APreemptionPaysWhenTheWaitAvoidedOutweighsTheVictimsLossAndTheirWaits) {
  // A normal job (weight 4 over low) and one low victim, never stopped, 3 minutes since its
  // checkpoint and a minute's restart: it waits again as long as the preemptor would have, so
  // wait x (4 - 1) must exceed 4 minutes: more than 80 s.
  PreemptionBill one;
  one.Add({3 * kMin, kMin, 0});
  EXPECT_DOUBLE_EQ(one.lost, 4.0 * kMin);
  EXPECT_DOUBLE_EQ(one.requeues, 1.0);
  EXPECT_EQ(BreakEvenWait(one, 300), 80 * kSec);
  EXPECT_FALSE(PreemptionPays(80 * kSec, one, 300));
  EXPECT_TRUE(PreemptionPays(81 * kSec, one, 300));
  // Stopped twice before, the same victim counts three times: 3 x 4 minutes lost, and its
  // wait three times: wait x (4 - 3) > 12 minutes.
  PreemptionBill churned;
  churned.Add({3 * kMin, kMin, 2});
  EXPECT_EQ(BreakEvenWait(churned, 300), 12 * kMin);
  // Four fresh low victims outweigh one normal job whatever it waits; a high one (weight 7)
  // pays for them when its wait x 3 exceeds their 4 restarts.
  PreemptionBill four;
  for (int k = 0; k < 4; ++k)
    four.Add({0, kMin, 0});
  EXPECT_EQ(BreakEvenWait(four, 300), std::nullopt);
  EXPECT_FALSE(PreemptionPays(365 * 24 * 60 * kMin, four, 300));
  EXPECT_EQ(BreakEvenWait(four, 600), 80 * kSec);
  // Within its own class (weight 1) no stop ever pays.
  EXPECT_EQ(BreakEvenWait(one, 0), std::nullopt);
  // Nothing lost (a restart that costs nothing, just checkpointed): any wait at all pays.
  PreemptionBill free;
  free.Add({0, 0, 0});
  EXPECT_EQ(BreakEvenWait(free, 300), 0);
  EXPECT_TRUE(PreemptionPays(1, free, 300));
  EXPECT_FALSE(PreemptionPays(0, free, 300));
}

TEST(PreemptionCost, ADisplacementWithinTheClassPaysForItsStopsWasteOnlyPastTheFirstRun) {
  // An ordering's displacement bills no wait again: only the waste of its stops, weight 1.
  PreemptionBill displaced;
  displaced.AddWaste({4 * kMin, kMin, 0});
  EXPECT_DOUBLE_EQ(displaced.lost, 5.0 * kMin);
  EXPECT_DOUBLE_EQ(displaced.requeues, 0.0);
  EXPECT_EQ(displaced.stops, 1);
  // One run for one job is the ordering's swap.
  EXPECT_FALSE(DisplacementBilled(displaced));
  // A second (stopped once before: twice its waste) puts two jobs back for one: it must pay
  // 5 + 2 x 2 = 9 minutes.
  displaced.AddWaste({kMin, kMin, 1});
  EXPECT_TRUE(DisplacementBilled(displaced));
  EXPECT_EQ(BreakEvenWait(displaced, 0), 9 * kMin);
  EXPECT_TRUE(PreemptionPays(9 * kMin + 1, displaced, 0));
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

TEST(PreemptionCost, TheBackoffsOfManyJobsShareATickEveryThirtySeconds) {
  EXPECT_EQ(SearchTick(0), 0);
  EXPECT_EQ(SearchTick(1), 30 * kSec);
  EXPECT_EQ(SearchTick(30 * kSec), 30 * kSec);
  EXPECT_EQ(SearchTick(30 * kSec + 1), 60 * kSec);
  EXPECT_EQ(SearchTick(7 * kMin + 29 * kSec), 7 * kMin + 30 * kSec);
  EXPECT_EQ(SearchTick(kNever), kNever);
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
