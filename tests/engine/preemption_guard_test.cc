// Scenario tests of the guards on preemption (docs/queueing.md#preemption-cost): a class's
// minRunTime, longer after each preemption; a preemption declined when the preemptor's gain
// does not pay for its victims (their lost work, restarts and waits, counted per job; the gain
// no more than jobs like it wait; an ordering's displacement of several runs pays for their
// lost work and restarts); one put off until the victims' next checkpoints; a search
// for victims that found none backs off.
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
  // It checkpoints every 5 minutes and restarts at no cost: each stop here (at 5 and at 16
  // minutes) loses nothing, so the preemptions pay at once and need not wait for a checkpoint.
  Harness h("fifo", /*backfill=*/true, GuardedFleet() + "scheduler: {restartCost: 0s}\n");
  const JobId low = h.Submit(Sized(h.spec, "low", "low", 16, 100 * kMin, 5 * kMin), 0);
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
  // At 20.5 minutes a normal job of one device would wait 30 s for it: 30 s x (4 - 1) gained
  // (the victim would wait again as long) against 20.5 minutes lost + 1 minute's restart. It
  // waits.
  const JobId one = h.Submit(Sized(h.spec, "one", "normal", 1, 60 * kMin), 41 * kMin / 2);
  h.RunUntil(41 * kMin / 2);
  EXPECT_EQ(h.engine->job(one).state, JobState::kPending);
  EXPECT_TRUE(Preempted(h).empty());
  EXPECT_GE(h.engine->counters().preemptions_declined, 1u);
  h.Finish(low, 21 * kMin);
  h.RunUntil(21 * kMin);
  EXPECT_EQ(h.engine->job(one).state, JobState::kRunning);
  // Far from its end, a run is worth stopping: 39 minutes x 3 against 2 minutes (one run, one
  // restart).
  const JobId low2 = h.Submit(Sized(h.spec, "low2", "low", 15, 40 * kMin), 21 * kMin);
  h.RunUntil(21 * kMin);
  ASSERT_EQ(h.engine->job(low2).state, JobState::kRunning);
  const JobId big = h.Submit(Sized(h.spec, "big", "normal", 16, 60 * kMin), 22 * kMin);
  h.Finish(one, 22 * kMin);
  h.RunUntil(22 * kMin);
  EXPECT_EQ(h.engine->job(big).state, JobState::kRunning);
  EXPECT_EQ(Preempted(h), std::vector<std::string>{"low2@1320"});
}

TEST(PreemptionGuard, ARestartCostLongerThanTheWaitAvoidedMakesAVictimWorthKeeping) {
  // A low run of 16 devices that checkpoints every 5 minutes, expected to end at 21 minutes; at
  // 20 minutes, just checkpointed, a normal job of one device would wait a minute for it:
  // 1 minute x (4 - 1) gained (the victim waits again as long), against the restart.
  auto run = [](const std::string& scheduler) {
    Harness h("fifo", /*backfill=*/true, testing::kEngineFleet + scheduler);
    h.Submit(Sized(h.spec, "low", "low", 16, 21 * kMin, 5 * kMin), 0);
    const JobId one = h.Submit(Sized(h.spec, "one", "normal", 1, 60 * kMin), 20 * kMin);
    h.RunUntil(20 * kMin);
    return h.engine->job(one).state;
  };
  EXPECT_EQ(run("scheduler: {restartCost: 0s}\n"), JobState::kRunning);  // costs nothing
  EXPECT_EQ(run(""), JobState::kRunning);  // the default minute: 3 > 1
  EXPECT_EQ(run("scheduler: {restartCost: 5m}\n"), JobState::kPending);  // 3 < 5
}

TEST(PreemptionGuard, VictimsCountAsJobsSoNoPreemptorStopsMoreRunsThanItsClassOutweighs) {
  Harness h("fifo", /*backfill=*/true, testing::kEngineFleet);  // minRunTime 0 here
  // 16 low runs of one device, 100 minutes long, checkpointing every 5 minutes.
  for (int k = 0; k < 16; ++k)
    h.Submit(Sized(h.spec, "low" + std::to_string(k), "low", 1, 100 * kMin, 5 * kMin), 0);
  h.RunUntil(0);
  // At 10 minutes, just after their checkpoints, a normal job of 4 devices: four victims would
  // each wait again as long as it would (weight 4 over low: 4 - 4 = 0 left), whatever that
  // is. It waits.
  const JobId normal = h.Submit(Sized(h.spec, "normal", "normal", 4, 60 * kMin), 10 * kMin);
  h.RunUntil(10 * kMin);
  EXPECT_EQ(h.engine->job(normal).state, JobState::kPending);
  EXPECT_TRUE(Preempted(h).empty());
  EXPECT_GE(h.engine->counters().preemptions_declined, 1u);
  // A high job of 4 devices (weight 7) a minute later stops four: 89 minutes x (7 - 4) against
  // four times a minute lost and a minute's restart.
  const JobId high = h.Submit(Sized(h.spec, "high", "high", 4, 60 * kMin), 11 * kMin);
  h.RunUntil(11 * kMin);
  EXPECT_EQ(h.engine->job(high).state, JobState::kRunning);
  EXPECT_EQ(Preempted(h).size(), 4u);
  EXPECT_EQ(h.engine->job(normal).state, JobState::kPending);
}

TEST(PreemptionGuard, AJobGainsNoMoreThanJobsOfItsClassAndSizeWaitedOrThanItWaitedAlready) {
  Harness h("fifo", /*backfill=*/true, testing::kEngineFleet);  // minRunTime 0 here
  // 12 low runs and 4 high runs of one device each, 100 minutes long: the high ones start at
  // once (jobs of their class and size wait nothing).
  for (int k = 0; k < 12; ++k)
    h.Submit(Sized(h.spec, "low" + std::to_string(k), "low", 1, 100 * kMin, 5 * kMin), 0);
  for (int k = 0; k < 4; ++k)
    h.Submit(Sized(h.spec, "high" + std::to_string(k), "high", 1, 100 * kMin), 0);
  h.RunUntil(0);
  // At 10 minutes one more high job of one device. The running jobs' estimates say it would
  // wait 90 minutes; jobs like it waited nothing, nor has it yet: a minute's restart of one
  // victim is not paid for (break-even 60 s / (7 - 1) = 10 s). It waits.
  const JobId late = h.Submit(Sized(h.spec, "late", "high", 1, 100 * kMin), 10 * kMin);
  h.RunUntil(10 * kMin);
  EXPECT_EQ(h.engine->job(late).state, JobState::kPending);
  EXPECT_TRUE(Preempted(h).empty());
  // Its next search, 30 s later: it has waited 30 s, more than the 15 s that a low run now 30 s
  // past its checkpoint asks (1.5 minutes / 6). One low run is stopped.
  h.RunUntil(10 * kMin + 30 * kSec);
  EXPECT_EQ(h.engine->job(late).state, JobState::kRunning);
  EXPECT_EQ(Preempted(h).size(), 1u);
}

TEST(PreemptionGuard, UnderLasAMixedSetPaysForItsVictimsOfALowerClassOnly) {
  // A normal run of 8 devices that has had more than a device-hour (las's second queue) beside
  // low runs of 8 devices together, all preemptible, 100 minutes long, checkpointing every 5
  // minutes; at 10 minutes a fresh normal job of 16 devices (the first queue) needs them all.
  auto run = [](const std::vector<int32_t>& low_sizes) {
    Harness h("las", /*backfill=*/true, testing::kEngineFleet);  // minRunTime 0 here
    Job served = Sized(h.spec, "served", "normal", 8, 100 * kMin, 5 * kMin);
    served.preemptible = true;
    h.Submit(served, 0);
    for (size_t k = 0; k < low_sizes.size(); ++k)
      h.Submit(Sized(h.spec, "low" + std::to_string(k), "low", low_sizes[k], 100 * kMin, 5 * kMin),
               0);
    h.RunUntil(0);
    const JobId fresh = h.Submit(Sized(h.spec, "fresh", "normal", 16, 60 * kMin), 10 * kMin);
    h.RunUntil(10 * kMin);
    return std::make_pair(h.engine->job(fresh).state, Preempted(h).size());
  };
  // The displaced normal run is the ordering's doing and not billed; each low run costs its
  // restart and its wait again. One low run: 90 minutes x (4 - 1) against a minute.
  EXPECT_EQ(run({8}), std::make_pair(JobState::kRunning, size_t{2}));
  // Three: 90 minutes x (4 - 3) against three (were the normal run billed too, 4 - 4: never).
  EXPECT_EQ(run({3, 3, 2}), std::make_pair(JobState::kRunning, size_t{4}));
  // Four low runs outweigh a normal job (4 - 4), and the normal run alone makes no room.
  // Nothing is stopped.
  EXPECT_EQ(run({2, 2, 2, 2}), std::make_pair(JobState::kPending, size_t{0}));
}

TEST(PreemptionGuard, UnderLasADisplacementOfSeveralRunsPaysForWhatTheirStopsWaste) {
  // Two normal runs of 8 devices, preemptible, 20 minutes long: by 14 minutes each has had more
  // than a device-hour (las's second queue). Then a fresh normal job (the first queue) of
  // `size` devices arrives at `at`.
  auto run = [](int32_t size, Millis checkpoint, TimeMs at) {
    Harness h("las", /*backfill=*/true, testing::kEngineFleet);  // minRunTime 0 here
    for (const char* name : {"a", "b"}) {
      Job served = Sized(h.spec, name, "normal", 8, 20 * kMin, checkpoint);
      served.preemptible = true;
      h.Submit(served, 0);
    }
    h.RunUntil(0);
    const JobId fresh = h.Submit(Sized(h.spec, "fresh", "normal", size, 60 * kMin), at);
    h.RunUntil(at);
    return std::make_pair(h.engine->job(fresh).state, Preempted(h).size());
  };
  // One run displaced for one job is the ordering's swap: not billed, whatever it loses.
  EXPECT_EQ(run(8, 0, 14 * kMin), std::make_pair(JobState::kRunning, size_t{1}));
  // Two runs without checkpoints would lose 14 + 1 minutes each: 30 job-minutes against the 6
  // it would wait for their ends. It waits.
  EXPECT_EQ(run(16, 0, 14 * kMin), std::make_pair(JobState::kPending, size_t{0}));
  // Two that saved a checkpoint at 15 minutes lose their restarts only: 2 against 5.
  EXPECT_EQ(run(16, 5 * kMin, 15 * kMin), std::make_pair(JobState::kRunning, size_t{2}));
}

TEST(PreemptionGuard, APreemptionWaitsForTheVictimsCheckpointWhenThatCostsLess) {
  Harness h("fifo", /*backfill=*/true, testing::kEngineFleet);  // minRunTime 0 here
  // 15 devices of normal work, and one low device that checkpoints every 5 minutes.
  h.Submit(Sized(h.spec, "rest", "normal", 15, 100 * kMin), 0);
  const JobId low = h.Submit(Sized(h.spec, "low", "low", 1, 100 * kMin, 5 * kMin), 0);
  h.RunUntil(0);
  // At 9 minutes a one-device normal job, which would wait 91 minutes: the preemption pays
  // (91 x 3 against 4 + 1), but stopping the low run now loses 4 minutes of its device,
  // waiting costs the newcomer's one device a minute. It waits for the checkpoint.
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
