// The node agent's inventory parsers: nvidia-smi's CSV and /proc/meminfo, as the tools print
// them (kNvidiaSmiQuery), and their malformed forms.
#include "backends/local/inventory.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(NvidiaSmi, EveryGpuWithItsMemoryAndUtilization) {
  auto gpus = ParseNvidiaSmi(
      "0, GPU-8c6f1b5e-3d1a-4c2e-9f0b-1a2b3c4d5e6f, NVIDIA H200, 143771, 517, 37\n"
      "1, GPU-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0, NVIDIA H200, 143771, 0, 0\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[0].index, 0);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-8c6f1b5e-3d1a-4c2e-9f0b-1a2b3c4d5e6f");
  EXPECT_EQ((*gpus)[0].name, "NVIDIA H200");
  EXPECT_EQ((*gpus)[0].memory_total, 143771);
  EXPECT_EQ((*gpus)[0].memory_used, 517);
  EXPECT_DOUBLE_EQ((*gpus)[0].utilization, 0.37);
  EXPECT_EQ((*gpus)[1].index, 1);
  EXPECT_DOUBLE_EQ((*gpus)[1].utilization, 0.0);
}

TEST(NvidiaSmi, ValuesADeviceDoesNotReportAreUnknownNotZeroOrAnError) {
  auto gpus = ParseNvidiaSmi("0, MIG-5d2b, NVIDIA A100-SXM4-80GB MIG 1g.10gb, 9728, 13, [N/A]\r\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].memory_total, 9728);
  EXPECT_DOUBLE_EQ((*gpus)[0].utilization, -1.0);
}

TEST(NvidiaSmi, NoGpusIsAnEmptyListAndBadLinesNameLineAndField) {
  auto none = ParseNvidiaSmi("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {
           Case{"0, GPU-a, NVIDIA H200, 143771, 0\n", "line 1: expected 6 fields"},
           Case{"\n0, GPU-a, NVIDIA H200, lots, 0, 0\n", "line 2: memory.total: expected"},
           Case{"x, GPU-a, NVIDIA H200, 1, 0, 0\n", "line 1: index: expected"},
           Case{"0, GPU-a, NVIDIA H200, 1, 0, 250\n", "utilization.gpu: above 100"},
           Case{"0, GPU-a, , 1, 0, 0\n", "name: empty"},
           Case{"0, GPU-a, NVIDIA H200, -4, 0, 0\n", "memory.total"},
       }) {
    auto r = ParseNvidiaSmi(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
  }
}

TEST(Meminfo, TotalAndAvailableInMiB) {
  auto m = ParseMeminfo(
      "MemTotal:       131891520 kB\nMemFree:         1200000 kB\n"
      "MemAvailable:   120000000 kB\nBuffers:           20480 kB\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->total, 131891520 / 1024);
  EXPECT_EQ(m->available, 120000000 / 1024);
}

TEST(Meminfo, AMissingTotalOrABadValueIsAnError) {
  EXPECT_FALSE(ParseMeminfo("MemFree: 5 kB\n").ok());
  auto bad = ParseMeminfo("MemTotal: many kB\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("MemTotal"), std::string::npos);
  EXPECT_FALSE(ParseMeminfo("MemTotal: 5 MB\n").ok());
}

}  // namespace
}  // namespace tessera
