// CellState's domain totals and proposals, on the base fleet (tests/testutil/spec_fixture.cc):
// cluster "train" has 8 nodes x 8 H800 on two leaves, cluster "npu" 4 x 8 Ascend910B and 2
// CPU nodes.
#include <gtest/gtest.h>

#include <set>

#include "common/rng.h"
#include "sched/cell_state.h"
#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

using testing::BaseSpec;

// The domain totals recomputed from the nodes, compared with the cell's incremental ones.
void ExpectTotalsMatch(const CellState& cell) {
  for (TopologyLevel level :
       {TopologyLevel::kLeaf, TopologyLevel::kSpine, TopologyLevel::kCluster}) {
    for (size_t d = 0; d < cell.domain_count(level); ++d) {
      for (size_t m = 0; m < cell.model_count(); ++m) {
        Milli free = 0, cap = 0, cpu = 0, cpu_total = 0;
        for (uint32_t n : cell.domain_nodes(level, d)) {
          const NodeState& s = cell.node(n);
          cpu_total += s.cpu_total;
          if (s.schedulable) cpu += s.cpu_free;
          for (const DeviceSlot& dev : cell.devices(n)) {
            if (dev.model != m || !dev.healthy) continue;
            cap += 1000;
            if (s.schedulable) free += dev.free;
          }
        }
        ModelMask mask = ModelMask{1} << m;
        ASSERT_EQ(cell.DomainFreeDevices(level, d, mask), free) << TopologyLevelName(level) << d;
        ASSERT_EQ(cell.DomainDeviceCapacity(level, d, mask), cap);
        ASSERT_EQ(cell.DomainFreeCpu(level, d), cpu);
        ASSERT_EQ(cell.DomainCpuCapacity(level, d), cpu_total);
      }
    }
  }
}

TEST(CellDomains, LeavesSpinesAndClustersOfTheBaseFleet) {
  Spec spec = BaseSpec();
  CellState cell = *CellState::FromSpec(spec);
  // Every node in exactly one domain per level; a domain's nodes share the cluster (and the
  // leaf switch at the leaf level); two domains never do.
  for (TopologyLevel level : {TopologyLevel::kLeaf, TopologyLevel::kCluster}) {
    std::vector<int> seen(cell.node_count(), 0);
    std::set<std::pair<uint32_t, int32_t>> keys;
    for (size_t d = 0; d < cell.domain_count(level); ++d) {
      const auto& nodes = cell.domain_nodes(level, d);
      ASSERT_FALSE(nodes.empty());
      const NodeState& first = cell.node(nodes.front());
      int32_t sub = level == TopologyLevel::kLeaf ? first.leaf : 0;
      EXPECT_TRUE(keys.insert({first.cluster, sub}).second) << "two domains share a key";
      for (uint32_t n : nodes) {
        ++seen[n];
        EXPECT_EQ(cell.node(n).cluster, first.cluster);
        if (level == TopologyLevel::kLeaf) {
          EXPECT_EQ(cell.node(n).leaf, first.leaf);
        }
      }
    }
    for (int count : seen)
      EXPECT_EQ(count, 1);
  }
  EXPECT_EQ(cell.domain_count(TopologyLevel::kCluster), 2u);
  // The 8 train nodes sit 4 per leaf: two leaves of the first cluster.
  EXPECT_EQ(cell.domain_nodes(TopologyLevel::kLeaf, 0).size(), 4u);
  EXPECT_EQ(cell.domain_nodes(TopologyLevel::kLeaf, 1).size(), 4u);
  ModelMask h800 = ModelMask{1} << spec.FindModel("H800")->value();
  EXPECT_EQ(cell.DomainFreeDevices(TopologyLevel::kCluster, 0, h800), 64000);
  EXPECT_EQ(cell.DomainFreeDevices(TopologyLevel::kLeaf, 0, h800), 32000);
  EXPECT_EQ(cell.max_node_device_milli(), 8000);
  ExpectTotalsMatch(cell);
}

TEST(CellDomains, TotalsFollowRandomCommitsReleasesAndCordons) {
  Spec spec = BaseSpec();
  CellState cell = *CellState::FromSpec(spec);
  SeededRng rng(5);
  std::vector<Placement> live;
  for (int step = 0; step < 2000; ++step) {
    uint32_t node = static_cast<uint32_t>(rng.Uniform(cell.node_count()));
    int action = static_cast<int>(rng.Uniform(10));
    if (action == 0) {
      cell.SetSchedulable(node, !cell.node(node).schedulable);
    } else if (action < 4 && !live.empty()) {
      size_t k = rng.Uniform(live.size());
      cell.Release(live[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      Placement p;
      p.node = node;
      p.node_version = cell.node(node).version;
      p.cpu = 1000;
      p.memory = 1024;
      auto devs = cell.devices(node);
      for (uint16_t i = 0; i < devs.size(); ++i) {
        if (devs[i].free >= 250 && rng.Uniform(2) == 0) {
          p.devices.push_back({i, 250});
          break;
        }
      }
      if (cell.Commit(p).ok()) live.push_back(p);
    }
    ExpectTotalsMatch(cell);
    if (HasFatalFailure()) return;
  }
}

TEST(CellProposal, AnAbortedProposalLeavesNoTrace) {
  Spec spec = BaseSpec();
  CellState cell = *CellState::FromSpec(spec);
  const uint64_t version = cell.version();
  const uint64_t node_version = cell.node(0).version;
  const size_t classes = cell.live_classes();
  {
    CellState::Proposal proposal(cell);
    for (uint32_t node : {0u, 1u, 0u}) {
      Placement p;
      p.node = node;
      p.node_version = cell.node(node).version;
      p.cpu = 8000;
      p.memory = 1024;
      p.devices = {{static_cast<uint16_t>(cell.node(node).tasks), 1000}};
      ASSERT_TRUE(proposal.Add(p).ok());
    }
    EXPECT_EQ(cell.node(0).tasks, 2u);
    EXPECT_EQ(cell.tasks_on(0).size(), 2u);
    EXPECT_NE(cell.version(), version);
    // Going out of scope without Keep() aborts.
  }
  EXPECT_EQ(cell.version(), version);
  EXPECT_EQ(cell.node(0).version, node_version);
  EXPECT_EQ(cell.node(0).tasks, 0u);
  EXPECT_TRUE(cell.tasks_on(0).empty()) << "the ledger is restored too";
  EXPECT_EQ(cell.node(0).cpu_free, cell.node(0).cpu_total);
  EXPECT_EQ(cell.devices(0)[0].free, 1000);
  EXPECT_EQ(cell.live_classes(), classes);
  ExpectTotalsMatch(cell);

  // A placement computed before the proposal is still valid: no spurious conflict.
  Placement before;
  before.node = 0;
  before.node_version = node_version;
  before.cpu = 1000;
  EXPECT_TRUE(cell.Commit(before).ok());
}

TEST(CellProposal, AKeptProposalStaysAndAFailedAddChangesNothing) {
  Spec spec = BaseSpec();
  CellState cell = *CellState::FromSpec(spec);
  CellState::Proposal proposal(cell);
  Placement p;
  p.node = 2;
  p.node_version = cell.node(2).version;
  p.cpu = 1000;
  p.devices = {{0, 1000}};
  ASSERT_TRUE(proposal.Add(p).ok());
  Placement stale = p;  // computed against the old version: rejected
  EXPECT_FALSE(proposal.Add(stale).ok());
  EXPECT_EQ(proposal.placements().size(), 1u);
  proposal.Keep();
  proposal.Abort();  // no effect once kept
  EXPECT_EQ(cell.devices(2)[0].free, 0);
  EXPECT_EQ(cell.node(2).tasks, 1u);
  ExpectTotalsMatch(cell);
}

TEST(CellNodes, AddedNodesAppendAndRetiredNodesKeepTheirIndex) {
  Spec spec = BaseSpec();
  CellState cell = *CellState::FromSpec(spec);
  const size_t before = cell.node_count();
  ModelMask h800 = ModelMask{1} << spec.FindModel("H800")->value();
  Milli capacity = cell.DomainDeviceCapacity(TopologyLevel::kCluster, 0, h800);

  // A ninth H800 server on the first leaf of "train".
  Node extra = spec.nodes[0];
  extra.name = "h800-late";
  spec.nodes.push_back(extra);
  NodeId id(static_cast<uint32_t>(spec.nodes.size() - 1));
  Result<uint32_t> added = cell.AddNode(spec, id);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ(*added, before);
  EXPECT_EQ(cell.node_name(*added), "h800-late");
  EXPECT_EQ(cell.spec_node(*added), id);
  EXPECT_EQ(cell.DomainDeviceCapacity(TopologyLevel::kCluster, 0, h800), capacity + 8000);
  EXPECT_FALSE(cell.AddNode(spec, id).ok()) << "the same node twice";
  ExpectTotalsMatch(cell);

  // Retiring node 0 keeps every index; it takes nothing and no longer counts as capacity.
  cell.RetireNode(0);
  cell.SetSchedulable(0, true);
  EXPECT_FALSE(cell.node(0).schedulable) << "a retired node never comes back";
  EXPECT_EQ(cell.node_count(), before + 1);
  EXPECT_EQ(cell.node_name(*added), "h800-late");
  EXPECT_EQ(cell.DomainDeviceCapacity(TopologyLevel::kCluster, 0, h800), capacity);
}

}  // namespace
}  // namespace tessera
