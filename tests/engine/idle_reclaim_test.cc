// Scenario tests of idle reclaim (docs/governance.md#idle-reclaim): a run whose devices report
// utilization below its rule's threshold for the rule's time is requeued behind the waiting
// work (preempt), its owner told once (notify), or — a service replica — removed (shrink); a
// busy report in between restarts the clock.
#include <gtest/gtest.h>

#include <string>

#include "engine/engine.h"
#include "engine/engine_testutil.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::MakeJob;

constexpr TimeMs kMinute = 60 * 1000;

// One node of 4 G1; notebooks are requeued after 30 min below 2%, replicas shrunk after
// 10 min, anything else noticed after 2 h below 5%.
const std::string kIdleFleet = testing::G1Fleet(
    "      - {name: n, count: 1, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}\n",
    R"(tenants:
  - name: t
policies:
  - name: reclaim-idle-notebooks
    kind: idleReclaim
    match: {labels: {workload: notebook}}
    after: 30m
    utilizationBelow: 0.02
    action: preempt
  - name: shrink-idle-replicas
    kind: idleReclaim
    match: {classes: [inference]}
    after: 10m
    action: shrink
  - name: notify-idle
    kind: idleReclaim
    after: 2h
    action: notify
)");

class IdleReclaim : public ::testing::Test {
 protected:
  IdleReclaim() : h("fifo", /*backfill=*/true, kIdleFleet) {}

  // The decisions about `job` of `kind`, in order.
  std::vector<Decision> Decisions(JobId job, DecisionKind kind) const {
    std::vector<Decision> out;
    for (const Decision& d : h.store.decisions())
      if (d.job == job && d.kind == kind) out.push_back(d);
    return out;
  }
  void Report(JobId job, Milli utilization, TimeMs at) {
    h.engine->ReportUtilization(job, h.engine->job(job).generation, utilization, at);
  }

  Harness h;
};

TEST_F(IdleReclaim, AnIdleNotebookIsRequeuedBehindTheJobWaitingForItsDevices) {
  // A notebook holds all 4 G1 from 0; a batch job asking for 4 arrives at 1 min and waits.
  // The notebook goes idle at 10 min: at 39 min it still runs, at 40 min it is requeued and
  // the batch job starts; the notebook, now behind it, waits.
  Job nb = MakeJob(h.spec, "nb", 4, 10 * 60 * kMinute);
  nb.labels["workload"] = "notebook";
  JobId notebook = h.Submit(nb, 0);
  JobId batch = h.Submit(MakeJob(h.spec, "batch", 4, 60 * kMinute), kMinute);
  h.RunUntil(kMinute);
  ASSERT_TRUE(h.engine->job(notebook).running());
  Report(notebook, 10, 10 * kMinute);  // 1%: below the rule's 2%
  h.RunUntil(39 * kMinute);
  EXPECT_TRUE(h.engine->job(notebook).running());
  EXPECT_FALSE(h.engine->job(batch).running());
  h.RunUntil(40 * kMinute);
  EXPECT_FALSE(h.engine->job(notebook).running());
  // It waits for the devices the batch job now holds.
  EXPECT_EQ(h.engine->job(notebook).reason, PendingReason::kResources);
  EXPECT_EQ(h.engine->job(notebook).restarts, 1);
  EXPECT_TRUE(h.engine->job(batch).running());
  std::vector<Decision> requeued = Decisions(notebook, DecisionKind::kRequeue);
  ASSERT_EQ(requeued.size(), 1u);
  EXPECT_EQ(requeued[0].time, 40 * kMinute);
  EXPECT_EQ(requeued[0].reason.rfind("idle-reclaim:reclaim-idle-notebooks", 0), 0u)
      << requeued[0].reason;
  // When the batch job ends, the notebook runs again, its idle clock reset.
  h.Finish(batch, 100 * kMinute);
  h.RunUntil(100 * kMinute);
  EXPECT_TRUE(h.engine->job(notebook).running());
  EXPECT_FALSE(h.engine->job(notebook).idle_since.has_value());
}

TEST_F(IdleReclaim, ABusyReportRestartsTheClock) {
  Job nb = MakeJob(h.spec, "nb", 4, 10 * 60 * kMinute);
  nb.labels["workload"] = "notebook";
  JobId notebook = h.Submit(nb, 0);
  h.RunUntil(0);
  Report(notebook, 0, 0);
  Report(notebook, 500, 20 * kMinute);  // busy again before the 30 minutes
  Report(notebook, 0, 25 * kMinute);    // idle from 25 min: due at 55 min, not 30
  h.RunUntil(54 * kMinute);
  EXPECT_TRUE(Decisions(notebook, DecisionKind::kRequeue).empty());
  h.RunUntil(55 * kMinute);
  std::vector<Decision> requeued = Decisions(notebook, DecisionKind::kRequeue);
  ASSERT_EQ(requeued.size(), 1u);
  EXPECT_EQ(requeued[0].time, 55 * kMinute);
  // Nothing waits for its devices: it starts again at once, a new run that is not idle.
  EXPECT_TRUE(h.engine->job(notebook).running());
  EXPECT_EQ(Decisions(notebook, DecisionKind::kStart).size(), 2u);
}

TEST_F(IdleReclaim, OtherWorkIsNoticedOnceAndKeepsRunning) {
  JobId train = h.Submit(MakeJob(h.spec, "train", 2, 10 * 60 * kMinute), 0);
  h.RunUntil(0);
  Report(train, 30, 0);  // 3%: below the default 5%
  Report(train, 0, 60 * kMinute);
  h.RunUntil(5 * 60 * kMinute);
  EXPECT_TRUE(h.engine->job(train).running());
  std::vector<Decision> notices = Decisions(train, DecisionKind::kIdle);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].time, 2 * 60 * kMinute);
  EXPECT_EQ(notices[0].reason.rfind("idle-reclaim:notify-idle utilization below 5% for 2h", 0), 0u)
      << notices[0].reason;
}

TEST_F(IdleReclaim, AnIdleReplicaIsShrunkAndAnIdleReportOfAnOlderRunIsIgnored) {
  Job replica = MakeJob(h.spec, "chat/r0", 1, 10 * 60 * kMinute);
  replica.job_class = WorkloadClass::kInference;
  replica.labels[kServiceLabel] = "chat";
  JobId r0 = h.Submit(replica, 0);
  h.RunUntil(0);
  // A report for another run (generation) changes nothing.
  h.engine->ReportUtilization(r0, h.engine->job(r0).generation + 1, 0, 0);
  h.RunUntil(30 * kMinute);
  EXPECT_TRUE(h.engine->job(r0).running());
  Report(r0, 0, 30 * kMinute);
  h.RunUntil(40 * kMinute);
  EXPECT_EQ(h.engine->job(r0).state, JobState::kCancelled);
  std::vector<Decision> cancelled = Decisions(r0, DecisionKind::kCancel);
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_NE(cancelled[0].reason.find("(shrink)"), std::string::npos) << cancelled[0].reason;
}

}  // namespace
}  // namespace tessera
