// Scenario tests of reservations (docs/governance.md#reservations): devices held for a class of
// work stay free of everyone else's non-preemptible work, are lent preemptibly when the rule
// says so and taken back by preemption when an owner needs them, and are never lent when it
// does not.
#include <gtest/gtest.h>

#include <string>

#include "engine/engine.h"
#include "engine/engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::MakeJob;

using testing::kHour;

// One cluster: 2 nodes x 4 G1, 2 nodes x 4 G2. Inference holds 4 G1 (lent preemptibly) and
// 4 G2 (never lent).
const std::string kHeld = testing::G1G2Fleet(
    "      - {name: g1, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}\n"
    "      - {name: g2, count: 2, cpu: 64, memory: 512Gi, devices: {model: G2, count: 4}}\n",
    R"(tenants:
  - name: t
policies:
  - name: hold-g1
    kind: reservation
    match: {classes: [inference]}
    model: G1
    count: 4
    clusters: [c]
    lendPreemptibly: true
  - name: hold-g2
    kind: reservation
    match: {classes: [inference]}
    model: G2
    count: 4
    lendPreemptibly: false
)");

class Reservations : public ::testing::Test {
 protected:
  Reservations() : h("fifo", /*backfill=*/true, kHeld) {}

  // One task of one device of `model`, of the class, normal priority.
  Job Task(const std::string& name, const std::string& model, WorkloadClass cls, bool preemptible) {
    Job j = MakeJob(h.spec, name, 1, 10 * kHour);
    j.job_class = cls;
    j.preemptible = preemptible;
    j.task_groups[0].request.devices.models = {{*h.spec.FindModel(model), 1000}};
    return j;
  }
  int Running() const {
    int n = 0;
    for (size_t i = 0; i < h.engine->job_count(); ++i)
      n += h.engine->job(JobId(static_cast<uint32_t>(i))).running();
    return n;
  }

  Harness h;
};

TEST_F(Reservations, NonPreemptibleWorkStaysOffHeldDevices) {
  // 8 G1, 4 held for inference: four non-preemptible batch jobs start, the fifth waits and
  // says which reservation holds the rest — though four G1 are free.
  for (int i = 0; i < 5; ++i)
    h.Submit(Task("batch" + std::to_string(i), "G1", WorkloadClass::kBatch, false), 0);
  h.RunUntil(0);
  EXPECT_EQ(Running(), 4);
  const JobRecord& fifth = h.engine->job(JobId(4));
  EXPECT_EQ(fifth.state, JobState::kPending);
  EXPECT_NE(fifth.detail.find("reservation hold-g1: 4 G1 held (0 left to others, more only "
                              "preemptibly)"),
            std::string::npos)
      << fifth.detail;
}

TEST_F(Reservations, PreemptibleWorkBorrowsHeldDevicesAndGivesThemBack) {
  // Four non-preemptible batch jobs take the unheld G1; four preemptible ones borrow the held
  // four. An inference job of the same priority arrives: no priority preemption applies, but
  // the reservation takes a held device back from a borrower ("reservation-reclaim").
  for (int i = 0; i < 4; ++i)
    h.Submit(Task("fixed" + std::to_string(i), "G1", WorkloadClass::kBatch, false), 0);
  for (int i = 0; i < 4; ++i)
    h.Submit(Task("borrow" + std::to_string(i), "G1", WorkloadClass::kBatch, true), 0);
  h.RunUntil(0);
  ASSERT_EQ(Running(), 8);
  JobId serve = h.Submit(Task("serve", "G1", WorkloadClass::kInference, false), 1000);
  h.RunUntil(1000);
  EXPECT_TRUE(h.engine->job(serve).running()) << h.engine->job(serve).detail;
  int preempted = 0;
  for (const Decision& d : h.store.decisions()) {
    if (d.kind != DecisionKind::kPreempt) continue;
    ++preempted;
    EXPECT_EQ(h.engine->job(d.job).job.name.rfind("borrow", 0), 0u) << d.reason;
    EXPECT_NE(d.reason.find("preempted-by:serve reservation-reclaim"), std::string::npos)
        << d.reason;
  }
  EXPECT_EQ(preempted, 1);
}

TEST_F(Reservations, OwnersMayUseEveryDeviceNotOnlyTheHeldOnes) {
  for (int i = 0; i < 8; ++i)
    h.Submit(Task("serve" + std::to_string(i), "G1", WorkloadClass::kInference, false), 0);
  h.RunUntil(0);
  EXPECT_EQ(Running(), 8);
}

TEST_F(Reservations, AHoldThatIsNotLentStaysEmptyEvenForPreemptibleWork) {
  // hold-g2 lends nothing: of 8 G2 only 4 go to preemptible batch jobs; an inference job then
  // starts at once on a held G2 without preempting anyone.
  for (int i = 0; i < 6; ++i)
    h.Submit(Task("batch" + std::to_string(i), "G2", WorkloadClass::kBatch, true), 0);
  h.RunUntil(0);
  EXPECT_EQ(Running(), 4);
  EXPECT_NE(h.engine->job(JobId(5)).detail.find("reservation hold-g2: 4 G2 held (0 left to "
                                                "others)"),
            std::string::npos)
      << h.engine->job(JobId(5)).detail;
  JobId serve = h.Submit(Task("serve", "G2", WorkloadClass::kInference, false), 1000);
  h.RunUntil(1000);
  EXPECT_TRUE(h.engine->job(serve).running());
  EXPECT_EQ(h.engine->counters().preemptions, 0);
}

TEST(ReservationReclaim, AVictimPutBackMayNotBreakTheHold) {
  // 2 nodes x 4 G1; inference holds 4 (others' non-preemptible usage at most 4). b borrows
  // (guarantee 0) with a non-preemptible 4-device job — at the hold's limit; an inference
  // job takes one device of the other node. a, within its guarantee, asks for 2: the hold
  // refuses, so a reclaims from b. With b's job released the best fit is the other node's 3
  // free devices, so b's job is not on a's nodes — but putting it back would bring others'
  // usage to 6 of 4: it stays preempted, and the hold holds.
  Harness h(
      "fifo", /*backfill=*/true,
      testing::G1Fleet(
          R"(      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
)",
          R"(tenants:
  - name: org
    quotas: {G1: {guaranteed: 8}}
    children:
      - {name: a, quotas: {G1: {guaranteed: 6}}}
      - {name: b, quotas: {G1: {guaranteed: 0}}}
policies:
  - name: hold-g1
    kind: reservation
    match: {classes: [inference]}
    model: G1
    count: 4
    lendPreemptibly: true
scheduler: {reclaimAfter: 0s}
)"));
  auto job = [&](const std::string& name, const std::string& tenant, int32_t tasks,
                 WorkloadClass cls) {
    Job j = MakeJob(h.spec, name, tasks, 10 * kHour);
    j.tenant = *h.spec.FindTenant(tenant);
    j.job_class = cls;
    j.preemptible = false;
    return j;
  };
  JobId b = h.Submit(job("b4", "org/b", 4, WorkloadClass::kTraining), 0);
  h.RunUntil(0);
  JobId serve = h.Submit(job("serve", "org", 1, WorkloadClass::kInference), 1000);
  h.RunUntil(1000);
  ASSERT_TRUE(h.engine->job(b).running());
  ASSERT_TRUE(h.engine->job(serve).running());
  JobId a = h.Submit(job("a2", "org/a", 2, WorkloadClass::kTraining), 2000);
  h.RunUntil(2000);
  ASSERT_TRUE(h.engine->job(a).running()) << h.engine->job(a).detail;
  EXPECT_EQ(h.engine->job(a).placements[0].node, h.engine->job(serve).placements[0].node);
  EXPECT_EQ(h.engine->job(b).state, JobState::kPending);
  // Others' non-preemptible G1: a's 2 (b's 4 gone) — within the 4 the hold allows.
  Milli others = 0;
  for (JobId id : {a, b})
    if (h.engine->job(id).running()) others += h.engine->job(id).device_milli;
  EXPECT_LE(others, 4000);
}

}  // namespace
}  // namespace tessera
