// The data suite (label `data`, TESSERA_DATA): the whole public node lists import with the
// totals their publishers state (tests/config/fleet_import_test.cc checks the fixtures).
#include "config/fleet_import.h"

#include <gtest/gtest.h>

#include <map>

#include "testutil/data_dir.h"
#include "testutil/fleet_totals.h"

namespace tessera {
namespace {

using testing::FleetTotals;

FleetTotals Import(NodeListFormat format, const std::string& path) {
  auto f = ImportNodeListFile(format, path, {});
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? testing::CountFleet(f->spec) : FleetTotals{};
}

TEST(DataFleetImport, OpenbNodeLists) {
  TESSERA_WHOLE_DATA_OR_FAIL(data);
  FleetTotals gpu =
      Import(NodeListFormat::kOpenb, data + "/alibaba-gpu-v2023/openb_node_list_gpu_node.csv");
  EXPECT_EQ(gpu.nodes, 1213u);
  EXPECT_EQ(gpu.cpu_only, 0u);
  EXPECT_EQ(gpu.devices, 6212u);
  EXPECT_EQ(gpu.per_model, (std::map<std::string, size_t>{{"A10", 2},
                                                          {"G2", 4392},
                                                          {"G3", 312},
                                                          {"P100", 265},
                                                          {"T4", 842},
                                                          {"V100M16", 195},
                                                          {"V100M32", 204}}));
  FleetTotals all =
      Import(NodeListFormat::kOpenb, data + "/alibaba-gpu-v2023/openb_node_list_all_node.csv");
  EXPECT_EQ(all.nodes, 1523u);
  EXPECT_EQ(all.cpu_only, 310u);
  EXPECT_EQ(all.devices, 6212u);
  EXPECT_EQ(all.per_model, gpu.per_model);
}

TEST(DataFleetImport, Pai2020MachineSpec) {
  TESSERA_WHOLE_DATA_OR_FAIL(data);
  FleetTotals t =
      Import(NodeListFormat::kPai2020, data + "/alibaba-gpu-v2020/pai_machine_spec.csv");
  EXPECT_EQ(t.nodes, 1897u);
  EXPECT_EQ(t.cpu_only, 83u);
  EXPECT_EQ(t.devices, 6742u);
  EXPECT_EQ(t.per_model,
            (std::map<std::string, size_t>{
                {"MISC", 2240}, {"P100", 1596}, {"T4", 994}, {"V100", 832}, {"V100M32", 1080}}));
}

TEST(DataFleetImport, Spot2026NodeInfo) {
  TESSERA_WHOLE_DATA_OR_FAIL(data);
  FleetTotals t =
      Import(NodeListFormat::kSpot2026, data + "/alibaba-spot-gpu-v2026/node_info_df.csv");
  EXPECT_EQ(t.nodes, 4278u);
  EXPECT_EQ(t.cpu_only, 0u);
  EXPECT_EQ(t.devices, 10412u);
  EXPECT_EQ(t.per_model, (std::map<std::string, size_t>{{"A10", 2494},
                                                        {"A100-SXM4-80GB", 3456},
                                                        {"A800-SXM4-80GB", 176},
                                                        {"GPU-series-1", 1558},
                                                        {"GPU-series-2", 976},
                                                        {"H800", 1752}}));
}

}  // namespace
}  // namespace tessera
