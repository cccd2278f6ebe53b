// The unified view computed from the shared base fleet (tests/testutil/spec_fixture.cc):
//   train: 8 nodes x 8 H800, islands of 8, 4 nodes per leaf -> 2 leaves of 32 H800, one spine
//   npu:   4 nodes x 8 Ascend910B (one leaf) + 2 CPU-only nodes
// north <-> east: 20 ms, 100 Gbps.
#include "sched/fleet_view.h"

#include <gtest/gtest.h>

#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

using testing::BaseSpec;

TEST(FleetView, TotalsByModelKindAndRegion) {
  Spec s = BaseSpec();
  FleetView v = ComputeFleetView(s);
  EXPECT_EQ(v.totals.nodes, 14);
  EXPECT_EQ(v.totals.devices, 96);
  EXPECT_EQ(v.totals.devices_by_model.at(*s.FindModel("H800")), 64);
  EXPECT_EQ(v.totals.devices_by_model.at(*s.FindModel("Ascend910B")), 32);
  EXPECT_EQ(v.totals.devices_by_kind.at(DeviceKind::kNpu), 32);
  EXPECT_EQ(v.totals.cpu, (8 * 192 + 4 * 192 + 2 * 64) * 1000);
  EXPECT_EQ(v.regions[s.FindRegion("north")->value()].devices, 64);
  EXPECT_EQ(v.regions[s.FindRegion("east")->value()].nodes, 6);
  // 64 H800 at 2.5 per hour; the NPU cluster declares no prices.
  EXPECT_EQ(v.totals.hourly_cost, 64 * 2500);
}

TEST(FleetView, LargestGangPerTopologyLevel) {
  Spec s = BaseSpec();
  FleetView v = ComputeFleetView(s);
  const ModelProfile& h800 = v.clusters[s.FindCluster("train")->value()].models.at(0);
  EXPECT_EQ(h800.devices, 64);
  // island 8, node 8, leaf 4 nodes x 8 = 32, spine = all, cluster = all.
  EXPECT_EQ(h800.largest_gang, (LevelCapacity{8, 8, 32, 64, 64}));
  EXPECT_DOUBLE_EQ(h800.fragmentation, 0.0);
  EXPECT_EQ(h800.price_per_hour, 2500);
}

TEST(FleetView, FragmentationAndFreeGangsFollowTheLiveState) {
  Spec s = BaseSpec();
  FreeShares free(s.nodes.size());
  for (size_t i = 0; i < s.nodes.size(); ++i)
    free[i].assign(s.nodes[i].devices.size(), 1000);
  // On the first train node, use 3 devices and half of a fourth: 4 whole devices stay free.
  free[0][0] = free[0][1] = free[0][2] = 0;
  free[0][3] = 500;
  FleetView v = ComputeFleetView(s, &free);
  const ModelProfile& h800 = v.clusters[s.FindCluster("train")->value()].models.at(0);
  EXPECT_EQ(h800.free_devices, 60);
  EXPECT_EQ(h800.largest_gang[1], 8);   // other nodes are whole
  EXPECT_EQ(h800.largest_gang[2], 32);  // the first leaf lost 4, the second is whole
  EXPECT_EQ(h800.largest_gang[4], 60);
  // 4 of the 60 free devices sit on a node that can no longer host a full-node task.
  EXPECT_NEAR(h800.fragmentation, 4.0 / 60.0, 1e-12);
}

TEST(FleetView, TrainingSuitabilityNeedsBigLeafAndFastFabric) {
  Spec s = BaseSpec();
  FleetViewOptions o;
  o.large_training_min_leaf_gang = 32;
  FleetView v = ComputeFleetView(s, nullptr, o);
  EXPECT_TRUE(v.clusters[s.FindCluster("train")->value()].suits_large_training);
  // The NPU cluster declares no fabric bandwidth.
  const ClusterView& npu = v.clusters[s.FindCluster("npu")->value()];
  EXPECT_FALSE(npu.suits_large_training);
  EXPECT_NE(npu.training_note.find("undeclared"), std::string::npos) << npu.training_note;
  o.large_training_min_leaf_gang = 64;
  EXPECT_FALSE(ComputeFleetView(s, nullptr, o).clusters[0].suits_large_training);
}

TEST(FleetView, DatasetDistanceAndResidency) {
  Spec s = BaseSpec();
  FleetView v = ComputeFleetView(s);
  const ClusterView& npu = v.clusters[s.FindCluster("npu")->value()];
  // corpus: 10Ti in north, 20 ms away at 100 Gbps: 10 x 2^40 x 8 bits / 1e11 bit/s = 879.6 s.
  const DatasetDistance& corpus = npu.datasets.at(0);
  EXPECT_TRUE(corpus.allowed);
  EXPECT_FALSE(corpus.local);
  EXPECT_EQ(corpus.latency, 20);
  EXPECT_NEAR(static_cast<double>(*corpus.transfer_time) / 1000.0, 879.6, 0.1);
  // eu-logs may only be processed in east: allowed for npu, not for train.
  EXPECT_TRUE(npu.datasets.at(1).allowed);
  EXPECT_TRUE(npu.datasets.at(1).local);
  EXPECT_EQ(npu.datasets.at(1).transfer_time, 0);
  EXPECT_FALSE(v.clusters[s.FindCluster("train")->value()].datasets.at(1).allowed);
}

TEST(FleetView, InferenceServingByLatency) {
  Spec s = BaseSpec();
  FleetViewOptions o;
  o.inference_max_latency = 25;
  FleetView v = ComputeFleetView(s, nullptr, o);
  const UserRegionServing& east = v.inference[s.FindRegion("east")->value()];
  ASSERT_EQ(east.served_by.size(), 2u);
  EXPECT_EQ(east.served_by[0], std::make_pair(*s.FindRegion("east"), Millis{0}));
  EXPECT_EQ(east.served_by[1], std::make_pair(*s.FindRegion("north"), Millis{20}));
  o.inference_max_latency = 10;
  EXPECT_EQ(ComputeFleetView(s, nullptr, o).inference[0].served_by.size(), 1u);
}

TEST(RegionPaths, ShortestLatencyWithBottleneckBandwidth) {
  LoadResult r = LoadSpecTexts({{"r.yaml", R"(
regions: [{name: a}, {name: b}, {name: c}, {name: d}]
links:
  - {from: a, to: b, latency: 10ms, bandwidth: 100Gbps}
  - {from: b, to: c, latency: 10ms, bandwidth: 10Gbps}
  - {from: a, to: c, latency: 50ms, bandwidth: 400Gbps}
)"}});
  ASSERT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  RegionPaths p = ComputeRegionPaths(*r.spec);
  EXPECT_EQ(p.latency[0][2], 20);             // a-b-c beats the direct 50 ms link
  EXPECT_EQ(p.bandwidth[0][2], 10000);        // limited by b-c
  EXPECT_FALSE(p.latency[0][3].has_value());  // d is unreachable
}

}  // namespace
}  // namespace tessera
