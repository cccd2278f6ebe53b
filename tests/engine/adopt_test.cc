// Adopting a run that was running before the engine existed (the daemon's restart).
#include <gtest/gtest.h>

#include "engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::MakeJob;

using testing::kSec;

TEST(Adopt, ARunIsResumedOnItsOwnPlacementsWithItsProgress) {
  // The run as an earlier engine placed it.
  Harness before("fifo", true);
  JobId a = before.Submit(MakeJob(before.spec, "gang", 6, 100 * kSec), 0);
  before.RunUntil(0);
  ASSERT_EQ(before.engine->job(a).state, JobState::kRunning);
  std::vector<Placement> placements = before.engine->job(a).placements;

  Harness after("fifo", true);
  after.clock.Set(50 * kSec);
  JobId b = after.Submit(MakeJob(after.spec, "gang", 6, 100 * kSec), 50 * kSec);
  ASSERT_TRUE(after.engine->Adopt(b, placements, 0, 40 * kSec).ok());
  after.RunUntil(50 * kSec);
  const JobRecord& r = after.engine->job(b);
  EXPECT_EQ(r.state, JobState::kRunning);
  ASSERT_EQ(r.placements.size(), placements.size());
  for (size_t i = 0; i < placements.size(); ++i) {
    EXPECT_EQ(r.placements[i].node, placements[i].node);
    ASSERT_EQ(r.placements[i].devices.size(), placements[i].devices.size());
    EXPECT_EQ(r.placements[i].devices[0].index, placements[i].devices[0].index);
  }
  EXPECT_EQ(r.first_start, 0);
  EXPECT_EQ(r.kept_ms, 40 * kSec);
  EXPECT_EQ(r.estimated_end, 110 * kSec);  // 60 s left from 50 s
  EXPECT_EQ(after.FreeMilli(), 16000 - 6000);
  EXPECT_EQ(after.engine->pending_count(), 0u);
  EXPECT_EQ(after.engine->running_count(), 1u);
  EXPECT_EQ(after.backend.launches, std::vector<uint32_t>{b.value()});
  ASSERT_FALSE(after.store.decisions().empty());
  EXPECT_EQ(after.store.decisions().back().reason, "adopted");
  // A job submitted next is placed around it, never on its devices.
  JobId c = after.Submit(MakeJob(after.spec, "next", 10, 10 * kSec), 50 * kSec);
  after.RunUntil(50 * kSec);
  EXPECT_EQ(after.engine->job(c).state, JobState::kRunning);
  EXPECT_EQ(after.FreeMilli(), 0);
}

TEST(Adopt, PlacementsThatNoLongerFitChangeNothingAndTheJobIsPlacedAnew) {
  Harness h("fifo", true);
  JobId first = h.Submit(MakeJob(h.spec, "first", 4, 100 * kSec), 0);
  h.RunUntil(0);
  std::vector<Placement> taken = h.engine->job(first).placements;  // its devices are in use
  Milli free = h.FreeMilli();
  JobId second = h.Submit(MakeJob(h.spec, "second", 4, 100 * kSec), 0);
  Status s = h.engine->Adopt(second, taken, 0, 0);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(h.FreeMilli(), free);  // nothing of the proposal stayed
  EXPECT_EQ(h.engine->job(second).state, JobState::kPending);
  // Wrong task count, and a job that is not newly submitted.
  JobId third = h.Submit(MakeJob(h.spec, "third", 2, 100 * kSec), 0);
  EXPECT_FALSE(h.engine->Adopt(third, {}, 0, 0).ok());
  EXPECT_FALSE(h.engine->Adopt(first, taken, 0, 0).ok());
  h.RunUntil(0);
  EXPECT_EQ(h.engine->job(second).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(third).state, JobState::kRunning);
  EXPECT_EQ(h.FreeMilli(), 16000 - 10000);
}

}  // namespace
}  // namespace tessera
