// Scenario tests of the guards on preemption (docs/queueing.md#preemption-cost): a class's
// minRunTime, longer after each preemption; a preemption declined when the preemptor's gain
// does not pay for its victims; one put off until the victims' next checkpoints; a search for
// victims that found none backs off.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::MakeJob;

using testing::kMin;
using testing::kSec;

// The harness's 16 G1, with low-priority runs protected for 5 minutes (a function: the
// harness's fleet is another file's static).
std::string GuardedFleet() {
  return testing::kEngineFleet + R"(priorityClasses:
  - {name: normal, value: 500, minRunTime: 0s}
  - {name: low, value: 200, preemptible: true, minRunTime: 5m}
)";
}

Job Sized(const Spec& spec, const std::string& name, const std::string& priority, int32_t tasks,
          Millis runtime, Millis checkpoint = 0) {
  Job j = MakeJob(spec, name, tasks, runtime);
  j.priority = priority;
  j.preemptible = priority == "low";
  j.checkpoint_interval = checkpoint;
  return j;
}

std::vector<std::string> Preempted(const Harness& h) {
  std::vector<std::string> out;
  for (const Decision& d : h.store.decisions())
    if (d.kind == DecisionKind::kPreempt)
      out.push_back(h.engine->job(d.job).job.name + "@" + std::to_string(d.time / kSec));
  return out;
}

TEST(PreemptionGuard, AYoungRunIsProtectedUntilItsClassesMinRunTimeThenTakenWithoutAnotherEvent) {
  Harness h("fifo", /*backfill=*/true, GuardedFleet());
  const JobId low = h.Submit(Sized(h.spec, "low", "low", 16, 100 * kMin), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(low).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(low).min_run, 5 * kMin);
  // A normal job wants every device a minute later: the low run is too young to stop.
  const JobId normal = h.Submit(Sized(h.spec, "normal", "normal", 16, 60 * kMin), kMin);
  h.RunUntil(5 * kMin - 1);
  EXPECT_EQ(h.engine->job(normal).state, JobState::kPending);
  EXPECT_TRUE(Preempted(h).empty());
  // Nothing else happens; the engine looks again when the low run comes of age.
  h.RunUntil(5 * kMin);
  EXPECT_EQ(h.engine->job(normal).state, JobState::kRunning);
  EXPECT_EQ(Preempted(h), std::vector<std::string>{"low@300"});
}

TEST(PreemptionGuard, AJobPreemptedBeforeIsProtectedTwiceAsLongAfterItsRestart) {
  Harness h("fifo", /*backfill=*/true, GuardedFleet());
  const JobId low = h.Submit(Sized(h.spec, "low", "low", 16, 100 * kMin), 0);
  const JobId first = h.Submit(Sized(h.spec, "first", "normal", 16, 60 * kMin), 5 * kMin);
  h.RunUntil(5 * kMin);
  ASSERT_EQ(h.engine->job(first).state, JobState::kRunning);
  h.Finish(first, 6 * kMin);
  h.RunUntil(6 * kMin);
  ASSERT_EQ(h.engine->job(low).state, JobState::kRunning);  // restarted at 6 min
  // Preempted once, it is now protected for 10 minutes: not at 15 min, at 16 min.
  const JobId second = h.Submit(Sized(h.spec, "second", "normal", 16, 60 * kMin), 7 * kMin);
  h.RunUntil(16 * kMin - 1);
  EXPECT_EQ(h.engine->job(second).state, JobState::kPending);
  h.RunUntil(16 * kMin);
  EXPECT_EQ(h.engine->job(second).state, JobState::kRunning);
  EXPECT_EQ(Preempted(h), (std::vector<std::string>{"low@300", "low@960"}));
}

TEST(PreemptionGuard, APreemptionWhoseGainDoesNotPayForItsVictimsIsDeclined) {
  Harness h("fifo", /*backfill=*/true, testing::kEngineFleet);  // minRunTime 0 here
  // A low run of all 16 devices without checkpoints, expected to end at 21 minutes.
  const JobId low = h.Submit(Sized(h.spec, "low", "low", 16, 21 * kMin), 0);
  h.RunUntil(0);
  // At 20.5 minutes a normal job of one device would wait 30 s for it: 4 x 1 device x 30 s
  // gained against 16 devices x (20.5 minutes lost + 1 minute's restart). It waits.
  const JobId one = h.Submit(Sized(h.spec, "one", "normal", 1, 60 * kMin), 41 * kMin / 2);
  h.RunUntil(41 * kMin / 2);
  EXPECT_EQ(h.engine->job(one).state, JobState::kPending);
  EXPECT_TRUE(Preempted(h).empty());
  EXPECT_GE(h.engine->counters().preemptions_declined, 1u);
  h.Finish(low, 21 * kMin);
  h.RunUntil(21 * kMin);
  EXPECT_EQ(h.engine->job(one).state, JobState::kRunning);
  // Far from its end, the same run is worth stopping: 16 devices that would wait 20 minutes.
  const JobId low2 = h.Submit(Sized(h.spec, "low2", "low", 15, 40 * kMin), 21 * kMin);
  h.RunUntil(21 * kMin);
  ASSERT_EQ(h.engine->job(low2).state, JobState::kRunning);
  const JobId big = h.Submit(Sized(h.spec, "big", "normal", 16, 60 * kMin), 22 * kMin);
  h.Finish(one, 22 * kMin);
  h.RunUntil(22 * kMin);
  EXPECT_EQ(h.engine->job(big).state, JobState::kRunning);
  EXPECT_EQ(Preempted(h), std::vector<std::string>{"low2@1320"});
}

TEST(PreemptionGuard, ARestartCostMakesAVictimThatJustCheckpointedWorthKeeping) {
  // A low run of 16 devices that checkpoints every 5 minutes, expected to end at 21 minutes; at
  // 20 minutes, just checkpointed, a normal job of one device would wait a minute for it:
  // 4 x 1 device-minute gained, against 16 devices x the restart.
  auto run = [](const std::string& scheduler) {
    Harness h("fifo", /*backfill=*/true, testing::kEngineFleet + scheduler);
    h.Submit(Sized(h.spec, "low", "low", 16, 21 * kMin, 5 * kMin), 0);
    const JobId one = h.Submit(Sized(h.spec, "one", "normal", 1, 60 * kMin), 20 * kMin);
    h.RunUntil(20 * kMin);
    return h.engine->job(one).state;
  };
  EXPECT_EQ(run("scheduler: {restartCost: 0s}\n"), JobState::kRunning);  // costs nothing
  EXPECT_EQ(run(""), JobState::kPending);  // 16 device-minutes (the default minute)
  EXPECT_EQ(run("scheduler: {restartCost: 10s}\n"), JobState::kRunning);  // 2.7
}

TEST(PreemptionGuard, APreemptionWaitsForTheVictimsCheckpointWhenThatCostsLess) {
  Harness h("fifo", /*backfill=*/true, testing::kEngineFleet);  // minRunTime 0 here
  // 15 devices of normal work, and one low device that checkpoints every 5 minutes.
  h.Submit(Sized(h.spec, "rest", "normal", 15, 100 * kMin), 0);
  const JobId low = h.Submit(Sized(h.spec, "low", "low", 1, 100 * kMin, 5 * kMin), 0);
  h.RunUntil(0);
  // At 9 minutes a one-device normal job: stopping the low run now loses 4 minutes of its
  // device, waiting costs the newcomer's one device a minute. It waits for the checkpoint.
  const JobId one = h.Submit(Sized(h.spec, "one", "normal", 1, 60 * kMin), 9 * kMin);
  h.RunUntil(10 * kMin - 1);
  EXPECT_EQ(h.engine->job(one).state, JobState::kPending);
  EXPECT_GE(h.engine->counters().preemptions_deferred, 1u);
  h.RunUntil(10 * kMin);
  EXPECT_EQ(h.engine->job(one).state, JobState::kRunning);
  EXPECT_EQ(Preempted(h), std::vector<std::string>{"low@600"});
  EXPECT_EQ(h.engine->job(low).lost_device_ms, 0.0);
}

TEST(PreemptionGuard, AJobWhoseSearchFoundNoRoomSearchesAgainOnlyAfterItsBackoff) {
  Harness h("fifo", /*backfill=*/true, testing::kEngineFleet);  // minRunTime 0 here
  // 8 devices of normal work for 2 minutes, 8 of low work for 100.
  const JobId normal = h.Submit(Sized(h.spec, "normal", "normal", 8, 100 * kMin), 0);
  h.Submit(Sized(h.spec, "low", "low", 8, 100 * kMin), 0);
  h.RunUntil(0);
  // At 1 minute a normal job wants all 16: stopping the low run would free only 8. It searches
  // then (nothing), after 30 s (nothing), and next a minute later.
  const JobId big = h.Submit(Sized(h.spec, "big", "normal", 16, 60 * kMin), kMin);
  h.RunUntil(kMin + 30 * kSec);
  EXPECT_EQ(h.engine->counters().preemption_searches, 2u);
  // At 2 minutes the normal run ends: the low one could make room now, but big's next search
  // is at 2:30 — without another event, it comes then.
  h.Finish(normal, 2 * kMin);
  h.RunUntil(2 * kMin + 29 * kSec);
  EXPECT_EQ(h.engine->job(big).state, JobState::kPending);
  EXPECT_EQ(h.engine->counters().preemption_searches, 2u);
  h.RunUntil(2 * kMin + 30 * kSec);
  EXPECT_EQ(h.engine->job(big).state, JobState::kRunning);
  EXPECT_EQ(Preempted(h), std::vector<std::string>{"low@150"});
  EXPECT_EQ(h.engine->counters().preemption_searches, 3u);
  EXPECT_EQ(h.engine->job(big).searches_failed, 0);  // started: its backoff starts afresh
}

TEST(PreemptionGuard, UnderLasAJobStarvedByShortOnesIsPromotedAfter64TimesItRan) {
  Harness h("las", /*backfill=*/true, testing::kEngineFleet);
  // A long job of 16 devices; from 4 minutes on, a short one of 16 devices every 3 minutes.
  // The long one, past its first queue after 3.75 minutes (one device-hour), gives way to the
  // first short one and, without promotion, to every one after it. All preemptible.
  auto job = [&](const std::string& name, Millis runtime) {
    Job j = Sized(h.spec, name, "normal", 16, runtime);
    j.preemptible = true;
    return j;
  };
  const JobId long_job = h.Submit(job("long", 600 * kMin), 0);
  std::vector<JobId> shorts;
  for (int k = 0; k < 100; ++k)
    shorts.push_back(h.Submit(job("short" + std::to_string(k), 3 * kMin), (4 + 3 * k) * kMin));
  std::optional<TimeMs> restarted;
  for (TimeMs t = 0; t <= 300 * kMin && !restarted; t += kMin) {
    h.RunUntil(t);
    for (JobId s : shorts) {
      const JobRecord& r = h.engine->job(s);
      if (r.running() && t - r.last_start >= 3 * kMin) h.Finish(s, t);
    }
    h.RunUntil(t);
    const JobRecord& l = h.engine->job(long_job);
    if (t > 4 * kMin && l.running()) restarted = t;
  }
  ASSERT_FALSE(Preempted(h).empty());
  EXPECT_EQ(Preempted(h).front(), "long@240");
  // It ran 4 minutes: promoted at 4 + 256 minutes, it goes first when the short run then
  // running ends.
  ASSERT_TRUE(restarted.has_value());
  EXPECT_GE(*restarted, 260 * kMin);
  EXPECT_LE(*restarted, 263 * kMin);
  EXPECT_EQ(h.engine->counters().promotions, 1u);
  EXPECT_GT(h.engine->job(long_job).forgiven_device_ms, 0.0);
}

}  // namespace
}  // namespace tessera
