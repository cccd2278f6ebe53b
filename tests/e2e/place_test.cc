// tessera place through the real binary: one JSON object per task with job, task, cluster,
// node and devices; a gang that cannot fit its topology is pending with reasons and the run
// exits 3; the enterprise example placed under its policy rules; bad flags exit 2.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using testing::RunTessera;

const std::string kSmall = std::string(TESSERA_SOURCE_DIR) + "/examples/small/fleet.yaml";
using testing::kEnterprise;

// `-o json` prints one object per line.
std::vector<nlohmann::json> Rows(const std::string& out) {
  std::vector<nlohmann::json> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '{') rows.push_back(nlohmann::json::parse(line));
  return rows;
}

TEST(Place, JsonNamesClusterNodeAndDevicesPerTask) {
  std::string out;
  ASSERT_EQ(RunTessera("place --fleet " + kSmall + " --jobs " + kSmall + " -o json", &out), 0)
      << out;
  auto rows = Rows(out);
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
  ASSERT_EQ(RunTessera("place --fleet " + kSmall + " --jobs " + kSmall, &out), 0);
  EXPECT_NE(out.find("hello-train  worker-0  placed"), std::string::npos) << out;
  EXPECT_NE(out.find("STATUS"), std::string::npos) << out;
  EXPECT_NE(out.find("2 task(s) placed, 0 pending or infeasible"), std::string::npos) << out;
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
  ASSERT_EQ(RunTessera("place --fleet " + kSmall + " --jobs " + jobs.string() + " -o json", &out),
            3)
      << out;
  auto rows = Rows(out);
  int pending = 0;
  for (const auto& r : rows) {
    if (!r.contains("pending")) continue;
    ++pending;
    EXPECT_EQ(r["outcome"], "pending");
    ASSERT_FALSE(r["reasons"].empty());
    EXPECT_NE(r["summary"].get<std::string>().find("nodes fit"), std::string::npos);
  }
  EXPECT_EQ(pending, 4);  // two gangs of two tasks
  EXPECT_NE(out.find("4 task(s) placed, 4 pending or infeasible"), std::string::npos) << out;
  // The table says the same with a STATUS and a REASON.
  ASSERT_EQ(RunTessera("place --fleet " + kSmall + " --jobs " + jobs.string(), &out), 3) << out;
  EXPECT_NE(out.find("c            w-1       pending"), std::string::npos) << out;
  EXPECT_NE(out.find("no leaf holds the gang's 16 free devices"), std::string::npos) << out;
  fs::remove(jobs);
}

// A preferred level is met whenever a domain of it holds the gang, and each placed row says
// whether it was.
TEST(Place, RowsSayWhetherThePreferredLevelWasMet) {
  fs::path jobs =
      fs::temp_directory_path() / ("tessera-prefer-" + std::to_string(::getpid()) + ".yaml");
  // hello-train fills one leaf; x (4 A100) fits one NVLink island of the other; y (12 A100)
  // fits no node.
  std::ofstream(jobs) << R"(jobs:
  - {name: x, class: training, tenant: demo/team, gang: {require: leaf, prefer: node},
     taskGroups: [{name: w, count: 2, cpu: 8, memory: 64Gi, devices: {count: 2, models: [A100]}}]}
  - {name: y, class: training, tenant: demo/team, gang: {require: leaf, prefer: node},
     taskGroups: [{name: w, count: 3, cpu: 8, memory: 64Gi, devices: {count: 4, models: [A100]}}]}
)";
  std::string out;
  ASSERT_EQ(RunTessera("place --fleet " + kSmall + " --jobs " + jobs.string() + " -o json", &out),
            0)
      << out;
  std::map<std::string, std::set<bool>> met;
  std::map<std::string, std::set<std::string>> levels;
  for (const auto& r : Rows(out)) {
    std::string job = r["job"];
    if (r.contains("preferred_level_met")) met[job].insert(r["preferred_level_met"].get<bool>());
    levels[job].insert(r["level"].get<std::string>());
  }
  EXPECT_EQ(met["x"], std::set<bool>{true}) << out;
  EXPECT_EQ(levels["x"], std::set<std::string>{"island"}) << out;  // tighter than a node
  EXPECT_EQ(met["y"], std::set<bool>{false}) << out;
  EXPECT_EQ(levels["y"], std::set<std::string>{"leaf"}) << out;
  EXPECT_EQ(met.count("hello-train"), 0u) << "hello-train names no preferred level: " << out;
  fs::remove(jobs);
}

// The enterprise example under its rules (examples/enterprise/policies.yaml): every hard rule
// kept, dedicated clusters before shared before elastic, the fastest model of a tier first.
TEST(Place, EnterpriseJobsKeepTheirRulesTiersAndSpeeds) {
  std::string out;
  ASSERT_EQ(
      RunTessera("place --fleet " + kEnterprise + " --jobs " + kEnterprise + " -o json", &out), 0)
      << out.substr(0, 2000);
  auto rows = Rows(out);
  ASSERT_EQ(rows.size(), 366u);
  std::map<std::string, std::set<std::string>> clusters, regions, models, tiers;
  for (const auto& r : rows) {
    ASSERT_EQ(r["outcome"], "placed") << r.dump();
    std::string job = r["job"];
    clusters[job].insert(r["cluster"].get<std::string>());
    regions[job].insert(r["region"].get<std::string>());
    tiers[job].insert(r["tier"].get<std::string>());
    if (r.contains("model")) models[job].insert(r["model"].get<std::string>());
    for (const auto& [part, value] : r["score"].items()) {
      double v = value.get<double>();
      EXPECT_EQ(v, std::round(v * 1e4) / 1e4) << "scores are rounded: " << r.dump();
    }
  }
  // batch-off-training-fabric and the residency of ads-clicklogs (cn-south, cn-east).
  for (const std::string& c : clusters["ctr-feature-backfill"])
    EXPECT_TRUE(c != "north-h800" && c != "north-a800" && c != "west-ascend") << c;
  for (const std::string& r : regions["ctr-feature-backfill"])
    EXPECT_TRUE(r == "cn-south" || r == "cn-east") << r;
  // research-stays-onshore.
  EXPECT_FALSE(regions["vision-notebook-alice"].contains("ap-southeast"));
  // customer-chats-east may not leave cn-east.
  EXPECT_EQ(regions["assistant-sft"], std::set<std::string>{"cn-east"});
  // The fleet has room on dedicated and shared clusters for everything: nothing bursts.
  for (const auto& [job, t] : tiers)
    EXPECT_FALSE(t.contains("elastic")) << job;
  // H800 (speed 1.0) is free, so the flagship run does not take A800 (0.5).
  EXPECT_EQ(models["llm-pretrain-70b"], std::set<std::string>{"H800"});
  // serving-near-users.
  for (const char* svc : {"assistant-chat", "search-rerank", "assistant-sg"})
    for (const std::string& c : clusters[svc])
      EXPECT_TRUE(c == "east-serve" || c == "south-shared" || c == "cloud-east" ||
                  c == "cloud-apse")
          << svc << " on " << c;
  // The rule kinds a dry run does not apply are named once.
  EXPECT_NE(out.find("it does not apply these rules: weights (3), preemption (3), burst (2), "
                     "reservation (2), idleReclaim (3)"),
            std::string::npos);
}

TEST(Place, AJobItsRulesExcludeEverywhereIsInfeasibleNamingTheRule) {
  fs::path jobs =
      fs::temp_directory_path() / ("tessera-place-rules-" + std::to_string(::getpid()) + ".yaml");
  // Batch work reading the ads click logs (cn-south, cn-east) on H800: the 40-node gang fits
  // north-h800, which batch-off-training-fabric and the residency exclude, but not the 16
  // H800 nodes of east-serve, the only H800 cluster left.
  std::ofstream(jobs) << R"(jobs:
  - {name: big-batch, class: batch, tenant: consumer/ads/ctr, datasets: [ads-clicklogs],
     taskGroups: [{name: w, count: 40, cpu: 8, memory: 64Gi, devices: {count: 8, models: [H800]}}]}
)";
  std::string out;
  std::string files = kEnterprise + "/catalog.yaml " + kEnterprise + "/regions.yaml " +
                      kEnterprise + "/datasets.yaml " + kEnterprise + "/tenants.yaml " +
                      kEnterprise + "/policies.yaml " + kEnterprise + "/clusters-*.yaml";
  ASSERT_EQ(RunTessera("place --fleet " + files + " --jobs " + jobs.string() + " -o json", &out), 3)
      << out;
  auto rows = Rows(out);
  ASSERT_EQ(rows.size(), 40u);
  EXPECT_EQ(rows[0]["outcome"], "infeasible") << rows[0].dump();
  std::set<std::string> codes;
  for (const auto& reason : rows[0]["reasons"])
    codes.insert(reason["code"].get<std::string>());
  EXPECT_TRUE(codes.contains("ClusterNotAllowed")) << rows[0].dump();
  EXPECT_TRUE(codes.contains("DataResidency")) << rows[0].dump();
  std::string by = rows[0]["excluded_by"];
  EXPECT_NE(by.find("rule batch-off-training-fabric"), std::string::npos) << by;
  EXPECT_NE(by.find("residency of dataset ads-clicklogs"), std::string::npos) << by;
  fs::remove(jobs);
}

TEST(Place, BadPolicyOrConfigExitsTwo) {
  std::string out;
  EXPECT_EQ(RunTessera("place --fleet " + kSmall + " --jobs " + kSmall + " --policy nope", &out),
            2);
  EXPECT_NE(out.find("unknown placement policy"), std::string::npos) << out;
  EXPECT_EQ(RunTessera("place --fleet /nonexistent.yaml --jobs " + kSmall, &out), 2);
}

}  // namespace
}  // namespace tessera
