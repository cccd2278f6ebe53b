// WriteFleetYaml: what it writes loads back as the same fleet.
#include "config/yaml_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/loader.h"
#include "config/same_fleet.h"
#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Loads `text`, writes it, loads the result, and checks both loads agree.
void ExpectRoundTrip(const std::string& text) {
  LoadResult first = LoadSpecTexts({{"in.yaml", text}});
  ASSERT_TRUE(first.spec) << first.diagnostics.ToString();
  auto yaml = WriteFleetYaml(*first.spec);
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  LoadResult second = LoadSpecTexts({{"out.yaml", *yaml}});
  ASSERT_TRUE(second.spec) << second.diagnostics.ToString() << "\n" << *yaml;
  EXPECT_TRUE(testing::SameFleet(*first.spec, *second.spec)) << *yaml;
}

TEST(YamlWriterTest, RoundTripsTheBaseFleet) {
  // Node groups with topology, single nodes, links, prices, interconnect, datasets.
  ExpectRoundTrip(testing::kBaseFleet);
}

TEST(YamlWriterTest, RoundTripsSharedSwitchesIslandsSpeedsAndOddStrings) {
  ExpectRoundTrip(R"(
currency: EUR
deviceModels:
  - {name: H800, kind: gpu, vendor: nvidia, memory: 80Gi, speed: {training: 1, inference: 0.5}}
  - {name: L4, kind: gpu, memory: 24Gi, speed: 0.25, labels: ["yes", "null", "a: b"]}
  - {name: Xeon, kind: cpu}
regions:
  - {name: north, description: "the \"north\" site, #1", labels: {tier: "null", empty: ""}}
  - name: south
links:
  - {from: north, to: south, latency: 1500ms, bandwidth: 25GB/s}
clusters:
  - name: mixed
    region: south
    tier: elastic
    backend: slurm
    backendOptions: {slurmConf: /etc/slurm/slurm.conf}
    labels: {owner: "team a"}
    interconnect: {fabric: roce, islandBandwidth: 900GB/s, leafBandwidth: 200Gbps, coreBandwidth: 100Gbps}
    prices: {L4: 0.8, cpu: 0.025}
    nodeGroups:
      - name: l4
        count: 5
        cpu: 32.5
        memory: 1.5Gi
        labels: {zone: b}
        devices: {model: L4, count: 4, perIsland: 2}
        topology: {nodesPerLeaf: 2, leavesPerSpine: 2}
    nodes:
      - {name: a, cpu: 250m, memory: 100Mi, leaf: r1, spine: s1, devices: {model: H800, count: 8, perIsland: 4}}
      - {name: b, cpu: 8, memory: 1Ti, leaf: r1, cordoned: true}
      - {name: c, cpu: 8, memory: 1Ti, leaf: r2, spine: s1}
      - {name: d, cpu: 8, memory: 1Ti, labels: {"weird key": "x,y"}}
datasets:
  - {name: logs, region: south, size: 3Ti, residency: [south, north], replicas: [north]}
)");
}

TEST(YamlWriterTest, TheComparisonNoticesADifference) {
  // Guards the round-trip tests above against a comparison that never fails.
  LoadResult r = LoadSpecTexts({{"in.yaml", testing::kBaseFleet}});
  ASSERT_TRUE(r.spec);
  Spec other = *r.spec;
  other.nodes.back().leaf = 99;
  ::testing::AssertionResult same = testing::SameFleet(*r.spec, other);
  EXPECT_FALSE(same);
  EXPECT_THAT(same.message(), HasSubstr("(cpu-2).leaf differs: "));
}

TEST(YamlWriterTest, WritesSingleNodesOneLineEachAndTheHeaderComment) {
  LoadResult r = LoadSpecTexts({{"in.yaml", testing::kBaseFleet}});
  ASSERT_TRUE(r.spec);
  YamlWriteOptions options;
  options.header_comment = {"made by a test", "second line"};
  auto yaml = WriteFleetYaml(*r.spec, options);
  ASSERT_TRUE(yaml.ok());
  EXPECT_EQ(yaml->rfind("# made by a test\n# second line\n", 0), 0u) << *yaml;
  EXPECT_THAT(*yaml, HasSubstr("\n      - {name: cpu-1, cpu: 64, memory: 256Gi}\n"));
  // Group members are written as their group, not one by one.
  EXPECT_THAT(*yaml, Not(HasSubstr("train-h800-0000")));
}

TEST(YamlWriterTest, RejectsWhatTheSchemaCannotExpress) {
  LoadResult r = LoadSpecTexts({{"in.yaml", testing::kBaseFleet}});
  ASSERT_TRUE(r.spec);
  Spec mixed = *r.spec;
  Node& cpu1 = mixed.nodes[mixed.clusters[1].first_node.value() + 4];
  ASSERT_EQ(cpu1.name, "cpu-1");
  cpu1.devices = {{DeviceModelId(0), 0}, {DeviceModelId(1), 0}};
  auto yaml = WriteFleetYaml(mixed);
  ASSERT_FALSE(yaml.ok());
  EXPECT_THAT(yaml.status().message(), HasSubstr("\"cpu-1\""));

  Spec uneven = *r.spec;
  Node& cpu2 = uneven.nodes[uneven.clusters[1].first_node.value() + 5];
  cpu2.devices = {{DeviceModelId(0), 0}, {DeviceModelId(0), 0}, {DeviceModelId(0), 1}};
  EXPECT_FALSE(WriteFleetYaml(uneven).ok());
}

}  // namespace
}  // namespace tessera
