// A job compiled once for every cycle (sched/compile_job.h), on the base fleet
// (tests/testutil/spec_fixture.cc) with an elastic cloud cluster and rules of each kind a
// compilation reads: the gang request and its interned shapes, the models by the job's speed
// on them, signatures that make equal jobs equal, limits that can never admit a job, the
// global request and its pressure, and the burst, idle-reclaim and spread rules.
#include "sched/compile_job.h"

#include <gtest/gtest.h>

#include "sched/cell_state.h"
#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

const char* const kCompileCase = R"(
clusters:
  - name: cloud
    region: east
    tier: elastic
    prices: {H800: 4}
    nodeGroups:
      - {name: spot, count: 2, cpu: 96, memory: 1Ti, devices: {model: H800, count: 8}}
policies:
  - name: burst-prod
    kind: burst
    match: {tenants: [acme/prod]}
    after: 10m
    budgetPerDay: 1000
    clusters: [cloud]
  - name: notebooks
    kind: idleReclaim
    match: {labels: {workload: notebook}}
    after: 30m
    utilizationBelow: 0.02
    action: preempt
  - name: no-spread-for-eval
    kind: weights
    match: {classes: [eval]}
    spread: 0
jobs:
  - {name: mixed, class: training, tenant: acme/research/llm,
     taskGroups: [{count: 2, cpu: 8, memory: 64Gi,
                   devices: {count: 8, models: [{model: Ascend910B, speed: 0.5}, H800]}}]}
  - {name: twin, class: training, tenant: acme/research/llm,
     taskGroups: [{count: 2, cpu: 8, memory: 64Gi,
                   devices: {count: 8, models: [{model: Ascend910B, speed: 0.5}, H800]}}]}
  - {name: huge, class: training, tenant: acme/prod,
     taskGroups: [{count: 5, cpu: 8, memory: 64Gi, devices: {count: 8, models: [H800]}}]}
  - {name: notebook, class: eval, tenant: acme/prod, labels: {workload: notebook},
     taskGroups: [{count: 1, cpu: 4, memory: 16Gi, devices: {count: 1, models: [H800]}}]}
  - {name: etl, class: batch, tenant: acme/research/llm,
     taskGroups: [{count: 3, cpu: 8, memory: 16Gi}]}
)";

class CompileJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadResult r = testing::LoadWithBase(kCompileCase);
    ASSERT_TRUE(r.spec) << r.diagnostics.ToString();
    spec_ = std::make_unique<Spec>(*r.spec);
    auto cell = CellState::FromSpec(*spec_);
    ASSERT_TRUE(cell.ok()) << cell.status().message();
    cell_ = std::make_unique<CellState>(std::move(*cell));
    present_.assign(cell_->model_count(), false);
    for (uint32_t n = 0; n < cell_->node_count(); ++n)
      for (const DeviceSlot& d : cell_->devices(n))
        present_[d.model] = true;
    summaries_ = std::make_unique<ClusterSummaries>(*spec_, *cell_);
    paths_ = ComputeRegionPaths(*spec_);
  }

  const Job& JobNamed(const std::string& name) const {
    for (const Job& j : spec_->jobs)
      if (j.name == name) return j;
    ADD_FAILURE() << "no job " << name;
    return spec_->jobs.front();
  }

  // Compiles as a fleet of several clusters does (`global`) or as one cluster does.
  CompiledJob Compile(const std::string& name, JobStanding standing = {}, bool global = true) {
    if (!standing.limit) standing.limit = [](size_t) { return Milli{-1}; };
    CompileTables tables{*spec_,
                         present_,
                         shapes_,
                         scopes_,
                         constraints_,
                         global ? summaries_.get() : nullptr,
                         global ? &paths_ : nullptr};
    return CompileJob(JobNamed(name), JobId(next_id_++), standing, tables);
  }

  uint16_t Model(const std::string& name) const {
    return static_cast<uint16_t>(spec_->FindModel(name)->value());
  }

  std::unique_ptr<Spec> spec_;
  std::unique_ptr<CellState> cell_;
  std::unique_ptr<ClusterSummaries> summaries_;
  RegionPaths paths_;
  std::vector<bool> present_;
  ShapeTable shapes_;
  ScopeTable scopes_;
  ConstraintsTable constraints_;
  uint32_t next_id_ = 0;
};

TEST_F(CompileJobTest, AGangIsItsGroupsWithTheModelsByItsSpeedOnThem) {
  CompiledJob c = Compile("mixed");
  ASSERT_EQ(c.gang.groups.size(), 1u);
  EXPECT_EQ(c.gang.groups[0].count, 2);
  EXPECT_EQ(c.gang.require, TopologyLevel::kCluster);  // none named: one cluster
  EXPECT_EQ(c.task_count, 2);
  EXPECT_EQ(c.device_milli, 16000);
  const uint16_t h800 = Model("H800"), ascend = Model("Ascend910B");
  EXPECT_EQ(c.mask, (ModelMask{1} << h800) | (ModelMask{1} << ascend));
  ASSERT_EQ(c.by_speed.size(), 2u);
  EXPECT_EQ(c.by_speed[0], h800);  // 1.0 before the Ascend's 0.5
  EXPECT_EQ(c.by_speed[1], ascend);
  EXPECT_EQ(c.speed_of[h800], 1000);
  EXPECT_EQ(c.speed_of[ascend], 500);
  EXPECT_TRUE(c.over_limit.empty());
}

TEST_F(CompileJobTest, EqualJobsShareShapesConstraintsAndSignatureAndPriorityTellsThemApart) {
  JobStanding low;
  low.priority = 10;
  CompiledJob a = Compile("mixed", low), b = Compile("twin", low);
  EXPECT_EQ(a.signature, b.signature);
  EXPECT_EQ(a.gang.groups[0].shape.id, b.gang.groups[0].shape.id);
  ASSERT_TRUE(a.global && b.global);
  EXPECT_EQ(a.global->constraints.get(), b.global->constraints.get());  // one copy
  EXPECT_NE(a.gang.job, b.gang.job);
  JobStanding high = low;
  high.priority = 100;
  EXPECT_NE(Compile("twin", high).signature, a.signature);
  JobStanding holding = low;
  holding.holds = 1;
  EXPECT_NE(Compile("twin", holding).signature, a.signature);
}

TEST_F(CompileJobTest, AJobOverItsTenantsLimitOnEveryModelItAcceptsSaysSo) {
  JobStanding standing;
  standing.limit = [](size_t) { return Milli{32000}; };
  CompiledJob c = Compile("huge", standing);  // 5 x 8 H800 = 40 over a limit of 32
  EXPECT_EQ(c.over_limit, "the job's 40 devices exceed its tenant's limit (32 H800)");
  standing.limit = [](size_t) { return Milli{40000}; };
  EXPECT_TRUE(Compile("huge", standing).over_limit.empty());
  standing.limit = [](size_t) { return Milli{-1}; };  // no limit
  EXPECT_TRUE(Compile("huge", standing).over_limit.empty());
}

TEST_F(CompileJobTest, SeveralClustersGiveAGlobalRequestAndItsPressure) {
  CompiledJob c = Compile("huge");
  ASSERT_TRUE(c.global.has_value());
  // H800 in train (dedicated) and cloud (elastic): the demand presses on both.
  const uint32_t train = spec_->FindCluster("train")->value();
  const uint32_t cloud = spec_->FindCluster("cloud")->value();
  const uint16_t h800 = Model("H800");
  std::vector<std::pair<uint32_t, uint16_t>> want = {{train, h800}, {cloud, h800}};
  EXPECT_EQ(c.pressure_on, want);
  EXPECT_EQ(c.pressure_share, 20000);
  EXPECT_EQ(c.global->pressure_share, 20000);
  ASSERT_NE(c.burst, nullptr);
  EXPECT_EQ(c.burst->name, "burst-prod");
  EXPECT_EQ(Compile("mixed").burst, nullptr);  // research has no burst rule
  CompiledJob one = Compile("huge", {}, /*global=*/false);
  EXPECT_FALSE(one.global.has_value());
  EXPECT_TRUE(one.pressure_on.empty());
  EXPECT_EQ(one.burst, nullptr);
}

TEST_F(CompileJobTest, ACpuOnlyJobAcceptsNoModel) {
  CompiledJob c = Compile("etl");
  EXPECT_EQ(c.mask, 0u);
  EXPECT_TRUE(c.by_speed.empty());
  EXPECT_EQ(c.device_milli, 0);
  EXPECT_EQ(c.task_count, 3);
  ASSERT_TRUE(c.global.has_value());
  EXPECT_TRUE(c.pressure_on.empty());
}

TEST_F(CompileJobTest, IdleReclaimAndSpreadRulesApplyToTheJobsTheyMatch) {
  JobStanding in_service;
  in_service.service_group = 7;
  CompiledJob notebook = Compile("notebook", in_service);
  ASSERT_NE(notebook.idle, nullptr);
  EXPECT_EQ(notebook.idle->name, "notebooks");
  // Its weights rule sets spread to 0: no spread group although its service has one.
  EXPECT_FALSE(notebook.spread_group.has_value());
  CompiledJob mixed = Compile("mixed", in_service);
  EXPECT_EQ(mixed.idle, nullptr);
  ASSERT_TRUE(mixed.spread_group.has_value());
  EXPECT_EQ(*mixed.spread_group, 7u);
  EXPECT_FALSE(Compile("mixed").spread_group.has_value());  // not a service's replica
}

}  // namespace
}  // namespace tessera
