// Scenario tests of cost accounting and budgets (docs/governance.md): what a run costs, a
// tenant whose budget for the day is committed waits with BudgetExceeded until midnight, a
// parent's budget caps its children together, and a burst rule's budget closes the cloud.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::MakeJob;

using testing::kHour;
using testing::kMin;
using testing::kSec;

// ded: 4 nodes x 4 G1 at 10 CNY per device-hour; cloud: elastic, 4 x 4 G1 at 50.
// org (budget 1,500/day) has projects a (1,000/day) and b (no budget of its own); tenant t
// may burst to the cloud after 10 minutes within 300 CNY a day.
const std::string kBudgets = R"(currency: CNY
deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
regions:
  - name: r
clusters:
  - name: ded
    region: r
    tier: dedicated
    prices: {G1: 10}
    nodeGroups:
      - {name: n, count: 4, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
  - name: cloud
    region: r
    tier: elastic
    prices: {G1: 50}
    nodeGroups:
      - {name: n, count: 4, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
tenants:
  - name: org
    budgetPerDay: 1500
    children:
      - {name: a, budgetPerDay: 1000}
      - {name: b}
  - name: t
policies:
  - {name: pin-ded, kind: constrain, match: {labels: {pin: ded}}, allowClusters: [ded]}
  - name: t-bursts
    kind: burst
    match: {tenants: [t]}
    after: 10m
    budgetPerDay: 300
    clusters: [cloud]
)";

class Budgets : public ::testing::Test {
 protected:
  Budgets() : h("fifo", /*backfill=*/true, kBudgets) {}

  // `devices` one-device tasks of the tenant, estimated (and scripted) to run `hours`.
  Job Work(const std::string& name, const std::string& tenant, int32_t devices, int64_t hours) {
    Job j = MakeJob(h.spec, name, devices, hours * kHour);
    j.tenant = *h.spec.FindTenant(tenant);
    return j;
  }
  // Fills ded with four 1-hour jobs of org/b (pinned there: 160 CNY, well within org's budget).
  void FillDed() {
    for (int i = 0; i < 4; ++i) {
      Job filler = Work("filler" + std::to_string(i), "org/b", 4, 1);
      filler.labels["pin"] = "ded";
      h.Submit(filler, 0);
    }
  }
  std::string ClusterOf(JobId id) const {
    const JobRecord& j = h.engine->job(id);
    if (!j.running()) return "";
    return h.spec.clusters[h.engine->cell().node(j.placements.front().node).cluster].name;
  }

  Harness h;
};

TEST_F(Budgets, ARunCostsDeviceHoursTimesThePriceByTenantClusterAndModel) {
  // 4 G1 in ded for 2 hours: 4 x 2 x 10 = 80 CNY, charged to org/a and to org.
  JobId id = h.Submit(Work("train", "org/a", 4, 2), 0);
  h.RunUntil(0);
  ASSERT_TRUE(h.engine->job(id).running());
  h.Finish(id, 2 * kHour);
  h.RunUntil(2 * kHour);
  const CostLedger& ledger = h.engine->ledger();
  EXPECT_EQ(ledger.total(), 80 * kMicroPerUnit);
  EXPECT_EQ(ledger.by_tenant().at("org/a"), 80 * kMicroPerUnit);
  EXPECT_EQ(ledger.by_tenant().at("org"), 80 * kMicroPerUnit);
  EXPECT_EQ(ledger.by_cluster().at("ded"), 80 * kMicroPerUnit);
  EXPECT_EQ(ledger.by_model().at("G1"), 80 * kMicroPerUnit);
  EXPECT_EQ(ledger.budgets().at("org/a").max_day, 80 * kMicroPerUnit);
}

TEST_F(Budgets, ARunPastItsEstimateIsCommittedUntilMidnight) {
  // "long" (4 G1, estimated 2 h: 80 CNY) is still running at 3 h: it keeps spending, so it is
  // committed until midnight (4 x 24 h x 10 = 960 CNY). "small" (4 G1 for 2 h, 80 CNY) then
  // does not fit a's 1,000 a day and waits; when "long" ends at 5 h having spent 200, it starts.
  JobId slow = h.Submit(Work("long", "org/a", 4, 2), 0);
  h.RunUntil(0);
  ASSERT_TRUE(h.engine->job(slow).running());
  JobId small = h.Submit(Work("small", "org/a", 4, 2), 3 * kHour);
  h.RunUntil(3 * kHour);
  const JobRecord& waiting = h.engine->job(small);
  EXPECT_EQ(waiting.reason, PendingReason::kBudget);
  EXPECT_NE(waiting.detail.find("960 CNY committed today"), std::string::npos) << waiting.detail;
  h.Finish(slow, 5 * kHour);
  h.RunUntil(5 * kHour);
  EXPECT_TRUE(h.engine->job(small).running()) << h.engine->job(small).detail;
  h.Finish(small, 7 * kHour);
  h.RunUntil(7 * kHour);
  EXPECT_EQ(h.engine->ledger().budgets().at("org/a").max_day, 280 * kMicroPerUnit);
}

TEST_F(Budgets, ATenantWhoseBudgetIsCommittedWaitsUntilMidnight) {
  // Each job: 4 G1 for an estimated 10 hours = 400 CNY. a's budget is 1,000 a day: two jobs
  // commit 800, the third would bring it to 1,200 and waits — although ded has room. When the
  // first two end at 10:00 they spent exactly 800, so nothing changes; at midnight the budget
  // starts afresh and the third starts.
  JobId one = h.Submit(Work("one", "org/a", 4, 10), 0);
  JobId two = h.Submit(Work("two", "org/a", 4, 10), 0);
  JobId three = h.Submit(Work("three", "org/a", 4, 10), 0);
  h.RunUntil(0);
  EXPECT_EQ(ClusterOf(one), "ded");
  EXPECT_EQ(ClusterOf(two), "ded");
  const JobRecord& waiting = h.engine->job(three);
  EXPECT_EQ(waiting.state, JobState::kPending);
  EXPECT_EQ(waiting.reason, PendingReason::kBudget);
  EXPECT_EQ(PendingReasonCode(waiting.reason), "BudgetExceeded");
  EXPECT_NE(waiting.detail.find("org/a: budget 1000 CNY/day; 800 CNY committed today, this run "
                                "adds 400 CNY"),
            std::string::npos)
      << waiting.detail;
  h.Finish(one, 10 * kHour);
  h.Finish(two, 10 * kHour);
  h.RunUntil(24 * kHour - kSec);
  EXPECT_EQ(h.engine->job(three).reason, PendingReason::kBudget);
  h.RunUntil(24 * kHour);
  EXPECT_TRUE(h.engine->job(three).running()) << h.engine->job(three).detail;
  h.Finish(three, 34 * kHour);
  h.RunUntil(34 * kHour);
  EXPECT_EQ(h.engine->ledger().budgets().at("org/a").max_day, 800 * kMicroPerUnit);
  EXPECT_EQ(h.engine->ledger().budgets().at("org/a").by_day.at(1), 400 * kMicroPerUnit);
}

TEST_F(Budgets, ARunIsAdmittedOnlyIfTomorrowsBudgetHoldsItToo) {
  // "long" (2 G1, estimated 40 h) commits 480 CNY today and 320 tomorrow. At 20:00 "evening"
  // (4 G1 for 28 h) would add 160 today (640 in all: fine) but 960 tomorrow (1,280 of a's
  // 1,000): it waits, naming tomorrow, though ded has room and today's budget would hold it.
  JobId long_run = h.Submit(Work("long", "org/a", 2, 40), 0);
  h.RunUntil(0);
  ASSERT_TRUE(h.engine->job(long_run).running());
  JobId evening = h.Submit(Work("evening", "org/a", 4, 28), 20 * kHour);
  h.RunUntil(20 * kHour);
  const JobRecord& waiting = h.engine->job(evening);
  EXPECT_EQ(waiting.reason, PendingReason::kBudget);
  EXPECT_NE(waiting.detail.find("org/a: budget 1000 CNY/day; 320 CNY committed for tomorrow, "
                                "this run adds 960 CNY"),
            std::string::npos)
      << waiting.detail;
  // A shorter one that ends by 04:00 tomorrow fits both days (160 + 80): it runs.
  JobId shorter = h.Submit(Work("shorter", "org/a", 4, 6), 20 * kHour + kSec);
  h.RunUntil(20 * kHour + kSec);
  EXPECT_TRUE(h.engine->job(shorter).running()) << h.engine->job(shorter).detail;
}

TEST_F(Budgets, AParentsBudgetCapsItsChildrenTogether) {
  // b has no budget of its own, but org's 1,500 covers a and b together: a commits 800, b
  // 400 more (1,200); b's next 400 would bring org to 1,600 and waits, named after org.
  h.Submit(Work("a1", "org/a", 4, 10), 0);
  h.Submit(Work("a2", "org/a", 4, 10), 0);
  JobId b1 = h.Submit(Work("b1", "org/b", 4, 10), 0);
  JobId b2 = h.Submit(Work("b2", "org/b", 4, 10), 0);
  h.RunUntil(0);
  EXPECT_TRUE(h.engine->job(b1).running());
  EXPECT_EQ(h.engine->job(b2).reason, PendingReason::kBudget);
  EXPECT_NE(h.engine->job(b2).detail.find("org: budget 1500 CNY/day; 1200 CNY committed today"),
            std::string::npos)
      << h.engine->job(b2).detail;
}

TEST_F(Budgets, ARunThatEndsEarlyGivesBackWhatItDidNotSpend) {
  // a commits 800 with two 10-hour jobs; one ends after an hour having spent 40, so 440 is
  // committed and the waiting third fits (440 + 400 = 840) on the next cycle.
  JobId one = h.Submit(Work("one", "org/a", 4, 10), 0);
  h.Submit(Work("two", "org/a", 4, 10), 0);
  JobId three = h.Submit(Work("three", "org/a", 4, 10), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(three).reason, PendingReason::kBudget);
  h.Finish(one, kHour);
  h.RunUntil(kHour);
  EXPECT_TRUE(h.engine->job(three).running()) << h.engine->job(three).detail;
}

TEST_F(Budgets, TheBurstBudgetClosesTheCloudOnceSpent) {
  // ded is filled (pinned jobs of org/b, no budget trouble: 16 x 10 x 1h = 160). t's 4-device,
  // 1-hour jobs wait 10 minutes, then burst: one costs 4 x 50 = 200 of the rule's 300 a day.
  // The second would add 200 more: BudgetExceeded, naming the rule's budget for t.
  FillDed();
  JobId first = h.Submit(Work("t1", "t", 4, 1), kSec);
  JobId second = h.Submit(Work("t2", "t", 4, 1), kSec);
  h.RunUntil(10 * kMin + kSec);
  EXPECT_EQ(ClusterOf(first), "cloud") << h.engine->job(first).detail;
  const JobRecord& waiting = h.engine->job(second);
  EXPECT_EQ(waiting.reason, PendingReason::kBudget) << waiting.detail;
  EXPECT_NE(waiting.detail.find("burst:t-bursts:t: budget 300 CNY/day; 200 CNY committed today, "
                                "this run adds 200 CNY"),
            std::string::npos)
      << waiting.detail;
}

TEST_F(Budgets, ASpentBurstBudgetIsWhyTheCloudIsPassedOver) {
  // With one 6-device job t's 300 are committed in full (6 x 50 x 1h): the cloud is closed to
  // t's next job, which the placement explains cluster by cluster.
  FillDed();
  JobId first = h.Submit(Work("t1", "t", 6, 1), kSec);
  JobId second = h.Submit(Work("t2", "t", 2, 1), kSec);
  h.RunUntil(10 * kMin + kSec);
  EXPECT_EQ(ClusterOf(first), "cloud") << h.engine->job(first).detail;
  const JobRecord& waiting = h.engine->job(second);
  EXPECT_EQ(waiting.state, JobState::kPending);
  EXPECT_NE(waiting.detail.find("cloud: BudgetExceeded (burst rule t-bursts: 300 CNY/day "
                                "committed for t today)"),
            std::string::npos)
      << waiting.detail;
}

// The same fleet with a second, slower model: S runs every class at half the reference speed.
const std::string kSlowModel = R"(currency: CNY
deviceModels:
  - {name: S, kind: gpu, vendor: nvidia, memory: 24Gi, speed: 0.5}
regions:
  - name: r
clusters:
  - name: old
    region: r
    tier: dedicated
    prices: {S: 10}
    nodeGroups:
      - {name: n, count: 4, cpu: 64, memory: 512Gi, devices: {model: S, count: 4}}
tenants:
  - {name: a, budgetPerDay: 1000}
)";

TEST(BudgetProjection, ARunOnASlowerModelIsCommittedForItsLongerRun) {
  // Each job: 4 S for an estimated 6 hours on the reference device; S runs at half its speed,
  // so a run takes 12 hours and commits 4 x 12 x 10 = 480 CNY, not 240. Two fit a's 1,000 a
  // day; the third would bring it to 1,440 and waits, though the cluster has room.
  Harness h("fifo", /*backfill=*/true, kSlowModel);
  std::vector<JobId> ids;
  for (int i = 0; i < 3; ++i) {
    Job j = MakeJob(h.spec, "j" + std::to_string(i), 4, 6 * kHour);
    j.task_groups[0].request.devices.models.clear();  // any model: S
    j.tenant = *h.spec.FindTenant("a");
    ids.push_back(h.Submit(j, 0));
  }
  h.RunUntil(0);
  EXPECT_TRUE(h.engine->job(ids[0]).running());
  EXPECT_TRUE(h.engine->job(ids[1]).running());
  const JobRecord& waiting = h.engine->job(ids[2]);
  EXPECT_EQ(waiting.reason, PendingReason::kBudget);
  EXPECT_NE(waiting.detail.find("960 CNY committed today, this run adds 480 CNY"),
            std::string::npos)
      << waiting.detail;
  EXPECT_EQ(h.engine->job(ids[0]).estimated_end, 12 * kHour);
}

}  // namespace
}  // namespace tessera
