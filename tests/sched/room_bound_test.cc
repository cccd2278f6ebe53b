// The count of room node by node (sched/room_bound.h) on the base fleet
// (tests/testutil/spec_fixture.cc: `train` = 8 nodes of 8 H800, 192 CPUs; `npu` = 4 nodes of 8
// Ascend910B and 2 CPU nodes): a gang fits only where whole nodes hold its tasks, whatever
// the fleet's free total; released tasks count again; clusters it may not use do not count.
#include "sched/room_bound.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "testutil/base_cell.h"

namespace tessera {
namespace {

class RoomBoundTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::BaseCell base;
    ASSERT_TRUE(base.cell);
    spec_ = std::move(base.spec);
    cell_ = std::move(base.cell);
    h800_ = ModelMask{1} << spec_->FindModel("H800")->value();
    ascend_ = ModelMask{1} << spec_->FindModel("Ascend910B")->value();
    for (uint32_t n = 0; n < cell_->node_count(); ++n) {
      if (cell_->node(n).models & h800_) train_nodes_.push_back(n);
      if (cell_->node(n).models & ascend_) npu_nodes_.push_back(n);
    }
    ASSERT_EQ(train_nodes_.size(), 8u);
    ASSERT_EQ(npu_nodes_.size(), 4u);
  }
  // Takes `devices` whole devices (the first free ones) and `cpu` of node n.
  Placement Take(uint32_t n, int devices, Milli cpu = 1000) {
    Placement p;
    p.node = n;
    p.node_version = cell_->node(n).version;
    p.cpu = cpu;
    auto slots = cell_->devices(n);
    for (uint16_t k = 0; k < slots.size() && static_cast<int>(p.devices.size()) < devices; ++k)
      if (slots[k].free == 1000) p.devices.push_back({k, 1000});
    Status s = cell_->Commit(p);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return p;
  }
  static GangGroup Tasks(int count, int devices, ModelMask models, Milli milli = 1000) {
    GangGroup g;
    g.count = count;
    g.shape.count = devices;
    g.shape.milli = milli;
    g.shape.models = models;
    g.shape.cpu = g.shape.cpu_for_score = 8000;
    return g;
  }

  std::unique_ptr<Spec> spec_;
  std::unique_ptr<CellState> cell_;
  ModelMask h800_ = 0, ascend_ = 0;
  std::vector<uint32_t> train_nodes_, npu_nodes_;
};

TEST_F(RoomBoundTest, AGangFitsOnlyWhereWholeNodesHoldItsTasks) {
  GangRequest gang;
  gang.groups = {Tasks(2, 8, h800_)};
  EXPECT_TRUE(RoomBound(*cell_, gang, h800_, {}, true).Fits());  // an empty fleet
  // Five of every node's eight taken: 24 H800 free in all, none of the nodes has eight.
  std::vector<Placement> taken;
  for (uint32_t n : train_nodes_)
    taken.push_back(Take(n, 5));
  RoomBound bound(*cell_, gang, h800_, {}, true);
  EXPECT_FALSE(bound.Fits());
  bound.Release(taken[0]);
  EXPECT_FALSE(bound.Fits());  // one node for the first task
  bound.Release(taken[3]);
  EXPECT_TRUE(bound.Fits());  // and one for the second
  // Not on the models it may not use.
  RoomBound elsewhere(*cell_, gang, ascend_, {}, true);
  elsewhere.Release(taken[0]);
  elsewhere.Release(taken[3]);
  EXPECT_FALSE(elsewhere.Fits());
}

TEST_F(RoomBoundTest, CpuLimitsTheTasksOfANode) {
  // One task of 100 CPUs per 192-CPU node: 8 tasks in train, none more.
  GangRequest gang;
  gang.groups = {Tasks(8, 1, h800_)};
  gang.groups[0].shape.cpu = 100'000;
  EXPECT_TRUE(RoomBound(*cell_, gang, h800_, {}, true).Fits());
  gang.groups[0].count = 9;
  EXPECT_FALSE(RoomBound(*cell_, gang, h800_, {}, true).Fits());
  // With 150 CPUs taken on one node, it holds none; its release gives it back.
  gang.groups[0].count = 8;
  Placement busy = Take(train_nodes_[2], 0, 150'000);
  RoomBound bound(*cell_, gang, h800_, {}, true);
  EXPECT_FALSE(bound.Fits());
  bound.Release(busy);
  EXPECT_TRUE(bound.Fits());
}

TEST_F(RoomBoundTest, SharesOfADeviceCount) {
  // Tasks of half a device: two per free device. Every H800 but three taken: six halves.
  std::vector<Placement> taken;
  for (size_t i = 0; i < train_nodes_.size(); ++i)
    taken.push_back(Take(train_nodes_[i], i < 3 ? 7 : 8));
  GangRequest gang;
  gang.groups = {Tasks(6, 1, h800_, 500)};
  EXPECT_TRUE(RoomBound(*cell_, gang, h800_, {}, true).Fits());
  gang.groups[0].count = 7;
  RoomBound bound(*cell_, gang, h800_, {}, true);
  EXPECT_FALSE(bound.Fits());
  bound.Release(taken[5]);
  EXPECT_TRUE(bound.Fits());
}

TEST_F(RoomBoundTest, ClustersItMayNotUseAndOneClusterForTheGang) {
  const ClusterId train = *spec_->FindCluster("train");
  const ClusterId npu = *spec_->FindCluster("npu");
  GangRequest gang;
  gang.groups = {Tasks(1, 8, h800_)};
  std::vector<bool> no_train(spec_->clusters.size(), true);
  no_train[train.value()] = false;
  EXPECT_FALSE(RoomBound(*cell_, gang, h800_, no_train, true).Fits());
  // A task on H800 and one on Ascend910B: no one cluster has both.
  gang.groups = {Tasks(1, 8, h800_), Tasks(1, 8, ascend_)};
  EXPECT_FALSE(RoomBound(*cell_, gang, h800_ | ascend_, {}, true).Fits());
  EXPECT_TRUE(RoomBound(*cell_, gang, h800_ | ascend_, {}, false).Fits());
  std::vector<bool> only_npu(spec_->clusters.size(), false);
  only_npu[npu.value()] = true;
  EXPECT_FALSE(RoomBound(*cell_, gang, h800_ | ascend_, only_npu, false).Fits());
}

}  // namespace
}  // namespace tessera
