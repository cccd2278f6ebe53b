// Scenario tests of the heterogeneity-aware ordering (`hetero`) against the agnostic `las`,
// on a fleet of two models: node f0 with 4 fast G1, node s0 with 4 slow G2.
#include <gtest/gtest.h>

#include <map>

#include "engine/engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;

using testing::kSec;

const char* const kHeteroTwoModels = R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
  - {name: G2, kind: gpu, vendor: nvidia, memory: 40Gi}
regions:
  - name: r
clusters:
  - name: c
    region: r
    tier: dedicated
    nodeGroups:
      - {name: f, count: 1, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
      - {name: s, count: 1, cpu: 64, memory: 512Gi, devices: {model: G2, count: 4}}
tenants:
  - name: t
)";

// `tasks` one-device tasks that run at `g1` on a G1 and `g2` on a G2 (milli; 0 = not at all).
Job SpeedJob(const Spec& spec, const std::string& name, int32_t tasks, Milli g1, Milli g2,
             Millis runtime) {
  Job job = testing::MakeJob(spec, name, tasks, runtime);
  auto& models = job.task_groups[0].request.devices.models;
  models.clear();
  if (g1 > 0) models.push_back({*spec.FindModel("G1"), g1});
  if (g2 > 0) models.push_back({*spec.FindModel("G2"), g2});
  job.preemptible = true;
  job.checkpoint_interval = 60 * kSec;
  return job;
}

// The device models a job's current run uses, by name.
std::map<std::string, int> ModelsOf(const Harness& h, JobId id) {
  std::map<std::string, int> used;
  for (const Placement& p : h.engine->job(id).placements) {
    for (const DeviceUse& u : p.devices) {
      uint16_t m = h.engine->cell().devices(p.node)[u.index].model;
      ++used[h.spec.model(DeviceModelId(m)).name];
    }
  }
  return used;
}

TEST(HeteroScenario, AJobMovesToTheFasterModelWhenItFrees) {
  Harness h("hetero", true, kHeteroTwoModels);
  JobId a = h.Submit(SpeedJob(h.spec, "a", 4, 1000, 250, 100 * kSec), 0);
  JobId b = h.Submit(SpeedJob(h.spec, "b", 4, 1000, 250, 10000 * kSec), 1 * kSec);
  h.RunUntil(1 * kSec);
  // A took the fast node; B found it full and runs on the slow one rather than wait.
  EXPECT_EQ(ModelsOf(h, a), (std::map<std::string, int>{{"G1", 4}}));
  EXPECT_EQ(ModelsOf(h, b), (std::map<std::string, int>{{"G2", 4}}));

  // A ends at 100 s: the G1s would stand idle, so B moves there (4x faster), restarting
  // from its checkpoint at 61 s.
  h.Finish(a, 100 * kSec);
  h.RunUntil(100 * kSec);
  EXPECT_EQ(ModelsOf(h, b), (std::map<std::string, int>{{"G1", 4}}));
  EXPECT_EQ(h.engine->job(b).restarts, 1);
  EXPECT_EQ(h.engine->job(b).preemptions, 0);
  EXPECT_EQ(h.engine->counters().migrations, 1u);
  const Decision& moved = h.store.decisions()[h.store.decisions().size() - 2];
  EXPECT_EQ(moved.kind, DecisionKind::kMigrate);
  EXPECT_EQ(moved.reason, "faster-model:G1 x4.00");
  EXPECT_EQ(h.store.decisions().back().reason, "migrate");
}

TEST(HeteroScenario, AgnosticLasLeavesTheJobOnTheSlowModel) {
  Harness h("las", true, kHeteroTwoModels);
  JobId a = h.Submit(SpeedJob(h.spec, "a", 4, 1000, 250, 100 * kSec), 0);
  JobId b = h.Submit(SpeedJob(h.spec, "b", 4, 1000, 250, 10000 * kSec), 1 * kSec);
  h.RunUntil(1 * kSec);
  std::map<std::string, int> before = ModelsOf(h, b);
  h.Finish(a, 100 * kSec);
  h.RunUntil(100 * kSec);
  EXPECT_EQ(ModelsOf(h, b), before);
  EXPECT_EQ(h.engine->counters().migrations, 0u);
}

TEST(HeteroScenario, UnderContentionEachJobTakesTheModelWhereItIsRelativelyBest) {
  Harness h("hetero", true, kHeteroTwoModels);
  // Three 4-device jobs arrive together for 8 devices. X loses little on a G2 (0.9), Y a
  // lot (0.1); Z waits. The jobs' mean G2 speed is 0.5: X is 1.8x its peers there, so it
  // takes the G2s even though it comes first and a G1 is faster for it, and Y gets the G1s.
  JobId x = h.Submit(SpeedJob(h.spec, "x", 4, 1000, 900, 1000 * kSec), 0);
  JobId y = h.Submit(SpeedJob(h.spec, "y", 4, 1000, 100, 1000 * kSec), 0);
  JobId z = h.Submit(SpeedJob(h.spec, "z", 4, 1000, 500, 1000 * kSec), 0);
  h.RunUntil(0);
  EXPECT_EQ(ModelsOf(h, x), (std::map<std::string, int>{{"G2", 4}}));
  EXPECT_EQ(ModelsOf(h, y), (std::map<std::string, int>{{"G1", 4}}));
  EXPECT_EQ(h.engine->job(z).state, JobState::kPending);
}

TEST(HeteroScenario, AGangThatFitsOneModelWaitsForItInsteadOfMixingModels) {
  for (const char* ordering : {"hetero", "las"}) {
    SCOPED_TRACE(ordering);
    Harness h(ordering, true, kHeteroTwoModels);
    // Two devices stay busy on each node.
    h.Submit(SpeedJob(h.spec, "g1-only", 2, 1000, 0, 1000 * kSec), 0);
    h.Submit(SpeedJob(h.spec, "g2-only", 2, 0, 1000, 1000 * kSec), 0);
    h.RunUntil(0);
    // A 4-gang fits on 2 G1 + 2 G2, at the slow model's pace.
    JobId gang = h.Submit(SpeedJob(h.spec, "gang", 4, 1000, 250, 100 * kSec), 1 * kSec);
    h.RunUntil(1 * kSec);
    if (std::string(ordering) == "hetero") {
      EXPECT_EQ(h.engine->job(gang).state, JobState::kPending);
      EXPECT_EQ(h.engine->job(gang).reason, PendingReason::kResources);
    } else {
      // The agnostic policy leaves the models to the packing scorer: it mixes them.
      EXPECT_EQ(ModelsOf(h, gang), (std::map<std::string, int>{{"G1", 2}, {"G2", 2}}));
    }
  }
}

TEST(HeteroScenario, AGangLargerThanAnyOneModelRunsAcrossModels) {
  Harness h("hetero", true, kHeteroTwoModels);
  JobId gang = h.Submit(SpeedJob(h.spec, "wide", 6, 1000, 500, 100 * kSec), 0);
  h.RunUntil(0);
  EXPECT_EQ(ModelsOf(h, gang), (std::map<std::string, int>{{"G1", 4}, {"G2", 2}}));
}

}  // namespace
}  // namespace tessera
