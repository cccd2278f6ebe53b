// The victim search's pure parts (sched/victims.h) on the base fleet
// (tests/testutil/spec_fixture.cc: `train` = H800 nodes in region north, `npu` = Ascend910B
// and CPU nodes in region east): the order victims are tried in, what a preemption rule
// lets go, whether a release helps, and the shortest sufficient prefix.
#include "sched/victims.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testutil/base_cell.h"

namespace tessera {
namespace {

TEST(Victims, CheapestFirstThenTheLimit) {
  std::vector<VictimCandidate> c = {
      {500, 10.0, 1, 0}, {200, 99.0, 2, 1}, {200, 5.0, 3, 2}, {200, 5.0, 9, 3}, {0, 1e9, 4, 4}};
  RankVictims(c, 4);
  std::vector<uint32_t> ids;
  for (const VictimCandidate& v : c)
    ids.push_back(v.id);
  // best-effort first whatever it loses; then low: least lost, the younger (key 9) first.
  EXPECT_EQ(ids, (std::vector<uint32_t>{4, 3, 2, 1}));
}

class VictimRules : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::BaseCell base;
    ASSERT_TRUE(base.cell);
    spec_ = std::move(base.spec);
    cell_ = std::move(base.cell);
    train_ = *spec_->FindCluster("train");
    npu_ = *spec_->FindCluster("npu");
    east_ = *spec_->FindRegion("east");
    job_.job_class = WorkloadClass::kBatch;
  }
  // A placement of one device on the first node of `cluster` that has devices.
  Placement On(ClusterId cluster) const {
    for (uint32_t n = 0; n < cell_->node_count(); ++n) {
      if (spec_->node(cell_->spec_node(n)).cluster != cluster || cell_->devices(n).empty())
        continue;
      Placement p;
      p.node = n;
      p.devices.push_back({0, 1000});
      return p;
    }
    ADD_FAILURE() << "no device node";
    return {};
  }
  bool Admits(const PreemptionRule* rule, int32_t priority, bool preemptible,
              const std::vector<Placement>& where, bool reclaimed = false) const {
    return RuleAdmitsVictim(*spec_, *cell_, rule, {job_, priority, preemptible, where}, reclaimed);
  }

  std::unique_ptr<Spec> spec_;
  std::unique_ptr<CellState> cell_;
  ClusterId train_, npu_;
  RegionId east_;
  Job job_;
};

TEST_F(VictimRules, WithoutARuleOnlyPreemptibleJobsGoUnlessBorrowedCapacityIsTakenBack) {
  std::vector<Placement> on_train = {On(train_)};
  EXPECT_TRUE(Admits(nullptr, 200, true, on_train));
  EXPECT_FALSE(Admits(nullptr, 200, false, on_train));
  EXPECT_TRUE(Admits(nullptr, 200, false, on_train, /*reclaimed=*/true));
}

TEST_F(VictimRules, ARuleNarrowsByClassPriorityAndPlace) {
  std::vector<Placement> on_train = {On(train_)}, on_npu = {On(npu_)};
  std::vector<Placement> both = {On(train_), On(npu_)};
  PreemptionRule rule;
  rule.victim_classes = {WorkloadClass::kBatch, WorkloadClass::kEval};
  EXPECT_TRUE(Admits(&rule, 200, true, on_train));
  job_.job_class = WorkloadClass::kTraining;
  EXPECT_FALSE(Admits(&rule, 200, true, on_train));  // not a victim class
  job_.job_class = WorkloadClass::kBatch;

  rule.victim_max_priority = "low";  // 200
  EXPECT_TRUE(Admits(&rule, 200, true, on_train));
  EXPECT_FALSE(Admits(&rule, 500, true, on_train));
  rule.victim_max_priority.reset();

  rule.clusters = {npu_};  // every node of the victim within the rule's pools
  EXPECT_TRUE(Admits(&rule, 200, true, on_npu));
  EXPECT_FALSE(Admits(&rule, 200, true, on_train));
  EXPECT_FALSE(Admits(&rule, 200, true, both));
  rule.clusters.clear();
  rule.regions = {east_};
  EXPECT_TRUE(Admits(&rule, 200, true, on_npu));
  EXPECT_FALSE(Admits(&rule, 200, true, both));
}

TEST_F(VictimRules, AllowFalseAndPreemptibleOnlyYieldToAReclaim) {
  std::vector<Placement> on_train = {On(train_)};
  PreemptionRule never;
  never.allow = false;
  EXPECT_FALSE(Admits(&never, 200, true, on_train));
  EXPECT_TRUE(Admits(&never, 200, true, on_train, /*reclaimed=*/true));
  PreemptionRule open;
  open.victims_preemptible_only = false;
  EXPECT_TRUE(Admits(&open, 200, false, on_train));
}

TEST_F(VictimRules, AReleaseHelpsOnlyWithAModelThePreemptorAccepts) {
  std::vector<Placement> on_train = {On(train_)};
  const ModelMask h800 = ModelMask{1} << spec_->FindModel("H800")->value();
  const ModelMask ascend = ModelMask{1} << spec_->FindModel("Ascend910B")->value();
  EXPECT_TRUE(FreesModels(*cell_, on_train, h800));
  EXPECT_FALSE(FreesModels(*cell_, on_train, ascend));
  EXPECT_TRUE(FreesModels(*cell_, on_train, 0));  // a CPU-only preemptor: anything helps
  EXPECT_FALSE(FreesModels(*cell_, {}, 0));
}

TEST(Victims, TheShortestSufficientPrefixByBisection) {
  // Releasing the first 5 of 16 is the least that places the job; nothing said fewer fail.
  std::vector<size_t> tried;
  auto places = [&](size_t k) {
    tried.push_back(k);
    return k >= 5;
  };
  EXPECT_EQ(ShortestSufficientPrefix(16, 0, places), 5u);
  EXPECT_EQ(tried.front(), 1u);  // one, the least there can be
  EXPECT_EQ(tried[1], 16u);      // then all of them
  EXPECT_EQ(tried.back(), 5u);   // and the answer's try last: its placement is the one kept
  EXPECT_LE(tried.size(), 8u);   // 2 + about log2(16) + 1
  // Not even all of them: two tries.
  tried.clear();
  EXPECT_FALSE(ShortestSufficientPrefix(16, 1, [&](size_t k) {
                 tried.push_back(k);
                 return false;
               }).has_value());
  EXPECT_EQ(tried, (std::vector<size_t>{1, 16}));
  // One is enough, and one candidate alone.
  EXPECT_EQ(ShortestSufficientPrefix(16, 1, [](size_t k) { return k >= 1; }), 1u);
  EXPECT_EQ(ShortestSufficientPrefix(1, 1, [](size_t k) { return k >= 1; }), 1u);
}

TEST(Victims, TheLeastSufficientPrefixIsTriedFirst) {
  // The count of room says fewer than 5 cannot suffice: 5 is tried first, and it suffices.
  std::vector<size_t> tried;
  auto places = [&](size_t k) {
    tried.push_back(k);
    return k >= 5;
  };
  EXPECT_EQ(ShortestSufficientPrefix(16, 5, places), 5u);
  EXPECT_EQ(tried, std::vector<size_t>{5});
  // It does not: all of them, then bisection above it.
  tried.clear();
  EXPECT_EQ(ShortestSufficientPrefix(16, 3, places), 5u);
  EXPECT_EQ(tried.front(), 3u);
  EXPECT_EQ(tried[1], 16u);
  EXPECT_EQ(tried.back(), 5u);
  for (size_t k : tried)
    EXPECT_GE(k, 3u);
  // More than there are candidates: no prefix, nothing tried.
  tried.clear();
  EXPECT_FALSE(ShortestSufficientPrefix(4, 5, places).has_value());
  EXPECT_TRUE(tried.empty());
}

}  // namespace
}  // namespace tessera
