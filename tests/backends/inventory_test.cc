// The node agent's inventory parsers: nvidia-smi's CSV, npu-smi's table and /proc/meminfo, as
// the tools print them (kNvidiaSmiQuery, `npu-smi info` in the layouts of its releases 23-26),
// and their malformed forms.
#include "backends/local/inventory.h"

#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

namespace tessera {
namespace {

// Empty output is no devices; each of `bad` (text, what the error says) is an error.
template <typename Parse>
void ExpectNoneAndErrors(Parse parse,
                         std::initializer_list<std::pair<const char*, const char*>> bad) {
  auto none = parse("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  for (const auto& [text, says] : bad) {
    auto r = parse(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().message();
  }
}

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
  ExpectNoneAndErrors(
      [](std::string_view t) { return ParseNvidiaSmi(t); },
      {
          {"0, GPU-a, NVIDIA H200, 143771, 0\n", "line 1: expected 6 fields"},
          {"\n0, GPU-a, NVIDIA H200, lots, 0, 0\n", "line 2: memory.total: expected"},
          {"x, GPU-a, NVIDIA H200, 1, 0, 0\n", "line 1: index: expected"},
          {"0, GPU-a, NVIDIA H200, 1, 0, 250\n", "utilization.gpu: above 100"},
          {"0, GPU-a, , 1, 0, 0\n", "name: empty"},
          {"0, GPU-a, NVIDIA H200, -4, 0, 0\n", "memory.total"},
      });
}

TEST(NvidiaSmi, WhatARealH200HostPrinted) {
  // Recorded by bench/gpu-host on a host with one H200 (driver for CUDA 13), idle.
  auto gpus =
      ParseNvidiaSmi("0, GPU-0321fd62-2dee-7ed5-4a41-5b88d801a79d, NVIDIA H200, 143771, 0, 0\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].name, "NVIDIA H200");
  EXPECT_EQ((*gpus)[0].memory_total, 143771);
  EXPECT_DOUBLE_EQ((*gpus)[0].utilization, 0.0);
}

// `npu-smi info` on an Atlas 800T A2 (one 910B chip per NPU, an HBM column), with the process
// table after the devices.
std::string NpuSmiAtlasA2() {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) +
                   "/tests/backends/testdata/npu-smi-atlas-a2.txt");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(NpuSmi, EveryNpuWithItsAICoreAndHbm) {
  const std::string table = NpuSmiAtlasA2();
  ASSERT_FALSE(table.empty());
  auto npus = ParseNpuSmi(table);
  ASSERT_TRUE(npus.ok()) << npus.status().ToString();
  ASSERT_EQ(npus->size(), 2u);  // the process table adds none
  EXPECT_EQ((*npus)[0].index, 0);
  EXPECT_EQ((*npus)[0].name, "910B3");
  EXPECT_EQ((*npus)[0].uuid, "npu0.chip0@0000:C1:00.0");
  EXPECT_DOUBLE_EQ((*npus)[0].utilization, 0.57);
  EXPECT_EQ((*npus)[0].memory_used, 41230);  // "41230/ 65536": HBM, not the empty DDR pair
  EXPECT_EQ((*npus)[0].memory_total, 65536);
  EXPECT_EQ((*npus)[1].index, 1);
  EXPECT_EQ((*npus)[1].memory_used, 3307);
  EXPECT_DOUBLE_EQ((*npus)[1].utilization, 0.0);
}

TEST(NpuSmi, TwoDevicesPerCardAreIndexedByTheirDeviceColumn) {
  // Atlas A3: an NPU row per chip, the chip row's Phy-ID is the runtime's device index.
  auto a3 = ParseNpuSmi(R"(
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip  Phy-ID              | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
| 0     Ascend910           | OK            | 158.0       36                0    / 0             |
| 0     0                   | 0000:9C:00.0  | 12          0    / 0          3120 / 65536         |
| 0     Ascend910           | OK            | -           36                0    / 0             |
| 1     1                   | 0000:9E:00.0  | 88          0    / 0          60001/ 65536         |
| 1     Ascend910           | OK            | 160.2       37                0    / 0             |
| 0     2                   | 0000:37:00.0  | NA          0    / 0          2900 / 65536         |
)");
  ASSERT_TRUE(a3.ok()) << a3.status().ToString();
  ASSERT_EQ(a3->size(), 3u);
  EXPECT_EQ((*a3)[1].index, 1);
  EXPECT_EQ((*a3)[1].uuid, "npu0.chip1@0000:9E:00.0");
  EXPECT_DOUBLE_EQ((*a3)[1].utilization, 0.88);
  EXPECT_EQ((*a3)[2].index, 2);
  EXPECT_DOUBLE_EQ((*a3)[2].utilization, -1.0);  // "NA": unknown, not idle
  // Atlas 300I Duo (310P3): a Device column and no HBM: the device memory is the memory.
  auto duo = ParseNpuSmi(R"(
| NPU     Name                  | Health          | Power(W)     Temp(C)           Hugepages-Usage(page) |
| Chip    Device                | Bus-Id          | AICore(%)    Memory-Usage(MB)                        |
| 3       310P3                 | OK              | NA           58                0     / 0             |
| 0       0                     | 0000:01:00.0    | 4            12040/ 44280                            |
| 3       310P3                 | OK              | NA           58                0     / 0             |
| 1       1                     | 0000:01:00.0    | 0            1733 / 43693                            |
| 7       310B4                 | Alarm           | 0.0          63                15    / 15            |
| 0       2                     | NA              | 0            3001 / 15609                            |
)");
  ASSERT_TRUE(duo.ok()) << duo.status().ToString();
  ASSERT_EQ(duo->size(), 3u);
  EXPECT_EQ((*duo)[0].index, 0);
  EXPECT_EQ((*duo)[0].name, "310P3");
  EXPECT_EQ((*duo)[0].memory_used, 12040);
  EXPECT_EQ((*duo)[0].memory_total, 44280);
  EXPECT_EQ((*duo)[1].uuid, "npu3.chip1@0000:01:00.0");
  EXPECT_EQ((*duo)[2].uuid, "npu7.chip0");  // no bus id
  EXPECT_EQ((*duo)[2].memory_total, 15609);
}

TEST(NpuSmi, NoNpusIsAnEmptyListAndBadRowsNameLineAndField) {
  ExpectNoneAndErrors(
      [](std::string_view t) { return ParseNpuSmi(t); },
      {
          {"| 0 | 0000:C1:00.0 | 5 0 / 0 10 / 20 |\n", "line 1: a chip row before any NPU row"},
          {"| 0 910B3 | OK | 1 2 |\n| 0 | 0000:C1:00.0 | busy 0 / 0 |\n", "line 2: AICore(%)"},
          {"| 0 910B3 | OK | 1 2 |\n| 0 | 0000:C1:00.0 | 101 0 / 0 |\n",
           "AICore(%): expected 0..100"},
          {"| 0 910B3 | OK | 1 2 |\n| 0 | 0000:C1:00.0 | 5 a / 10 |\n", "Memory-Usage(MB)"},
          {"| 0 910B3 | OK | 1 2 |\n| 0 | 0000:C1:00.0 | 5 10 / |\n", "Memory-Usage(MB)"},
          {"| 0 910B3 | OK | 1 2 |\n| 0 x | 0000:C1:00.0 | 5 0 / 0 |\n", "line 2: Device"},
          {"| 9999 910B3 | OK | 1 2 |\n", "line 1: NPU"},
          {"| 0 | OK | 1 2 |\n", "Name: missing"},
      });
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
