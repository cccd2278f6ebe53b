// tessera place through the real binary: JSON per task with job, task, cluster, node and
// devices; a gang that cannot fit its topology is pending with reasons; bad flags exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

int Tessera(const std::string& args, std::string* out) {
  return testing::RunTessera(args, out);
}

const std::string kSmall = std::string(TESSERA_SOURCE_DIR) + "/examples/small/fleet.yaml";

TEST(Place, JsonNamesClusterNodeAndDevicesPerTask) {
  std::string out;
  ASSERT_EQ(Tessera("place --fleet " + kSmall + " --jobs " + kSmall + " -o json", &out), 0) << out;
  auto rows = nlohmann::json::parse(out);
  ASSERT_EQ(rows.size(), 2u);  // hello-train: 2 workers of 8 A100, gang within one leaf
  std::set<std::string> nodes;
  for (const auto& r : rows) {
    EXPECT_EQ(r["job"], "hello-train");
    EXPECT_EQ(r["cluster"], "train");
    EXPECT_EQ(r["devices"].size(), 8u);
    EXPECT_EQ(r["devices"][0]["milli"], 1000);
    // "Why here": the default policy's score parts.
    EXPECT_TRUE(r["score"].contains("expected-waste-decrease")) << r.dump();
    EXPECT_TRUE(r["score"].contains("best-fit")) << r.dump();
    nodes.insert(r["node"].get<std::string>());
  }
  EXPECT_EQ(nodes.size(), 2u);
  // Both nodes under one leaf: train-gpu-0000/0001 or 0002/0003.
  EXPECT_TRUE(nodes == std::set<std::string>({"train-gpu-0000", "train-gpu-0001"}) ||
              nodes == std::set<std::string>({"train-gpu-0002", "train-gpu-0003"}));
  ASSERT_EQ(Tessera("place --fleet " + kSmall + " --jobs " + kSmall, &out), 0);
  EXPECT_NE(out.find("hello-train  worker-0"), std::string::npos) << out;
}

TEST(Place, AGangTooBigForItsLeafIsPendingWithReasons) {
  fs::path jobs =
      fs::temp_directory_path() / ("tessera-place-" + std::to_string(::getpid()) + ".yaml");
  // Three gangs of 2 x 8 A100 per leaf: two fit (one per leaf), the third must wait.
  std::ofstream(jobs) << R"(jobs:
  - {name: a, class: training, tenant: demo/team, gang: {require: leaf},
     taskGroups: [{name: w, count: 2, cpu: 8, memory: 64Gi, devices: {count: 8, models: [A100]}}]}
  - {name: b, class: training, tenant: demo/team, gang: {require: leaf},
     taskGroups: [{name: w, count: 2, cpu: 8, memory: 64Gi, devices: {count: 8, models: [A100]}}]}
  - {name: c, class: training, tenant: demo/team, gang: {require: leaf},
     taskGroups: [{name: w, count: 2, cpu: 8, memory: 64Gi, devices: {count: 8, models: [A100]}}]}
)";
  std::string out;
  // The small example's own job is loaded too (same file as the fleet): 4 gangs, 2 leaves.
  ASSERT_EQ(Tessera("place --fleet " + kSmall + " --jobs " + jobs.string() + " -o json", &out), 0)
      << out;
  auto rows = nlohmann::json::parse(out);
  int pending = 0;
  for (const auto& r : rows) {
    if (!r.contains("pending")) continue;
    ++pending;
    EXPECT_EQ(r["outcome"], "pending");
    ASSERT_FALSE(r["reasons"].empty());
    EXPECT_NE(r["summary"].get<std::string>().find("nodes fit"), std::string::npos);
  }
  EXPECT_EQ(pending, 4);  // two gangs of two tasks
  fs::remove(jobs);
}

TEST(Place, BadPolicyOrConfigExitsTwo) {
  std::string out;
  EXPECT_EQ(Tessera("place --fleet " + kSmall + " --jobs " + kSmall + " --policy nope", &out), 2);
  EXPECT_NE(out.find("unknown placement policy"), std::string::npos) << out;
  EXPECT_EQ(Tessera("place --fleet /nonexistent.yaml --jobs " + kSmall, &out), 2);
}

}  // namespace
}  // namespace tessera
