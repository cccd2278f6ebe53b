// The plain value types of model/ on a spec built by hand (no loader): every enum's name
// reads back as itself and an unknown name as nothing; the spec's lookups; the runAs user a
// task gets (the tenant's, an ancestor's, the cluster's); a request's speed and shape; and
// the largest number of devices each topology level of a cluster holds.
#include <gtest/gtest.h>

#include "model/capacity.h"
#include "model/catalog.h"
#include "model/fleet.h"
#include "model/job.h"
#include "model/policy.h"
#include "model/run_as.h"
#include "model/spec.h"
#include "model/topology.h"

namespace tessera {
namespace {

// Parse(Name(x)) == x for every value of an enum with `n` values, and Parse("") is nothing.
template <typename E, typename Name, typename Parse>
void RoundTrips(int n, Name name, Parse parse) {
  for (int i = 0; i < n; ++i) {
    const E e = static_cast<E>(i);
    std::optional<E> back = parse(name(e));
    ASSERT_TRUE(back.has_value()) << name(e);
    EXPECT_EQ(*back, e) << name(e);
  }
  EXPECT_FALSE(parse("").has_value());
  EXPECT_FALSE(parse("no-such-name").has_value());
}

TEST(ModelNames, EveryNameReadsBackAsItself) {
  RoundTrips<TopologyLevel>(kTopologyLevelCount, TopologyLevelName, ParseTopologyLevel);
  RoundTrips<DeviceKind>(3, DeviceKindName, ParseDeviceKind);
  RoundTrips<WorkloadClass>(kWorkloadClassCount, WorkloadClassName, ParseWorkloadClass);
  RoundTrips<ClusterTier>(3, ClusterTierName, ParseClusterTier);
  RoundTrips<BackendKind>(4, BackendKindName, ParseBackendKind);
  EXPECT_EQ(TopologyLevelName(TopologyLevel::kLeaf), "leaf");
  EXPECT_EQ(BackendKindName(BackendKind::kSlurm), "slurm");
  EXPECT_EQ(ParseRuleKind(RuleKindName(RuleKind::kIdleReclaim)), RuleKind::kIdleReclaim);
  EXPECT_EQ(ParseRuleKind(RuleKindName(RuleKind::kBurst)), RuleKind::kBurst);
}

// Two clusters in one region: `train` (4 nodes of 8 G1 in islands of 4, two nodes per leaf)
// and `cpu` (2 CPU nodes), and the tenants acme and acme/research.
Spec HandBuilt() {
  Spec s;
  s.device_models.push_back({});
  s.device_models[0].name = "G1";
  s.regions.push_back({});
  s.regions[0].name = "north";
  for (const char* name : {"train", "cpu"}) {
    Cluster& c = s.clusters.emplace_back();
    c.name = name;
    c.region = RegionId(0);
  }
  s.clusters[0].run_as = RunAs{"trainer", ""};
  for (int n = 0; n < 4; ++n) {
    Node& node = s.nodes.emplace_back();
    node.name = "train-" + std::to_string(n);
    node.cluster = ClusterId(0);
    node.cpu = 64'000;
    node.leaf = n / 2;
    for (int d = 0; d < 8; ++d)
      node.devices.push_back({DeviceModelId(0), d / 4});
  }
  s.clusters[0].first_node = NodeId(0);
  s.clusters[0].node_count = 4;
  for (int n = 0; n < 2; ++n) {
    Node& node = s.nodes.emplace_back();
    node.name = "cpu-" + std::to_string(n);
    node.cluster = ClusterId(1);
    node.cpu = 32'000;
  }
  s.clusters[1].first_node = NodeId(4);
  s.clusters[1].node_count = 2;
  Tenant& acme = s.tenants.emplace_back();
  acme.name = acme.path = "acme";
  acme.children.push_back(TenantId(1));
  acme.quotas.push_back({DeviceModelId(0), 16'000, 32'000, true, true});
  Tenant& research = s.tenants.emplace_back();
  research.name = "research";
  research.path = "acme/research";
  research.parent = TenantId(0);
  s.priority_classes = Spec::DefaultPriorityClasses();
  return s;
}

TEST(SpecLookups, NamesFindTheirIdsAndTheDefaultsExist) {
  Spec s = HandBuilt();
  EXPECT_EQ(s.FindModel("G1"), DeviceModelId(0));
  EXPECT_EQ(s.FindCluster("cpu"), ClusterId(1));
  EXPECT_EQ(s.FindRegion("north"), RegionId(0));
  EXPECT_EQ(s.FindTenant("acme/research"), TenantId(1));
  EXPECT_FALSE(s.FindTenant("research").has_value());  // paths, not names
  EXPECT_FALSE(s.FindCluster("nope").has_value());
  ASSERT_NE(s.FindPriority("high"), nullptr);
  EXPECT_GT(s.FindPriority("high")->value, s.FindPriority("normal")->value);
  EXPECT_TRUE(s.FindPriority("best-effort")->preemptible);
  EXPECT_EQ(s.FindPriority("urgent"), nullptr);
  ASSERT_NE(s.tenant(TenantId(0)).QuotaFor(DeviceModelId(0)), nullptr);
  EXPECT_EQ(s.tenant(TenantId(0)).QuotaFor(DeviceModelId(0))->limit, 32'000);
  EXPECT_EQ(s.tenant(TenantId(1)).QuotaFor(DeviceModelId(0)), nullptr);
}

TEST(SpecLookups, ATaskRunsAsItsTenantsUserElseAnAncestorsElseTheClusters) {
  Spec s = HandBuilt();
  const TenantId acme(0), research(1);
  const ClusterId train(0), cpu(1);
  ASSERT_NE(s.RunAsFor(research, train), nullptr);
  EXPECT_EQ(s.RunAsFor(research, train)->user, "trainer");  // the cluster's
  EXPECT_EQ(s.RunAsFor(research, cpu), nullptr);            // none named anywhere
  s.tenants[0].run_as = RunAs{"acme", "acme"};
  EXPECT_EQ(s.RunAsFor(research, cpu)->user, "acme");  // inherited from acme
  EXPECT_EQ(s.RunAsFor(research, train)->user, "acme");
  s.tenants[1].run_as = RunAs{"res", ""};
  EXPECT_EQ(s.RunAsFor(research, train)->user, "res");
  EXPECT_EQ(s.RunAsFor(acme, train)->user, "acme");  // not a child's
  EXPECT_TRUE(ValidHostAccountName("res"));
  EXPECT_FALSE(ValidHostAccountName("Root"));
}

TEST(Requests, SpeedShapeAndCount) {
  DeviceRequest r;
  r.count = 1;
  r.milli_each = 500;
  EXPECT_TRUE(r.fractional());
  r.milli_each = 1000;
  EXPECT_FALSE(r.fractional());
  r.models.push_back({DeviceModelId(2), 600});
  EXPECT_EQ(r.SpeedOn(DeviceModelId(2)), 600);
  EXPECT_EQ(r.SpeedOn(DeviceModelId(0)), 1000);  // not named: the reference speed
  Job j;
  j.task_groups.resize(2);
  j.task_groups[0].count = 3;
  j.task_groups[1].count = 4;
  EXPECT_EQ(j.TaskCount(), 7);
}

TEST(Capacity, EachLevelHoldsWhatItsLargestDomainHas) {
  Spec s = HandBuilt();
  auto any = [](const Node&, const Device&) { return true; };
  LevelCapacity train = ClusterCapacity(s, ClusterId(0), any);
  EXPECT_EQ(train[static_cast<int>(TopologyLevel::kIsland)], 4);
  EXPECT_EQ(train[static_cast<int>(TopologyLevel::kNode)], 8);
  EXPECT_EQ(train[static_cast<int>(TopologyLevel::kLeaf)], 16);
  EXPECT_EQ(train[static_cast<int>(TopologyLevel::kCluster)], 32);
  // A predicate and a node filter narrow it: islands 0 only, nodes with 64 cores.
  auto first_island = [](const Node&, const Device& d) { return d.island == 0; };
  EXPECT_EQ(ClusterCapacity(s, ClusterId(0), first_island)[static_cast<int>(TopologyLevel::kNode)],
            4);
  auto none = [](const Node& n) { return n.cpu > 64'000; };
  EXPECT_EQ(ClusterCapacity(s, ClusterId(0), any, none)[static_cast<int>(TopologyLevel::kCluster)],
            0);
  EXPECT_EQ(ClusterCapacity(s, ClusterId(1), any)[static_cast<int>(TopologyLevel::kCluster)], 0);
}

}  // namespace
}  // namespace tessera
