// Scenario tests of the queue's governance (docs/queueing.md): quotas with borrowing and
// reclaim, a tenant at its limit, and preemption that takes the cheapest victims and never a
// higher class. Each narrates the expected state as events arrive; the worked examples of
// docs/queueing.md are these scenarios.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/engine.h"
#include "engine/engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::MakeJob;

using testing::kMin;
using testing::kSec;

// 8 G1 in two nodes; org guarantees 8, its projects a and b 4 each; a may borrow, b lends.
const std::string kTwoTeams = testing::G1Fleet(
    "      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}\n",
    R"(tenants:
  - name: org
    quotas: {G1: {guaranteed: 8}}
    children:
      - name: a
        quotas: {G1: {guaranteed: 4, limit: 6}}
      - name: b
        quotas: {G1: {guaranteed: 4}}
)");

Job TenantJob(const Harness& h, const std::string& name, const std::string& tenant, int32_t tasks,
              Millis runtime) {
  Job j = MakeJob(h.spec, name, tasks, runtime);
  j.tenant = *h.spec.FindTenant(tenant);
  j.preemptible = true;
  return j;
}

std::vector<std::string> Preemptions(const Harness& h) {
  std::vector<std::string> lines;
  for (const Decision& d : h.store.decisions()) {
    if (d.kind == DecisionKind::kPreempt)
      lines.push_back(h.engine->job(d.job).job.name + " " + d.reason);
  }
  return lines;
}

TEST(Governance, BorrowedCapacityIsReclaimedWhenItsOwnerNeedsIt) {
  Harness h("fifo", /*backfill=*/true, kTwoTeams);
  const TenantId a = *h.spec.FindTenant("org/a");
  // a asks for 7 one-device jobs; b is idle and lends its 4. a's limit is 6: the 7th waits
  // with the quota as its reason, never silently.
  std::vector<JobId> as;
  for (int i = 0; i < 7; ++i)
    as.push_back(h.Submit(TenantJob(h, "a" + std::to_string(i), "org/a", 1, 1000 * kSec), i));
  h.RunUntil(10 * kSec);
  EXPECT_EQ(h.engine->quotas().usage(a, 0), 6000);
  EXPECT_EQ(h.engine->job(as[6]).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(as[6]).reason, PendingReason::kQuota);
  EXPECT_EQ(h.engine->job(as[6]).detail, "org/a: limit 6 G1 reached");
  // a4 and a5 run on b's lent devices: they are borrowing.
  EXPECT_FALSE(h.engine->job(as[0]).borrowing);
  EXPECT_TRUE(h.engine->job(as[4]).borrowing);
  EXPECT_TRUE(h.engine->job(as[5]).borrowing);
  // The first four asked within a's guarantee (4), the others beyond it.
  for (int i = 0; i < 7; ++i)
    EXPECT_EQ(h.engine->job(as[i]).asked_within_guarantee, i < 4) << i;

  // b comes back for 3 devices: 2 are free, and 1 more is reclaimed from a's borrowed jobs —
  // the one that loses the least work (the youngest, a5), not a job within a's guarantee —
  // once b has queued scheduler.reclaimAfter (5 minutes by default) without a borrowed run
  // ending.
  JobId b = h.Submit(TenantJob(h, "b0", "org/b", 3, 100 * kSec), 20 * kSec);
  h.RunUntil(320 * kSec - 1);
  EXPECT_EQ(h.engine->job(b).state, JobState::kPending);
  EXPECT_TRUE(Preemptions(h).empty());
  h.RunUntil(320 * kSec);
  ASSERT_EQ(h.engine->job(b).state, JobState::kRunning);
  EXPECT_TRUE(h.engine->job(b).asked_within_guarantee);
  EXPECT_EQ(Preemptions(h), std::vector<std::string>{"a5 preempted-by:b0 quota-reclaim"});
  EXPECT_EQ(h.engine->job(as[5]).state, JobState::kPending);
  EXPECT_EQ(h.engine->quotas().usage(a, 0), 5000);
  EXPECT_EQ(h.engine->quotas().usage(*h.spec.FindTenant("org/b"), 0), 3000);
  EXPECT_EQ(h.engine->allocated_milli(), 8000);

  // When b finishes, a borrows again, up to its limit.
  h.Finish(b, 420 * kSec);
  h.RunUntil(420 * kSec);
  EXPECT_EQ(h.engine->quotas().usage(a, 0), 6000);
  EXPECT_EQ(h.engine->job(as[5]).state, JobState::kRunning);
}

// Two models in one cluster: F (fast, b's guarantee) and S (a's). a may borrow F from b.
const std::string kGovernanceTwoModels = R"(deviceModels:
  - {name: F, kind: gpu, vendor: nvidia, memory: 80Gi, speed: 2.0}
  - {name: S, kind: gpu, vendor: nvidia, memory: 24Gi}
regions:
  - name: r
clusters:
  - name: c
    region: r
    tier: dedicated
    nodeGroups:
      - {name: f, count: 1, cpu: 64, memory: 512Gi, devices: {model: F, count: 4}}
      - {name: s, count: 1, cpu: 64, memory: 512Gi, devices: {model: S, count: 4}}
tenants:
  - name: org
    quotas: {F: {guaranteed: 4}, S: {guaranteed: 4}}
    children:
      - name: a
        quotas: {S: {guaranteed: 4}, F: {guaranteed: 0, limit: 4}}
      - name: b
        quotas: {F: {guaranteed: 4}}
)";

TEST(Governance, AnAgnosticJobUsesItsOwnGuaranteeBeforeBorrowing) {
  // Left to itself the best-fit placer packs the first node, F's; but F is b's guarantee,
  // which a may only borrow (and lose to reclaim). a's jobs accept any model: the quota is
  // asked before the placer, so the first four run on S, a's own, and none borrows. The fifth
  // finds S full and borrows F.
  Harness h("fifo", /*backfill=*/true, kGovernanceTwoModels);
  const TenantId a = *h.spec.FindTenant("org/a");
  std::vector<JobId> as;
  for (int i = 0; i < 5; ++i) {
    Job j = TenantJob(h, "a" + std::to_string(i), "org/a", 1, 1000 * kSec);
    j.task_groups[0].request.devices.models.clear();  // any model
    as.push_back(h.Submit(j, i));
  }
  h.RunUntil(10 * kSec);
  const size_t f = 0, s = 1;
  EXPECT_EQ(h.engine->quotas().usage(a, s), 4000);
  EXPECT_EQ(h.engine->quotas().usage(a, f), 1000);
  for (int i = 0; i < 4; ++i)
    EXPECT_FALSE(h.engine->job(as[i]).borrowing) << i;
  EXPECT_TRUE(h.engine->job(as[4]).borrowing);
}

// a fills the whole fleet with one-device jobs of class `a_priority`: 4 guaranteed plus 2
// borrowed (its limit), and b's 2 stay free. b asks for its whole guarantee, 4 devices, as one
// gang: 2 free + both borrowed devices, reclaimed. b beyond its guarantee would be borrowing
// from a, which is within its own: b1 waits, and a's borrowers, requeued, take nothing back.
// With `reclaimAfter: 0s`, b reclaims as soon as it asks.
void BWithinItsGuaranteeNeverWaitsForBorrowers(const std::string& a_priority) {
  Harness h("fifo", /*backfill=*/true, kTwoTeams + "scheduler: {reclaimAfter: 0s}\n");
  for (int i = 0; i < 6; ++i) {
    Job j = TenantJob(h, "a" + std::to_string(i), "org/a", 1, 1000 * kSec);
    j.priority = a_priority;
    j.preemptible = a_priority != "high";
    h.Submit(std::move(j), 0);
  }
  h.RunUntil(0);
  ASSERT_EQ(h.engine->quotas().usage(*h.spec.FindTenant("org/a"), 0), 6000);
  JobId b = h.Submit(TenantJob(h, "b0", "org/b", 4, 100 * kSec), 5 * kSec);
  h.RunUntil(5 * kSec);
  ASSERT_EQ(h.engine->job(b).state, JobState::kRunning);
  EXPECT_EQ(Preemptions(h).size(), 2u);
  for (const std::string& p : Preemptions(h))
    EXPECT_NE(p.find("quota-reclaim"), std::string::npos) << p;
  EXPECT_EQ(h.engine->quotas().usage(*h.spec.FindTenant("org/a"), 0), 4000);
  JobId more = h.Submit(TenantJob(h, "b1", "org/b", 1, 100 * kSec), 6 * kSec);
  h.RunUntil(6 * kSec);
  EXPECT_EQ(h.engine->job(more).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(b).state, JobState::kRunning);
  EXPECT_EQ(Preemptions(h).size(), 2u) << ::testing::PrintToString(Preemptions(h));
}

TEST(Governance, ATenantWithinItsGuaranteeNeverWaitsForBorrowers) {
  BWithinItsGuaranteeNeverWaitsForBorrowers("normal");
}

// A guarantee holds against borrowers of a higher class too (Kueue's reclaimWithinCohort: Any),
// non-preemptible ones included; and they, requeued, do not preempt b's run within its
// guarantee by their class (across tenants only borrowed capacity is taken).
TEST(Governance, AGuaranteeIsReclaimedFromBorrowersOfAHigherClass) {
  BWithinItsGuaranteeNeverWaitsForBorrowers("high");
}

TEST(Governance, PreemptionTakesTheCheapestVictimsAndNeverAHigherClass) {
  Harness h("fifo", /*backfill=*/true);  // 16 G1 on 4 nodes, one tenant
  auto job = [&](const std::string& name, const std::string& priority, int32_t tasks,
                 Millis checkpoint) {
    Job j = MakeJob(h.spec, name, tasks, 10000 * kSec);
    j.priority = priority;
    j.preemptible = priority == "low";
    j.checkpoint_interval = checkpoint;
    return j;
  };
  // 8 devices of high-priority work, and three low-priority jobs of 4, 2 and 2 devices that
  // started at 0 s, 100 s and 200 s.
  JobId hi = h.Submit(job("hi", "high", 8, 0), 0);
  JobId old4 = h.Submit(job("old4", "low", 4, 0), 0);
  JobId mid2 = h.Submit(job("mid2", "low", 2, 0), 100 * kSec);
  JobId new2 = h.Submit(job("new2", "low", 2, 0), 200 * kSec);
  h.RunUntil(200 * kSec);
  ASSERT_EQ(h.engine->allocated_milli(), 16000);

  // A normal job of 2 devices at 300 s: the cheapest victim is new2 (100 s of work lost,
  // against 200 s for mid2 and 4 x 300 s for old4). Only new2 goes.
  JobId n2 = h.Submit(job("n2", "normal", 2, 0), 300 * kSec);
  h.RunUntil(300 * kSec);
  ASSERT_EQ(h.engine->job(n2).state, JobState::kRunning);
  EXPECT_EQ(Preemptions(h), std::vector<std::string>{"new2 preempted-by:n2 priority"});
  EXPECT_EQ(h.engine->job(mid2).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(old4).state, JobState::kRunning);

  // A normal job of 10 devices: the low-priority jobs hold only 6, and the high-priority
  // job is never a victim: it waits, and nothing is preempted in vain.
  JobId n10 = h.Submit(job("n10", "normal", 10, 0), 400 * kSec);
  h.RunUntil(400 * kSec);
  EXPECT_EQ(h.engine->job(n10).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(hi).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(old4).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(mid2).state, JobState::kRunning);
  EXPECT_EQ(Preemptions(h).size(), 1u);
  (void)new2;
}

// A preemption frees only models the preemptor's quota admits: x may hold at most 2 G1, and
// holds them; its normal job accepts G1 and G2, and of y's two low-priority runs only the one on
// G2 goes, though the one on G1 is the cheaper victim.
TEST(Governance, APreemptionFreesOnlyModelsThePreemptorsQuotaAdmits) {
  Harness h(
      "fifo", /*backfill=*/true,
      testing::G1G2Fleet(
          "      - {name: f, count: 1, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}\n"
          "      - {name: s, count: 1, cpu: 64, memory: 512Gi, devices: {model: G2, count: 4}}\n",
          R"(tenants:
  - name: x
    quotas: {G1: {limit: 2}}
  - name: y
)"));
  auto job = [&](const std::string& name, const std::string& tenant, const std::string& priority,
                 int32_t tasks, const std::vector<std::string>& models) {
    Job j = MakeJob(h.spec, name, tasks, 10000 * kSec);
    j.tenant = *h.spec.FindTenant(tenant);
    j.priority = priority;
    j.preemptible = priority == "low";
    j.task_groups[0].request.devices.models.clear();
    for (const std::string& m : models)
      j.task_groups[0].request.devices.models.push_back({*h.spec.FindModel(m), 1000});
    return j;
  };
  JobId xg1 = h.Submit(job("x-g1", "x", "high", 2, {"G1"}), 0);
  JobId yg2 = h.Submit(job("y-g2", "y", "low", 4, {"G2"}), 0);
  JobId yg1 = h.Submit(job("y-g1", "y", "low", 2, {"G1"}), 100 * kSec);  // younger: cheaper
  h.RunUntil(100 * kSec);
  ASSERT_EQ(h.engine->allocated_milli(), 8000);
  JobId xn = h.Submit(job("x-n", "x", "normal", 2, {"G1", "G2"}), 200 * kSec);
  h.RunUntil(200 * kSec);
  ASSERT_EQ(h.engine->job(xn).state, JobState::kRunning);
  EXPECT_EQ(Preemptions(h), std::vector<std::string>{"y-g2 preempted-by:x-n priority"});
  EXPECT_EQ(h.engine->job(yg1).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(xg1).state, JobState::kRunning);
  (void)yg2;
}

// The configuration's preemption rules narrow who may preempt whom: training may preempt only
// batch work, and evals may preempt nothing.
TEST(Governance, PreemptionRulesRestrictWhoMayPreemptWhom) {
  const std::string fleet = testing::kEngineFleet + R"(policies:
  - name: training-preempts-batch-only
    kind: preemption
    match: {classes: [training]}
    victimClasses: [batch]
  - name: evals-never-preempt
    kind: preemption
    match: {classes: [eval]}
    allow: false
)";
  Harness h("fifo", /*backfill=*/true, fleet);
  auto job = [&](const std::string& name, WorkloadClass cls, const std::string& priority,
                 int32_t tasks) {
    Job j = MakeJob(h.spec, name, tasks, 10000 * kSec);
    j.job_class = cls;
    j.priority = priority;
    j.preemptible = priority == "low";
    return j;
  };
  // The 16 devices: low-priority batch (8) and low-priority eval (8).
  JobId batch = h.Submit(job("batch", WorkloadClass::kBatch, "low", 8), 0);
  JobId eval = h.Submit(job("eval", WorkloadClass::kEval, "low", 8), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->allocated_milli(), 16000);

  // High-priority training of 8: only the batch job is a victim class.
  JobId t1 = h.Submit(job("t1", WorkloadClass::kTraining, "high", 8), 10 * kSec);
  h.RunUntil(10 * kSec);
  ASSERT_EQ(h.engine->job(t1).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(batch).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(eval).state, JobState::kRunning);
  // The rule's grace period, 30 s by default, is in the log.
  EXPECT_EQ(Preemptions(h), std::vector<std::string>{"batch preempted-by:t1 priority grace 30s"});

  // A second training job would need the eval's devices: not a victim class, so it waits.
  JobId t2 = h.Submit(job("t2", WorkloadClass::kTraining, "high", 8), 20 * kSec);
  // A high-priority eval may not preempt at all, though the low eval is below it.
  JobId e2 = h.Submit(job("e2", WorkloadClass::kEval, "high", 8), 30 * kSec);
  h.RunUntil(30 * kSec);
  EXPECT_EQ(h.engine->job(t2).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(e2).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(eval).state, JobState::kRunning);
  EXPECT_EQ(Preemptions(h).size(), 1u);
}

TEST(Governance, AGracePeriodLetsTheVictimCheckpointAndDelaysThePreemptor) {
  // A batch job (16 devices, checkpoints every 10 minutes) has run 25 minutes when high-priority
  // training arrives and preempts it. Without a rule it stops at once and loses the 5 minutes
  // since its last checkpoint; the training starts at once. Under a rule with a 5-minute grace
  // period it checkpoints on the signal and loses nothing; the training's processes start when
  // the grace period is over.
  const std::string with_rule = testing::kEngineFleet + R"(policies:
  - name: training-preempts-gently
    kind: preemption
    match: {classes: [training]}
    gracePeriod: 5m
)";
  for (const std::string* fleet : {&testing::kEngineFleet, &with_rule}) {
    const bool grace = fleet == &with_rule;
    Harness h("fifo", /*backfill=*/true, *fleet);
    Job batch = MakeJob(h.spec, "batch", 16, 1000 * kMin);
    batch.job_class = WorkloadClass::kBatch;
    batch.priority = "low";
    batch.preemptible = true;
    batch.checkpoint_interval = 10 * kMin;
    JobId b = h.Submit(batch, 0);
    h.RunUntil(0);
    Job training = MakeJob(h.spec, "training", 16, 100 * kMin);
    training.priority = "high";
    JobId t = h.Submit(training, 25 * kMin);
    h.RunUntil(25 * kMin);
    ASSERT_EQ(h.engine->job(t).state, JobState::kRunning) << grace;
    ASSERT_EQ(h.engine->job(b).state, JobState::kPending) << grace;
    const JobRecord& victim = h.engine->job(b);
    EXPECT_EQ(victim.kept_ms, grace ? 25 * kMin : 20 * kMin) << grace;
    EXPECT_EQ(victim.lost_device_ms, grace ? 0.0 : 16.0 * 5 * kMin) << grace;
    EXPECT_EQ(h.engine->job(t).last_start, grace ? 30 * kMin : 25 * kMin) << grace;
    EXPECT_EQ(h.engine->job(t).first_start, grace ? 30 * kMin : 25 * kMin) << grace;
    EXPECT_EQ(Preemptions(h),
              std::vector<std::string>{grace ? "batch preempted-by:training priority grace 5m"
                                             : "batch preempted-by:training priority"});
  }
}

TEST(Governance, APreemptionRuleMayOpenNonPreemptibleVictimsInItsRegionsOnly) {
  // Two regions of one 4-G1 node each. High-priority training may take the devices of
  // low-priority work even when it is not preemptible — in east only.
  const std::string fleet = R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
regions:
  - name: east
  - name: west
clusters:
  - name: e
    region: east
    tier: dedicated
    nodeGroups:
      - {name: n, count: 1, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
  - name: w
    region: west
    tier: dedicated
    nodeGroups:
      - {name: n, count: 1, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
tenants:
  - name: t
policies:
  - name: training-takes-east
    kind: preemption
    match: {classes: [training], minPriority: high}
    victimMaxPriority: low
    victimsPreemptibleOnly: false
    regions: [east]
)";
  auto job = [](const Harness& h, const std::string& name, const std::string& priority,
                WorkloadClass cls) {
    Job j = MakeJob(h.spec, name, 4, 10000 * kSec);
    j.job_class = cls;
    j.priority = priority;
    j.preemptible = false;
    return j;
  };
  Harness h("fifo", /*backfill=*/true, fleet);
  auto cluster = [&](JobId id) {
    const JobRecord& r = h.engine->job(id);
    return r.running() ? h.spec.clusters[h.engine->cell().node(r.placements[0].node).cluster].name
                       : std::string();
  };
  // Two non-preemptible low-priority batch jobs fill both nodes.
  JobId a = h.Submit(job(h, "a", "low", WorkloadClass::kBatch), 0);
  JobId b = h.Submit(job(h, "b", "low", WorkloadClass::kBatch), 0);
  h.RunUntil(0);
  ASSERT_NE(cluster(a), "");
  ASSERT_NE(cluster(b), "");
  const JobId in_east = cluster(a) == "e" ? a : b, in_west = in_east == a ? b : a;
  // High-priority training: the rule opens the non-preemptible job in east.
  JobId t1 = h.Submit(job(h, "t1", "high", WorkloadClass::kTraining), 10 * kSec);
  h.RunUntil(10 * kSec);
  EXPECT_EQ(cluster(t1), "e") << h.engine->job(t1).detail;
  EXPECT_EQ(h.engine->job(in_east).state, JobState::kPending);
  EXPECT_EQ(Preemptions(h), std::vector<std::string>{h.engine->job(in_east).job.name +
                                                     " preempted-by:t1 priority grace 30s"});
  // A second one would need the west job: outside the rule's regions, so it waits.
  JobId t2 = h.Submit(job(h, "t2", "high", WorkloadClass::kTraining), 20 * kSec);
  h.RunUntil(20 * kSec);
  EXPECT_EQ(h.engine->job(t2).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(in_west).state, JobState::kRunning);
  EXPECT_EQ(Preemptions(h).size(), 1u);

  // The same, but a high-priority eval: no rule matches it, so non-preemptible jobs stay
  // untouchable and it waits.
  Harness other("fifo", /*backfill=*/true, fleet);
  other.Submit(job(other, "a", "low", WorkloadClass::kBatch), 0);
  other.Submit(job(other, "b", "low", WorkloadClass::kBatch), 0);
  JobId ev = other.Submit(job(other, "ev", "high", WorkloadClass::kEval), 10 * kSec);
  other.RunUntil(10 * kSec);
  EXPECT_EQ(other.engine->job(ev).state, JobState::kPending);
  EXPECT_TRUE(Preemptions(other).empty());
}

}  // namespace
}  // namespace tessera
