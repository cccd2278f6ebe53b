// An agent that answers for some of its host's GPUs (--devices): the node's indices become the
// host's in a task's environment, and the host's GPUs are reported under the node's indices.
#include "backends/local/device_map.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(DeviceMap, ListsAreIndicesOnceEach) {
  auto ok = ParseDeviceList("4,5,6,7");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, (std::vector<int>{4, 5, 6, 7}));
  for (const char* bad : {"", "4,", "a", "-1", "4,4", "1.5"})
    EXPECT_FALSE(ParseDeviceList(bad).ok()) << bad;
  EXPECT_EQ(ParseDeviceList("2,x").status().message(),
            "--devices: entry 2 (\"x\") is not a device index");
}

TEST(DeviceMap, TheNodesIndicesBecomeTheHosts) {
  std::map<std::string, std::string> env = {{"CUDA_VISIBLE_DEVICES", "0,2"},
                                            {"TESSERA_VISIBLE_DEVICES", "0,2"},
                                            {"HIP_VISIBLE_DEVICES", ""},
                                            {"OTHER", "0,2"}};
  MapToHost({4, 5, 6, 7}, env);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "4,6");
  EXPECT_EQ(env["TESSERA_VISIBLE_DEVICES"], "4,6");
  EXPECT_EQ(env["HIP_VISIBLE_DEVICES"], "");  // a CPU task still sees none
  EXPECT_EQ(env["OTHER"], "0,2");
  std::map<std::string, std::string> same = {{"CUDA_VISIBLE_DEVICES", "1"}};
  MapToHost({}, same);  // no --devices: the host's indices are the node's
  EXPECT_EQ(same["CUDA_VISIBLE_DEVICES"], "1");
}

TEST(DeviceMap, TheHostsGpusAreReportedUnderTheNodesIndices) {
  std::vector<GpuSample> host = {
      {0, "a", "L4", 100, 1, 0.1}, {5, "f", "L4", 100, 2, 0.5}, {4, "e", "L4", 100, 3, 0.9}};
  auto node = NodeGpus({4, 5}, host);
  ASSERT_EQ(node.size(), 2u);
  EXPECT_EQ(node[0].index, 0);
  EXPECT_EQ(node[0].uuid, "e");
  EXPECT_EQ(node[1].index, 1);
  EXPECT_EQ(node[1].uuid, "f");
  EXPECT_EQ(NodeGpus({}, host).size(), 3u);
}

}  // namespace
}  // namespace tessera
