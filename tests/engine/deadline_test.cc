// Deadlines: earliest deadline first within a priority class, and what the engine forecasts of
// a job against its deadline (engine/deadline.h).
//
// Fleet: one cluster "c" of 4 nodes x 4 G1 (n0..n3), two nodes per leaf switch; tenant "t".
#include "engine/deadline.h"

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::kSec;
using testing::MakeJob;

Job WithDeadline(Job job, TimeMs deadline) {
  job.deadline = deadline;
  return job;
}

TEST(Deadlines, TheEarliestDeadlineStartsFirstWithinAPriority) {
  Harness h("fifo", /*backfill=*/false);
  // A holds the whole fleet until 100 s.
  JobId a = h.Submit(MakeJob(h.spec, "a", 16, 100 * kSec), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(a).state, JobState::kRunning);
  // Three whole-fleet jobs queue behind it: first come without a deadline, then a late
  // deadline, then the earliest one. EDF: the last submitted goes first, the one without a
  // deadline last.
  JobId none = h.Submit(MakeJob(h.spec, "none", 16, 10 * kSec), 1 * kSec);
  JobId late =
      h.Submit(WithDeadline(MakeJob(h.spec, "late", 16, 10 * kSec), 1000 * kSec), 2 * kSec);
  JobId soon = h.Submit(WithDeadline(MakeJob(h.spec, "soon", 16, 10 * kSec), 500 * kSec), 3 * kSec);
  h.RunUntil(3 * kSec);
  h.Finish(a, 100 * kSec);
  h.RunUntil(100 * kSec);
  EXPECT_EQ(h.engine->job(soon).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(late).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(none).state, JobState::kPending);
  h.Finish(soon, 110 * kSec);
  h.RunUntil(110 * kSec);
  EXPECT_EQ(h.engine->job(late).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(none).state, JobState::kPending);
}

TEST(Deadlines, APriorityClassStillComesBeforeADeadline) {
  Harness h("fifo", /*backfill=*/false);
  JobId a = h.Submit(MakeJob(h.spec, "a", 16, 100 * kSec), 0);
  h.RunUntil(0);
  Job urgent_low = WithDeadline(MakeJob(h.spec, "urgent-low", 16, 10 * kSec), 200 * kSec);
  urgent_low.priority = "low";
  Job high = MakeJob(h.spec, "high", 16, 10 * kSec);
  high.priority = "high";
  JobId u = h.Submit(urgent_low, 1 * kSec);
  JobId hi = h.Submit(high, 2 * kSec);
  h.RunUntil(2 * kSec);
  h.Finish(a, 100 * kSec);
  h.RunUntil(100 * kSec);
  EXPECT_EQ(h.engine->job(hi).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(u).state, JobState::kPending);
}

TEST(Deadlines, TheOutlookOfAWaitingARunningAndAFinishedJob) {
  Harness h("fifo", /*backfill=*/false);
  // A takes 12 of the 16 devices until 100 s (its estimate).
  JobId a = h.Submit(WithDeadline(MakeJob(h.spec, "a", 12, 100 * kSec), 150 * kSec), 0);
  h.RunUntil(0);
  // B needs 8: it can start when A ends, at 100 s, and ends 50 s later.
  JobId on_track = h.Submit(WithDeadline(MakeJob(h.spec, "b", 8, 50 * kSec), 200 * kSec), 1 * kSec);
  JobId at_risk = h.Submit(WithDeadline(MakeJob(h.spec, "c", 8, 50 * kSec), 120 * kSec), 1 * kSec);
  Job no_estimate = WithDeadline(MakeJob(h.spec, "d", 8, 50 * kSec), 500 * kSec);
  no_estimate.runtime.reset();
  JobId unknown = h.Submit(no_estimate, 1 * kSec);
  Job hopeless = WithDeadline(MakeJob(h.spec, "e", 8, 50 * kSec), 30 * kSec);
  JobId doomed = h.Submit(hopeless, 1 * kSec);
  JobId plain = h.Submit(MakeJob(h.spec, "f", 8, 50 * kSec), 1 * kSec);
  h.RunUntil(1 * kSec);
  const TimeMs now = 1 * kSec;

  auto running = h.engine->Outlook(a, now);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, DeadlineState::kOnTrack);
  EXPECT_EQ(running->start, 0);
  EXPECT_EQ(running->end, 100 * kSec);

  auto b = h.engine->Outlook(on_track, now);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->state, DeadlineState::kOnTrack);
  EXPECT_EQ(b->start, 100 * kSec);
  EXPECT_EQ(b->end, 150 * kSec);
  EXPECT_EQ(b->deadline, 200 * kSec);

  auto c = h.engine->Outlook(at_risk, now);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->state, DeadlineState::kAtRisk);
  EXPECT_EQ(c->end, 150 * kSec);

  auto d = h.engine->Outlook(unknown, now);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->state, DeadlineState::kUnknown);
  EXPECT_EQ(d->start, 100 * kSec);
  EXPECT_EQ(d->end, kNever);

  auto e = h.engine->Outlook(doomed, now);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, DeadlineState::kAtRisk);

  EXPECT_FALSE(h.engine->Outlook(plain, now));

  // A ends by its deadline: met. C, started at 100 s, ends past its own: missed.
  h.Finish(a, 100 * kSec);
  h.RunUntil(100 * kSec);
  auto met = h.engine->Outlook(a, 100 * kSec);
  ASSERT_TRUE(met);
  EXPECT_EQ(met->state, DeadlineState::kMet);
  EXPECT_EQ(met->end, 100 * kSec);
  ASSERT_EQ(h.engine->job(at_risk).state, JobState::kRunning) << "EDF: c's deadline is first";
  h.Finish(at_risk, 150 * kSec);
  h.RunUntil(150 * kSec);
  auto missed = h.engine->Outlook(at_risk, 150 * kSec);
  ASSERT_TRUE(missed);
  EXPECT_EQ(missed->state, DeadlineState::kMissed);
}

TEST(Deadlines, ForecastFromAStartAndWhatIsLeft) {
  // Starts now at the latest; ends start + left.
  DeadlineOutlook o = ForecastDeadline(100, 10, 50, 20);
  EXPECT_EQ(o.start, 20);
  EXPECT_EQ(o.end, 70);
  EXPECT_EQ(o.state, DeadlineState::kOnTrack);
  EXPECT_EQ(ForecastDeadline(100, 60, 50, 20).state, DeadlineState::kAtRisk);
  // No start known: at risk only when even a start now ends too late.
  EXPECT_EQ(ForecastDeadline(100, kNever, 50, 20).state, DeadlineState::kUnknown);
  EXPECT_EQ(ForecastDeadline(100, kNever, 90, 20).state, DeadlineState::kAtRisk);
  // No estimate of the run: unknown.
  EXPECT_EQ(ForecastDeadline(100, 20, -1, 20).state, DeadlineState::kUnknown);
  EXPECT_EQ(DeadlineStateName(DeadlineState::kAtRisk), "at-risk");
}

}  // namespace
}  // namespace tessera
