// The engine tells its backend what a batch decided once the batch is done, never from inside
// a scheduling cycle: every start of a cycle is decided and recorded before the first launch,
// and a stopped run is described as it ran, not as the engine has left it since.
#include <gtest/gtest.h>

#include <vector>

#include "engine/engine.h"
#include "engine_testutil.h"

namespace tessera::testing {
namespace {

constexpr Millis kOrderSec = 1000;

TEST(BackendOrders, EveryStartOfACycleIsDecidedBeforeTheFirstLaunch) {
  Harness h("fifo", true);
  std::vector<size_t> decided_at_launch;
  std::vector<JobState> state_at_launch;
  h.backend.told = [&](const JobRecord& job, bool launch) {
    if (!launch) return;
    decided_at_launch.push_back(h.store.decisions().size());
    state_at_launch.push_back(h.engine->job(job.id).state);
  };
  for (int i = 0; i < 3; ++i)
    h.Submit(MakeJob(h.spec, "j" + std::to_string(i), 4, 100 * kOrderSec), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.backend.launches.size(), 3u);
  EXPECT_EQ(decided_at_launch, (std::vector<size_t>{3, 3, 3}));
  EXPECT_EQ(state_at_launch,
            (std::vector<JobState>{JobState::kRunning, JobState::kRunning, JobState::kRunning}));
  EXPECT_EQ(h.backend.launches, (std::vector<uint32_t>{0, 1, 2}));  // in the order decided
}

TEST(BackendOrders, AStoppedRunIsDescribedAsItRanAndStoppedBeforeItsSuccessorLaunches) {
  Harness h("las", true);
  Job big = MakeJob(h.spec, "big", 16, 100000 * kOrderSec);
  big.preemptible = true;
  JobId a = h.Submit(big, 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(a).state, JobState::kRunning);
  struct Told {
    bool launch;
    uint32_t job;
    size_t placements;
    int32_t restarts;
    JobState now;  // the engine's record when told
  };
  std::vector<Told> told;
  h.backend.told = [&](const JobRecord& job, bool launch) {
    told.push_back(
        {launch, job.id.value(), job.placements.size(), job.restarts, h.engine->job(job.id).state});
  };
  Job small = MakeJob(h.spec, "small", 4, 100 * kOrderSec);
  small.preemptible = true;
  JobId b = h.Submit(small, 330 * kOrderSec);
  h.RunUntil(330 * kOrderSec);
  ASSERT_EQ(told.size(), 2u);
  // The stop first, with the 16 tasks it ran and its restarts then; the engine has requeued it.
  EXPECT_FALSE(told[0].launch);
  EXPECT_EQ(told[0].job, a.value());
  EXPECT_EQ(told[0].placements, 16u);
  EXPECT_EQ(told[0].restarts, 0);
  EXPECT_EQ(told[0].now, JobState::kPending);
  EXPECT_TRUE(told[1].launch);
  EXPECT_EQ(told[1].job, b.value());
  EXPECT_EQ(told[1].placements, 4u);
}

}  // namespace
}  // namespace tessera::testing
