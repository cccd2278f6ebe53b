// The hard placement rules (sched/constraints.h, sched/scope.h) on the base fleet
// (tests/testutil/spec_fixture.cc: cluster `train` = dedicated H800 in region north, cluster
// `npu` = shared Ascend910B and CPU nodes in region east): which clusters a job may use and
// why not, that the placer and the gang search keep to them and call a task excluded
// everywhere Infeasible for the policy's reason, and the order of tiers and models.
#include "sched/constraints.h"

#include <gtest/gtest.h>

#include "sched/gang.h"
#include "sched/placer.h"
#include "sched/policy/builtin.h"
#include "sched/policy_match.h"
#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

const char* const kRules = R"(
policies:
  - name: research-stays-east
    kind: constrain
    match: {tenants: [acme/research]}
    denyRegions: [north]
  - name: batch-off-train
    kind: constrain
    match: {classes: [batch]}
    denyClusters: [train]
  - name: prod-dedicated-only
    kind: constrain
    match: {tenants: [acme/prod]}
    tiers: [dedicated]
  - name: npu-first
    kind: fallback
    match: {classes: [training]}
    order: [{model: Ascend910B, speed: 0.6}, H800]
jobs:
  - {name: research, class: training, tenant: acme/research/llm,
     taskGroups: [{count: 2, cpu: 8, memory: 64Gi, devices: {count: 8}}]}
  - {name: research-h800, class: training, tenant: acme/research/llm,
     taskGroups: [{count: 2, cpu: 8, memory: 64Gi, devices: {count: 8, models: [H800]}}]}
  - {name: prod, class: training, tenant: acme/prod,
     taskGroups: [{count: 1, cpu: 8, memory: 64Gi, devices: {count: 8}}]}
  - {name: etl, class: batch, tenant: acme/prod, datasets: [eu-logs],
     taskGroups: [{count: 1, cpu: 8, memory: 16Gi}]}
  - {name: mixed, class: finetune, tenant: acme/prod,
     taskGroups: [{count: 1, cpu: 8, memory: 64Gi,
                   devices: {count: 8, models: [{model: Ascend910B, speed: 0.5}, H800]}}]}
)";

class Constraints : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadResult r = testing::LoadWithBase(kRules);
    ASSERT_TRUE(r.spec) << r.diagnostics.size();
    spec_ = *r.spec;
    train_ = spec_.FindCluster("train")->value();
    npu_ = spec_.FindCluster("npu")->value();
  }
  const Job& job(const std::string& name) const {
    for (const Job& j : spec_.jobs)
      if (j.name == name) return j;
    ADD_FAILURE() << "no job " << name;
    return spec_.jobs.front();
  }
  TaskShape Shape(const Job& j, uint32_t scope) {
    TaskShape s = MakeTaskShape(spec_, j.task_groups.front().request);
    s.scope = scope;
    shapes_.Intern(s);
    return s;
  }

  Spec spec_;
  uint32_t train_ = 0, npu_ = 0;
  ShapeTable shapes_;
};

TEST_F(Constraints, EachRuleKindExcludesWithItsOwnReasonAndName) {
  JobConstraints research = CompileConstraints(spec_, job("research"));
  EXPECT_EQ(research.verdicts[train_], Reason::kRegionNotAllowed);
  EXPECT_EQ(research.excluded_by[train_], "rule research-stays-east");
  EXPECT_FALSE(research.verdicts[npu_]);

  JobConstraints prod = CompileConstraints(spec_, job("prod"));
  EXPECT_FALSE(prod.verdicts[train_]);
  EXPECT_EQ(prod.verdicts[npu_], Reason::kTierNotAllowed);
  EXPECT_EQ(prod.tier_order, std::vector<ClusterTier>{ClusterTier::kDedicated});

  // The batch job is kept off `train` by a rule and, reading eu-logs, by its residency too:
  // the first exclusion (the rule) names the cause. `npu` is shared, and prod allows only
  // dedicated clusters: nothing is left.
  JobConstraints etl = CompileConstraints(spec_, job("etl"));
  EXPECT_EQ(etl.verdicts[train_], Reason::kClusterNotAllowed);
  EXPECT_EQ(etl.excluded_by[train_], "rule batch-off-train");
  EXPECT_EQ(etl.verdicts[npu_], Reason::kTierNotAllowed);
}

TEST_F(Constraints, ResidencyPinsAReaderToItsRegions) {
  Job reader = job("research");
  reader.datasets = {*spec_.FindDataset("eu-logs")};
  reader.tenant = *spec_.FindTenant("acme");  // no constrain rule matches acme itself
  JobConstraints k = CompileConstraints(spec_, reader);
  EXPECT_EQ(k.verdicts[train_], Reason::kDataResidency);
  EXPECT_EQ(k.excluded_by[train_], "residency of dataset eu-logs");
  EXPECT_FALSE(k.verdicts[npu_]);
}

TEST_F(Constraints, ThePlacerKeepsToTheScopeAndCallsAnEmptyScopeInfeasible) {
  ScopeTable scopes;
  FilterChain chain = MakeScopedFilters(scopes);
  CellState cell = *CellState::FromSpec(spec_);
  auto scorer = policy::MakeBestFit();
  Placer placer(*scorer, chain);
  placer.set_explain(true);

  // A CPU task that may not use `train` lands in `npu` (train's nodes would fit it too).
  Job cpu_job = job("etl");
  ScopeTable::Verdicts only_npu(spec_.clusters.size());
  only_npu[train_] = Reason::kClusterNotAllowed;
  PlaceResult r = placer.Place(cell, Shape(cpu_job, scopes.Intern(only_npu)));
  ASSERT_EQ(r.outcome, PlaceOutcome::kPlaced);
  EXPECT_EQ(cell.node(r.placement.node).cluster, npu_);
  EXPECT_EQ(r.why.dropped.front().first, Reason::kClusterNotAllowed);

  // Its real verdicts exclude both clusters: Infeasible, explained by the policy reasons.
  JobConstraints etl = CompileConstraints(spec_, cpu_job);
  PlaceResult none = placer.Place(cell, Shape(cpu_job, scopes.Intern(etl.verdicts)));
  EXPECT_EQ(none.outcome, PlaceOutcome::kInfeasible);
  ASSERT_EQ(none.why.dropped.size(), 2u);
  EXPECT_EQ(none.why.feasible_nodes, 0u);
  EXPECT_EQ(none.why.ToString(),
            "0/14 nodes fit: 8 cluster not allowed by policy, 6 cluster tier not allowed by "
            "policy");
}

TEST_F(Constraints, AGangNeverTriesADomainOutsideItsScope) {
  ScopeTable scopes;
  FilterChain chain = MakeScopedFilters(scopes);
  CellState cell = *CellState::FromSpec(spec_);
  auto scorer = policy::MakeBestFit();
  Placer placer(*scorer, chain);
  const Job& j = job("research-h800");  // H800 only, and north (train) denied
  JobConstraints k = CompileConstraints(spec_, j);
  GangRequest gang{{{Shape(j, scopes.Intern(k.verdicts)), 2}}, TopologyLevel::kLeaf, JobId(), {}};
  GangResult r = PlaceGang(cell, placer, gang);
  EXPECT_EQ(r.outcome, PlaceOutcome::kInfeasible);
  ASSERT_FALSE(r.why.dropped.empty());
  EXPECT_EQ(r.why.dropped.front().first, Reason::kRegionNotAllowed) << r.why.ToString();
  for (uint32_t n = 0; n < cell.node_count(); ++n)
    EXPECT_EQ(cell.node(n).tasks, 0u) << "a proposal was left behind on " << cell.node_name(n);

  // Unrestricted, the same gang fits under one leaf of train.
  GangRequest free{{{Shape(j, 0), 2}}, TopologyLevel::kLeaf, JobId(), {}};
  EXPECT_EQ(PlaceGang(cell, placer, free).outcome, PlaceOutcome::kPlaced);
}

TEST_F(Constraints, ModelPreferenceIsTheJobsOwnListElseItsFallbackRule) {
  auto mask = [&](const char* model) { return ModelMask{1} << spec_.FindModel(model)->value(); };
  ModelMask both = mask("H800") | mask("Ascend910B");
  using Steps = std::vector<std::pair<Milli, ModelMask>>;
  // The job's own list: H800 (1.0) before Ascend (0.5).
  EXPECT_EQ(ModelPreference(spec_, job("mixed"), both),
            (Steps{{1000, mask("H800")}, {500, mask("Ascend910B")}}));
  // Without a list the fallback rule orders the models, Ascend first, at its speeds.
  EXPECT_EQ(ModelPreference(spec_, job("prod"), both),
            (Steps{{600, mask("Ascend910B")}, {1000, mask("H800")}}));
  // Only the accepted models.
  EXPECT_EQ(ModelPreference(spec_, job("mixed"), mask("Ascend910B")),
            (Steps{{500, mask("Ascend910B")}}));
}

TEST_F(Constraints, AServiceIsMatchedAsAnInferenceJob) {
  Service s;
  s.name = "chat";
  s.tenant = *spec_.FindTenant("acme/research");
  s.min_replicas = 3;
  Job j = ServiceAsJob(s);
  EXPECT_EQ(j.job_class, WorkloadClass::kInference);
  EXPECT_EQ(j.TaskCount(), 3);
  EXPECT_EQ(CompileConstraints(spec_, j).verdicts[train_], Reason::kRegionNotAllowed);
}

}  // namespace
}  // namespace tessera
