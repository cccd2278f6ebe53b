// Importing the public node lists: the totals of the fixtures cut from them (tests/data; the
// whole files' totals are the data suite's), the catalog, the written YAML, and malformed rows
// reported all at once with their lines.
#include "config/fleet_import.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "config/loader.h"
#include "config/same_fleet.h"
#include "config/yaml_writer.h"
#include "testutil/fleet_totals.h"

namespace tessera {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kData = TESSERA_TEST_DATA;
const std::string kOpenbGpu = kData + "/alibaba-gpu-v2023/openb_node_list_gpu_node.csv";
const std::string kOpenbAll = kData + "/alibaba-gpu-v2023/openb_node_list_all_node.csv";
const std::string kPai2020 = kData + "/alibaba-gpu-v2020/pai_machine_spec.csv";
const std::string kSpot2026 = kData + "/alibaba-spot-gpu-v2026/node_info_df.csv";

ImportedFleet MustImport(NodeListFormat format, const std::string& path,
                         const FleetImportOptions& options = {}) {
  auto r = ImportNodeListFile(format, path, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(r).value();
}

// The written YAML validates and loads as the very fleet that was imported.
void ExpectWritesAndReloads(const ImportedFleet& f) {
  auto yaml = WriteFleetYaml(f.spec, {f.notes});
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  LoadResult loaded = LoadSpecTexts({{"imported.yaml", *yaml}});
  ASSERT_TRUE(loaded.spec) << loaded.diagnostics.ToString();
  EXPECT_TRUE(testing::SameFleet(f.spec, *loaded.spec));
}

TEST(FleetImportTest, OpenbGpuNodes) {
  ImportedFleet f = MustImport(NodeListFormat::kOpenb, kOpenbGpu);
  testing::FleetTotals t = testing::CountFleet(f.spec);
  EXPECT_EQ(t.nodes, 304u);  // every 4th node of the 1,213
  EXPECT_EQ(t.cpu_only, 0u);
  EXPECT_EQ(t.devices, 1548u);
  EXPECT_EQ(t.per_model, (std::map<std::string, size_t>{{"A10", 1},
                                                        {"G2", 1120},
                                                        {"G3", 64},
                                                        {"P100", 61},
                                                        {"T4", 206},
                                                        {"V100M16", 60},
                                                        {"V100M32", 36}}));
  EXPECT_EQ(f.spec.device_models.size(), 7u);
  // openb-node-0000,64000,262144,2,P100: taken as given.
  const Node& first = f.spec.nodes.front();
  EXPECT_EQ(first.name, "openb-node-0000");
  EXPECT_EQ(first.cpu, 64000);
  EXPECT_EQ(first.memory, 262144);
  ASSERT_EQ(first.devices.size(), 2u);
  EXPECT_EQ(f.spec.model(first.devices[0].model).name, "P100");
  ASSERT_EQ(f.spec.regions.size(), 1u);
  EXPECT_EQ(f.spec.regions[0].name, "default");
  ASSERT_EQ(f.spec.clusters.size(), 1u);
  EXPECT_EQ(f.spec.clusters[0].name, "openb");
  EXPECT_EQ(f.spec.clusters[0].node_count, 304u);
}

TEST(FleetImportTest, OpenbAllNodesIncludeCpuOnlyOnes) {
  ImportedFleet f = MustImport(NodeListFormat::kOpenb, kOpenbAll);
  testing::FleetTotals t = testing::CountFleet(f.spec);
  EXPECT_EQ(t.nodes, 381u);
  EXPECT_EQ(t.cpu_only, 79u);
  EXPECT_EQ(t.devices, 1542u);
  EXPECT_EQ(t.per_model.size(), 7u);
  ExpectWritesAndReloads(f);
}

TEST(FleetImportTest, Pai2020) {
  ImportedFleet f = MustImport(NodeListFormat::kPai2020, kPai2020);
  testing::FleetTotals t = testing::CountFleet(f.spec);
  EXPECT_EQ(t.nodes, 380u);  // every 5th machine of the 1,897
  EXPECT_EQ(t.cpu_only, 17u);
  EXPECT_EQ(t.devices, 1350u);
  EXPECT_EQ(t.per_model,
            (std::map<std::string, size_t>{
                {"MISC", 448}, {"P100", 320}, {"T4", 198}, {"V100", 168}, {"V100M32", 216}}));
  // 7399a758eb02bae1a3621236,CPU,96,512,0: cap_mem is GiB.
  const Node& first = f.spec.nodes.front();
  EXPECT_EQ(first.name, "7399a758eb02bae1a3621236");
  EXPECT_EQ(first.cpu, 96000);
  EXPECT_EQ(first.memory, 512 * 1024);
  EXPECT_TRUE(first.devices.empty());
  EXPECT_EQ(f.spec.clusters[0].name, "pai2020");
  ExpectWritesAndReloads(f);
}

TEST(FleetImportTest, Spot2026) {
  ImportedFleet f = MustImport(NodeListFormat::kSpot2026, kSpot2026);
  testing::FleetTotals t = testing::CountFleet(f.spec);
  EXPECT_EQ(t.nodes, 428u);  // every 10th node of the 4,278
  EXPECT_EQ(t.cpu_only, 0u);
  EXPECT_EQ(t.devices, 1029u);
  EXPECT_EQ(t.per_model, (std::map<std::string, size_t>{{"A10", 249},
                                                        {"A100-SXM4-80GB", 368},
                                                        {"A800-SXM4-80GB", 24},
                                                        {"GPU-series-1", 140},
                                                        {"GPU-series-2", 40},
                                                        {"H800", 208}}));
  // GPU-series-1,4,192,0: a bare number gets a prefix; memory is derived from the cores.
  const Node& first = f.spec.nodes.front();
  EXPECT_EQ(first.name, "spot-node-0");
  EXPECT_EQ(first.cpu, 192000);
  EXPECT_EQ(first.memory, 192 * kSpotMemoryPerCore);
  EXPECT_EQ(f.spec.nodes.back().name, "spot-node-4333");  // the 4,279th row
  EXPECT_THAT(f.notes, Contains(HasSubstr("no memory column")));
  ExpectWritesAndReloads(f);
}

TEST(FleetImportTest, CatalogHasKnownMemoryOrAnUndisclosedPlaceholder) {
  ImportedFleet f = MustImport(NodeListFormat::kOpenb, kOpenbGpu);
  std::vector<std::string> names;
  for (const DeviceModel& m : f.spec.device_models) {
    names.push_back(m.name);
    EXPECT_EQ(m.kind, DeviceKind::kGpu);
    EXPECT_EQ(m.vendor, "nvidia");
  }
  EXPECT_THAT(names, ElementsAre("A10", "G2", "G3", "P100", "T4", "V100M16", "V100M32"));
  const DeviceModel& v100m32 = f.spec.model(*f.spec.FindModel("V100M32"));
  EXPECT_EQ(v100m32.memory, 32 * 1024);
  EXPECT_FALSE(v100m32.HasLabel("undisclosed"));
  const DeviceModel& g2 = f.spec.model(*f.spec.FindModel("G2"));
  EXPECT_EQ(g2.memory, kUndisclosedGpuMemory);
  EXPECT_TRUE(g2.HasLabel("undisclosed"));
  EXPECT_THAT(f.notes, Contains(HasSubstr("(G2, G3)")));
  EXPECT_EQ(KnownGpuMemory("A10"), 24 * 1024);
  EXPECT_EQ(KnownGpuMemory("H800"), 80 * 1024);
  EXPECT_EQ(KnownGpuMemory("MISC"), std::nullopt);
}

TEST(FleetImportTest, OptionsNameTheRegionClusterAndTier) {
  auto table = CsvTable::Parse("n.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,1024,1,T4\n");
  ASSERT_TRUE(table.ok());
  FleetImportOptions options{"cn-hz", "pai-a", ClusterTier::kShared};
  auto f = ImportNodeList(NodeListFormat::kOpenb, *table, options);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->spec.regions[0].name, "cn-hz");
  EXPECT_EQ(f->spec.clusters[0].name, "pai-a");
  EXPECT_EQ(f->spec.clusters[0].tier, ClusterTier::kShared);
  ExpectWritesAndReloads(*f);

  options.cluster = "bad name";
  auto bad = ImportNodeList(NodeListFormat::kOpenb, *table, options);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("invalid cluster name \"bad name\""));
}

TEST(FleetImportTest, FormatNames) {
  EXPECT_EQ(ParseNodeListFormat("pai2020"), NodeListFormat::kPai2020);
  EXPECT_EQ(ParseNodeListFormat("openB"), std::nullopt);
  EXPECT_THAT(NodeListFormatNames(), ElementsAre("openb", "pai2020", "spot2026"));
  EXPECT_EQ(NodeListFormatName(NodeListFormat::kSpot2026), "spot2026");
}

Status ImportText(NodeListFormat format, std::string_view text) {
  auto table = CsvTable::Parse("bad.csv", text, NodeListCsvOptions(format));
  if (!table.ok()) return table.status();
  return ImportNodeList(format, *table, {}).status();
}

TEST(FleetImportTest, ReportsEveryMalformedRowWithItsLine) {
  Status s = ImportText(NodeListFormat::kOpenb,
                        "sn,cpu_milli,memory_mib,gpu,model\n"
                        "ok-1,8000,1024,1,T4\n"
                        "n2,abc,1024,1,T4\n"
                        "n3,8000,1024,-1,T4\n"
                        "n4,8000,1024\n"
                        "n5,8000,1024,2,\n"
                        "ok-1,8000,1024,0,\n"
                        "n7,8000,1024,1,cpu\n"
                        "bad name,8000,1024,0,\n"
                        "n9,0,1024,0,\n"
                        "ok-2,8000,1024,1,T4\n");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "bad.csv: 8 malformed rows\n"
            "  bad.csv:3: column cpu_milli: expected a whole number, got \"abc\"\n"
            "  bad.csv:4: column gpu: expected a whole number from 0 to 1024, got -1\n"
            "  bad.csv:5: expected 5 fields (sn,cpu_milli,memory_mib,gpu,model), got 3\n"
            "  bad.csv:6: column model: a node with 2 GPUs needs their model\n"
            "  bad.csv:7: duplicate node name \"ok-1\" (first at line 2)\n"
            "  bad.csv:8: column model: invalid GPU model name \"cpu\"; expected letters, "
            "digits, '.', '_' or '-' (and not \"cpu\")\n"
            "  bad.csv:9: invalid node name \"bad name\"; expected letters, digits, '.', '_' or "
            "'-', starting with a letter or digit, at most 63 characters\n"
            "  bad.csv:10: column cpu_milli: expected a whole number from 1 to 100000000, got 0");
}

TEST(FleetImportTest, CapsTheListOfMalformedRows) {
  std::string text = "sn,cpu_milli,memory_mib,gpu,model\n";
  for (int i = 0; i < 25; ++i)
    text += "n" + std::to_string(i) + ",x,1024,1,T4\n";
  Status s = ImportText(NodeListFormat::kOpenb, text);
  EXPECT_THAT(s.message(), HasSubstr("bad.csv: 25 malformed rows\n"));
  EXPECT_THAT(s.message(), HasSubstr("bad.csv:21: column cpu_milli"));
  EXPECT_THAT(s.message(), Not(HasSubstr("bad.csv:22:")));
  EXPECT_THAT(s.message(), HasSubstr("\n  ... and 5 more"));
}

TEST(FleetImportTest, Pai2020RowsAndAnOptionalHeader) {
  EXPECT_EQ(ImportText(NodeListFormat::kPai2020, "m1,CPU,96,512,8\nm2,T4,96,x,2\n").message(),
            "bad.csv: 2 malformed rows\n"
            "  bad.csv:1: column cap_gpu: gpu_type CPU marks a CPU-only machine, but cap_gpu is 8\n"
            "  bad.csv:2: column cap_mem: expected a whole number, got \"x\"");
  auto table =
      CsvTable::Parse("h.csv", "machine,gpu_type,cap_cpu,cap_mem,cap_gpu\nm1,T4,96,512,2\n",
                      NodeListCsvOptions(NodeListFormat::kPai2020));
  ASSERT_TRUE(table.ok());
  auto f = ImportNodeList(NodeListFormat::kPai2020, *table, {});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->spec.nodes.size(), 1u);
}

TEST(FleetImportTest, Spot2026Rows) {
  EXPECT_EQ(ImportText(NodeListFormat::kSpot2026,
                       "gpu_model,gpu_capacity_num,cpu_num,node_name\n"
                       "A10,1,128,\n"
                       "A10,1,-3,7\n")
                .message(),
            "bad.csv: 2 malformed rows\n"
            "  bad.csv:2: column node_name: must not be empty\n"
            "  bad.csv:3: column cpu_num: expected a whole number from 1 to 100000, got -3");
}

TEST(FleetImportTest, FileLevelProblems) {
  EXPECT_EQ(ImportText(NodeListFormat::kOpenb, "").message(),
            "bad.csv:1: empty file; expected a header row");
  EXPECT_EQ(ImportText(NodeListFormat::kOpenb, "sn,cpu_milli,memory_mib,gpu,model\n").message(),
            "bad.csv: no nodes; the file has no data rows");
  EXPECT_EQ(ImportText(NodeListFormat::kPai2020, "").message(),
            "bad.csv: no nodes; the file has no data rows");
  EXPECT_EQ(ImportText(NodeListFormat::kOpenb, "sn,cpu,memory_mib,gpu\nn1,8,1024,0\n").message(),
            "bad.csv:1: missing column(s) cpu_milli, model; the header has sn,cpu,memory_mib,gpu");
  auto missing = ImportNodeListFile(NodeListFormat::kOpenb, kData + "/no-such-file.csv", {});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tessera
