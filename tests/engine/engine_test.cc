// Scenario tests of the engine: each narrates the expected state of the queue and the cell as
// events arrive. The backend is a scripted fake that records launches and stops; the tests
// post the finish reports themselves, at the times they choose.
//
// Fleet: one cluster "c" of 4 nodes x 4 G1 (n0..n3), two nodes per leaf switch; tenant "t".
#include "engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>

#include "config/loader.h"
#include "engine/engine_testutil.h"
#include "sched/policy/builtin.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::MakeJob;

using testing::kSec;

TEST(EngineScenario, GangWaitsUntilAllOfItFitsThenStartsWhole) {
  Harness h("fifo", /*backfill=*/false);
  // A takes 12 of the 16 devices.
  JobId a = h.Submit(MakeJob(h.spec, "a", 12, 100 * kSec), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(a).state, JobState::kRunning);
  EXPECT_EQ(h.engine->allocated_milli(), 12000);

  // Gang B needs 8: 4 are free, so not one of its tasks starts.
  JobId b = h.Submit(MakeJob(h.spec, "b", 8, 50 * kSec), 1 * kSec);
  // C needs 2 and would fit, but strict FIFO lets nothing pass B.
  JobId c = h.Submit(MakeJob(h.spec, "c", 2, 10 * kSec), 2 * kSec);
  h.RunUntil(2 * kSec);
  EXPECT_EQ(h.engine->job(b).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(b).reason, PendingReason::kResources);
  EXPECT_TRUE(h.engine->job(b).placements.empty());
  EXPECT_EQ(h.engine->job(c).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(c).reason, PendingReason::kReservation);
  EXPECT_EQ(h.engine->allocated_milli(), 12000) << "no partial gang, nothing passed B";
  EXPECT_EQ(h.backend.launches.size(), 1u);

  // A ends: B starts with all 8 tasks at once, and C behind it.
  h.Finish(a, 100 * kSec);
  h.RunUntil(100 * kSec);
  ASSERT_EQ(h.engine->job(b).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(b).placements.size(), 8u);
  EXPECT_EQ(h.engine->job(b).first_start, 100 * kSec);
  EXPECT_EQ(h.engine->job(c).state, JobState::kRunning);
  EXPECT_EQ(h.engine->allocated_milli(), 10000);
  EXPECT_EQ(h.engine->job(a).state, JobState::kSucceeded);
}

TEST(EngineScenario, BackfillPassesTheHeadGangOnlyWhereItCannotDelayIt) {
  Harness h("fifo", /*backfill=*/true);
  // a1 (6 devices) ends at 100 s, a2 (6 devices) at 1000 s: 4 of 16 are free.
  h.Submit(MakeJob(h.spec, "a1", 6, 100 * kSec), 0);
  h.Submit(MakeJob(h.spec, "a2", 6, 1000 * kSec), 0);
  h.RunUntil(0);
  // Head gang B needs 8: it can start at 100 s (4 free + a1's 6), leaving 2 spare then.
  JobId b = h.Submit(MakeJob(h.spec, "b", 8, 50 * kSec), 1 * kSec);
  // C (2 devices, 10 s) ends long before 100 s: it may pass B.
  JobId c = h.Submit(MakeJob(h.spec, "c", 2, 10 * kSec), 2 * kSec);
  // D (2 devices, 500 s) still runs at 100 s, but fits in the 2 spare devices: it may pass.
  JobId d = h.Submit(MakeJob(h.spec, "d", 2, 500 * kSec), 3 * kSec);
  h.RunUntil(3 * kSec);
  EXPECT_EQ(h.engine->job(b).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(c).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(d).state, JobState::kRunning);
  EXPECT_EQ(h.engine->counters().backfilled, 2u);

  // C ends at 12 s: 2 devices are free again. E (2 devices, 500 s) would fit now, but the
  // spare is taken by D: E would delay B, so it waits with the reservation as its reason.
  h.Finish(c, 12 * kSec);
  JobId e = h.Submit(MakeJob(h.spec, "e", 2, 500 * kSec), 13 * kSec);
  h.RunUntil(13 * kSec);
  EXPECT_EQ(h.engine->job(e).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(e).reason, PendingReason::kReservation);
  EXPECT_EQ(h.engine->job(e).detail, "would delay the reservation of b");
}

TEST(EngineScenario, CancelledJobsFreeEverything) {
  Harness h("fifo", false);
  JobId a = h.Submit(MakeJob(h.spec, "a", 8, 100 * kSec), 0);
  JobId b = h.Submit(MakeJob(h.spec, "b", 16, 100 * kSec), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(a).state, JobState::kRunning);
  ASSERT_EQ(h.engine->job(b).state, JobState::kPending);

  // Cancelling the running job stops it on the backend and returns its 8 devices; the
  // pending gang of 16 still cannot start until... nothing else runs: it starts now.
  h.engine->Cancel(a, 10 * kSec);
  h.RunUntil(10 * kSec);
  EXPECT_EQ(h.engine->job(a).state, JobState::kCancelled);
  EXPECT_EQ(h.backend.stops, std::vector<uint32_t>{a.value()});
  EXPECT_EQ(h.engine->job(b).state, JobState::kRunning);

  // Cancelling the pending-then-running gang empties the cell.
  h.engine->Cancel(b, 20 * kSec);
  h.RunUntil(20 * kSec);
  EXPECT_EQ(h.engine->job(b).state, JobState::kCancelled);
  EXPECT_EQ(h.engine->allocated_milli(), 0);
  EXPECT_EQ(h.FreeMilli(), 16000);
  EXPECT_EQ(h.engine->active_count(), 0u);

  // A job cancelled before it arrives never launches.
  JobId c = h.Submit(MakeJob(h.spec, "c", 1, 10 * kSec), 30 * kSec);
  h.engine->Cancel(c, 25 * kSec);
  h.RunUntil(40 * kSec);
  EXPECT_EQ(h.engine->job(c).state, JobState::kCancelled);
  EXPECT_EQ(h.backend.launches.size(), 2u);
}

TEST(EngineScenario, ALostNodeRequeuesItsJobsWholeAndTheyRestartElsewhere) {
  Harness h("fifo", false);
  // An 8-task gang spans two nodes of one leaf; checkpoints every 30 s.
  Job job = MakeJob(h.spec, "gang", 8, 1000 * kSec);
  job.checkpoint_interval = 30 * kSec;
  JobId g = h.Submit(job, 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(g).state, JobState::kRunning);
  std::set<uint32_t> nodes;
  for (const Placement& p : h.engine->job(g).placements)
    nodes.insert(p.node);
  ASSERT_EQ(nodes.size(), 2u);
  uint32_t lost = *nodes.begin();

  // At 100 s one of its nodes dies: the whole gang (both nodes) is released and requeued,
  // having lost the 10 s since its checkpoint at 90 s; it restarts at once on the two
  // healthy nodes that remain free, never on the lost one.
  h.engine->NodeLost(lost, 100 * kSec);
  h.RunUntil(100 * kSec);
  const JobRecord& r = h.engine->job(g);
  EXPECT_EQ(r.restarts, 1);
  EXPECT_EQ(r.state, JobState::kRunning);
  EXPECT_EQ(r.last_start, 100 * kSec);
  EXPECT_EQ(r.placements.size(), 8u);
  for (const Placement& p : r.placements)
    EXPECT_NE(p.node, lost);
  EXPECT_DOUBLE_EQ(r.lost_device_ms, 10.0 * kSec * 8);
  EXPECT_EQ(r.kept_ms, 90 * kSec);
  EXPECT_FALSE(h.engine->node_up(lost));
  EXPECT_EQ(h.engine->healthy_capacity_milli(), 12000);
  ASSERT_GE(h.store.decisions().size(), 3u);
  const Decision& requeue = h.store.decisions()[1];
  EXPECT_EQ(requeue.kind, DecisionKind::kRequeue);
  EXPECT_EQ(requeue.reason, "node-lost:" + h.engine->cell().node_name(lost));
  EXPECT_EQ(h.backend.stops, std::vector<uint32_t>{g.value()});

  // The node comes back: its capacity counts again.
  h.engine->NodeRecovered(lost, 200 * kSec);
  h.RunUntil(200 * kSec);
  EXPECT_TRUE(h.engine->node_up(lost));
  EXPECT_EQ(h.engine->healthy_capacity_milli(), 16000);
}

TEST(EngineScenario, ARestartedRunReloadsItsCheckpointBeforeItProgresses) {
  Harness h("fifo", false);
  ASSERT_EQ(h.spec.scheduler.restart_cost, 60 * kSec);  // scheduler.restartCost's default
  Job job = MakeJob(h.spec, "gang", 8, 1000 * kSec);
  job.checkpoint_interval = 30 * kSec;
  JobId g = h.Submit(job, 0);
  h.RunUntil(0);
  // The first run loads nothing: it ends when its runtime says.
  EXPECT_EQ(h.engine->job(g).run_overhead, 0);
  EXPECT_EQ(h.engine->job(g).estimated_end, 1000 * kSec);
  uint32_t lost = h.engine->job(g).placements.front().node;
  h.engine->NodeLost(lost, 100 * kSec);
  h.RunUntil(100 * kSec);
  // Restarted at 100 s with 90 s kept: it reloads for a minute, then has 910 s to go.
  const JobRecord& r = h.engine->job(g);
  ASSERT_EQ(r.state, JobState::kRunning);
  EXPECT_EQ(r.run_overhead, 60 * kSec);
  EXPECT_EQ(r.estimated_end, (100 + 60 + 910) * kSec);
  // Lost again at 200 s: it progressed from 160 s, checkpointed at 190 s, and loses the 10 s
  // since; the reload counts as neither progress nor lost work.
  uint32_t again = r.placements.front().node;
  h.engine->NodeLost(again, 200 * kSec);
  h.RunUntil(200 * kSec);
  EXPECT_EQ(h.engine->job(g).kept_ms, (90 + 30) * kSec);
  EXPECT_DOUBLE_EQ(h.engine->job(g).lost_device_ms, (10.0 + 10.0) * kSec * 8);
}

TEST(EngineScenario, LasDemotesTheLongestServedJobForANewcomer) {
  Harness h("las", true);
  // A holds the whole fleet (16 devices) and is preemptible, with 60 s checkpoints.
  Job big = MakeJob(h.spec, "big", 16, 100000 * kSec);
  big.preemptible = true;
  big.checkpoint_interval = 60 * kSec;
  JobId a = h.Submit(big, 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(a).state, JobState::kRunning);

  // After 330 s A has 16 x 330 s = 1.47 device-hours of service: past LAS's first threshold
  // (1 device-hour), so it sits in queue 1. B arrives with none, in queue 0.
  Job small = MakeJob(h.spec, "small", 4, 100 * kSec);
  small.preemptible = true;
  JobId b = h.Submit(small, 330 * kSec);
  h.RunUntil(330 * kSec);
  // The arrival itself is a scheduling event: B (queue 0) displaces A (queue 1), but not at
  // once: stopping A now loses 16 devices x 30 s, waiting for its checkpoint at 360 s costs B's
  // 4 devices 30 s. A is stopped at its checkpoint and loses nothing.
  EXPECT_EQ(h.engine->job(b).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(a).state, JobState::kRunning);
  h.RunUntil(360 * kSec);
  EXPECT_EQ(h.engine->job(b).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(a).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(a).reason, PendingReason::kPreempted);
  EXPECT_EQ(h.engine->job(a).preemptions, 1);
  EXPECT_EQ(h.engine->counters().preemptions, 1u);
  bool logged = false;
  for (const Decision& d : h.store.decisions())
    logged = logged || (d.kind == DecisionKind::kPreempt && d.job == a &&
                        d.reason == "preempted-by:small las");
  EXPECT_TRUE(logged);
  EXPECT_EQ(h.engine->job(a).kept_ms, 360 * kSec);
  EXPECT_DOUBLE_EQ(h.engine->job(a).lost_device_ms, 0.0);

  // B ends: A starts again (restart 1).
  h.Finish(b, 430 * kSec);
  h.RunUntil(430 * kSec);
  EXPECT_EQ(h.engine->job(a).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(a).restarts, 1);
}

TEST(EngineScenario, FifoNeverPreemptsForOrder) {
  Harness h("fifo", true);
  Job big = MakeJob(h.spec, "big", 16, 100000 * kSec);
  big.preemptible = true;
  JobId a = h.Submit(big, 0);
  JobId b = h.Submit(MakeJob(h.spec, "small", 4, 100 * kSec), 300 * kSec);
  h.RunUntil(1000 * kSec);
  EXPECT_EQ(h.engine->job(a).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(b).state, JobState::kPending);
  EXPECT_EQ(h.engine->counters().preemptions, 0u);
}

TEST(EngineScenario, AJobLargerThanTheFleetIsInfeasibleNotRetried) {
  Harness h("fifo", false);
  JobId x = h.Submit(MakeJob(h.spec, "huge", 20, 10 * kSec), 0);
  JobId y = h.Submit(MakeJob(h.spec, "ok", 2, 10 * kSec), 0);
  h.RunUntil(0);
  EXPECT_EQ(h.engine->job(x).reason, PendingReason::kInfeasible);
  EXPECT_FALSE(h.engine->job(x).detail.empty());
  // An infeasible job does not block the queue behind it.
  EXPECT_EQ(h.engine->job(y).state, JobState::kRunning);
}

TEST(EngineScenario, AReportOfAnOlderRunIsIgnored) {
  Harness h("fifo", false);
  Job job = MakeJob(h.spec, "j", 4, 1000 * kSec);
  JobId j = h.Submit(job, 0);
  h.RunUntil(0);
  uint64_t first = h.engine->job(j).generation;
  uint32_t node = h.engine->job(j).placements[0].node;
  h.engine->NodeLost(node, 10 * kSec);
  h.RunUntil(10 * kSec);
  ASSERT_EQ(h.engine->job(j).state, JobState::kRunning);
  ASSERT_NE(h.engine->job(j).generation, first);
  // The first run's finish arrives late: it must not end the second run.
  h.FinishRun(j, first, 20 * kSec);
  h.RunUntil(20 * kSec);
  EXPECT_EQ(h.engine->job(j).state, JobState::kRunning);
}

TEST(EngineScenario, ANodeAddedAtRunTimeTakesWorkAndNoIdChanges) {
  Harness h("fifo", false);
  JobId a = h.Submit(MakeJob(h.spec, "a", 16, 1000 * kSec), 0);
  JobId b = h.Submit(MakeJob(h.spec, "b", 4, 100 * kSec), 1 * kSec);
  h.RunUntil(1 * kSec);
  ASSERT_EQ(h.engine->job(b).state, JobState::kPending);
  std::vector<std::string> names;
  for (uint32_t n = 0; n < h.engine->cell().node_count(); ++n)
    names.push_back(h.engine->cell().node_name(n));

  // A fifth server is registered while the engine runs: it gets index 4, B starts on it.
  Node extra = h.spec.nodes[0];
  extra.name = "late-1";
  h.spec.nodes.push_back(extra);
  Result<uint32_t> added =
      h.engine->AddNode(NodeId(static_cast<uint32_t>(h.spec.nodes.size() - 1)));
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, 4u);
  EXPECT_EQ(h.engine->healthy_capacity_milli(), 20000);
  h.RunUntil(2 * kSec);
  ASSERT_EQ(h.engine->job(b).state, JobState::kRunning);
  for (const Placement& p : h.engine->job(b).placements)
    EXPECT_EQ(p.node, 4u);
  for (uint32_t n = 0; n < names.size(); ++n)
    EXPECT_EQ(h.engine->cell().node_name(n), names[n]) << "an existing index changed";
  EXPECT_EQ(h.engine->job(a).state, JobState::kRunning);

  // The same node twice, or one the spec does not have: an error, nothing changes.
  EXPECT_FALSE(h.engine->AddNode(NodeId(4)).ok());
  EXPECT_FALSE(h.engine->AddNode(NodeId(99)).ok());
  EXPECT_EQ(h.engine->cell().node_count(), 5u);
}

// The engine applies the same hard rules as `tessera place` (sched/constraints.h): a job a
// constrain rule keeps off cluster `a` starts only on `b`, and one every cluster is denied to
// is infeasible with the policy's reason, not retried.
TEST(EngineScenario, ConstrainRulesKeepJobsOffDeniedClusters) {
  const std::string fleet = R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
regions:
  - name: r
  - name: s
clusters:
  - name: a
    region: r
    nodeGroups:
      - {name: na, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
  - name: b
    region: s
    nodeGroups:
      - {name: nb, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
tenants:
  - name: t
policies:
  - {name: not-a, kind: constrain, match: {jobs: [kept]}, denyClusters: [a]}
  - {name: nowhere, kind: constrain, match: {jobs: [banned]}, denyRegions: [r, s]}
)";
  Harness h("fifo", false, fleet);
  JobId kept = h.Submit(MakeJob(h.spec, "kept", 2, 10 * kSec), 0);
  JobId banned = h.Submit(MakeJob(h.spec, "banned", 1, 10 * kSec), 0);
  h.RunUntil(0);
  const JobRecord& k = h.engine->job(kept);
  ASSERT_EQ(k.state, JobState::kRunning);
  for (const Placement& p : k.placements)
    EXPECT_EQ(h.spec.cluster(h.spec.node(h.engine->cell().spec_node(p.node)).cluster).name, "b");
  EXPECT_EQ(h.engine->job(banned).reason, PendingReason::kInfeasible);
  EXPECT_NE(h.engine->job(banned).detail.find("region not allowed by policy"), std::string::npos)
      << h.engine->job(banned).detail;
}

}  // namespace
}  // namespace tessera
