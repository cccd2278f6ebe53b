// tessera place through the real binary: the daemon's engine on an empty fleet, one JSON object
// per task with job, task, cluster, node and devices; a gang that cannot fit its topology is
// pending with reasons and the run exits 3; the enterprise example under every rule (quotas
// included); the same answer as a daemon given the same queue; bad flags exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testutil/daemon_process.h"
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
  // Three gangs of 2 x 8 A100 per leaf: two fit (one per leaf), the third must wait. Their
  // tenant has no quota (demo's would hold them back before any placement).
  std::ofstream(jobs) << R"(tenants:
  - name: lab
jobs:
  - {name: a, class: training, tenant: lab, gang: {require: leaf},
     taskGroups: [{name: w, count: 2, cpu: 8, memory: 64Gi, devices: {count: 8, models: [A100]}}]}
  - {name: b, class: training, tenant: lab, gang: {require: leaf},
     taskGroups: [{name: w, count: 2, cpu: 8, memory: 64Gi, devices: {count: 8, models: [A100]}}]}
  - {name: c, class: training, tenant: lab, gang: {require: leaf},
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
    EXPECT_EQ(r["reason"], "InsufficientResources");
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
  std::ofstream(jobs) << R"(tenants:
  - name: lab
jobs:
  - {name: x, class: training, tenant: lab, gang: {require: leaf, prefer: node},
     taskGroups: [{name: w, count: 2, cpu: 8, memory: 64Gi, devices: {count: 2, models: [A100]}}]}
  - {name: y, class: training, tenant: lab, gang: {require: leaf, prefer: node},
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
// kept, dedicated clusters before shared before elastic, the fastest model of a tier first,
// and what only the engine applies: quotas, burst waits and the services' replicas as their
// load asks for them, which go first (priority high) and leave assistant-sft waiting.
// `place -o json` of `jobs` on the example enterprise without its own jobs and services, which
// leaves some waiting (exit 3): its rows.
std::vector<nlohmann::json> PlaceOnTheEnterprise(const fs::path& jobs) {
  const std::string files = kEnterprise + "/catalog.yaml " + kEnterprise + "/regions.yaml " +
                            kEnterprise + "/datasets.yaml " + kEnterprise + "/tenants.yaml " +
                            kEnterprise + "/policies.yaml " + kEnterprise + "/clusters-*.yaml";
  std::string out;
  EXPECT_EQ(RunTessera("place --fleet " + files + " --jobs " + jobs.string() + " -o json", &out), 3)
      << out;
  return Rows(out);
}

TEST(Place, EnterpriseJobsKeepTheirRulesTiersAndSpeeds) {
  std::string out;
  ASSERT_EQ(
      RunTessera("place --fleet " + kEnterprise + " --jobs " + kEnterprise + " -o json", &out), 3)
      << out.substr(0, 2000);
  auto rows = Rows(out);
  std::map<std::string, std::set<std::string>> clusters, regions, models, tiers;
  std::map<std::string, int> tasks;
  for (const auto& r : rows) {
    std::string job = r["job"];
    ++tasks[job];
    if (r.contains("pending")) {
      // The customers' chats may not leave cn-east, where the H800 nodes hold replicas.
      EXPECT_EQ(job, "assistant-sft") << r.dump();
      EXPECT_EQ(r["reason"], "InsufficientResources") << r.dump();
      EXPECT_NE(r["summary"].get<std::string>().find("east-serve: Fragmented"), std::string::npos)
          << r.dump();
      EXPECT_NE(r["excluded_by"].get<std::string>().find("customer-chats-east"), std::string::npos)
          << r.dump();
      continue;
    }
    if (job == "ctr-feature-backfill") {
      // CPU-only work on CPU-only nodes, its cluster chosen by CPU price and room.
      EXPECT_NE(r["node"].get<std::string>().find("-cpu-"), std::string::npos) << r.dump();
      EXPECT_NE(r["where"].get<std::string>().find("(shared, CPU only, score "), std::string::npos)
          << r.dump();
    }
    clusters[job].insert(r["cluster"].get<std::string>());
    regions[job].insert(r["region"].get<std::string>());
    tiers[job].insert(r["tier"].get<std::string>());
    if (r.contains("model")) models[job].insert(r["model"].get<std::string>());
    for (const auto& [part, value] : r["score"].items()) {
      double v = value.get<double>();
      EXPECT_EQ(v, std::round(v * 1e4) / 1e4) << "scores are rounded: " << r.dump();
    }
    // On several clusters every start says why this cluster.
    EXPECT_FALSE(r["where"].get<std::string>().empty()) << r.dump();
  }
  EXPECT_EQ(tasks["assistant-sft"], 2);
  EXPECT_EQ(tasks["llm-pretrain-70b"], 64);
  // batch-off-training-fabric and the residency of ads-clicklogs (cn-south, cn-east).
  for (const std::string& c : clusters["ctr-feature-backfill"])
    EXPECT_TRUE(c != "north-h800" && c != "north-a800" && c != "west-ascend") << c;
  for (const std::string& r : regions["ctr-feature-backfill"])
    EXPECT_TRUE(r == "cn-south" || r == "cn-east") << r;
  // research-stays-onshore.
  EXPECT_FALSE(regions["vision-notebook-alice"].contains("ap-southeast"));
  // Nothing has waited the burst rules' 30 minutes (5 for inference) at time 0: nothing bursts.
  for (const auto& [job, t] : tiers)
    EXPECT_FALSE(t.contains("elastic")) << job;
  // H800 (speed 1.0) is free, so the flagship run does not take A800 (0.5).
  EXPECT_EQ(models["llm-pretrain-70b"], std::set<std::string>{"H800"});
  // serving-near-users, and at least each service's replicas.min.
  for (const char* svc : {"assistant-chat", "search-rerank", "assistant-sg"}) {
    EXPECT_GE(tasks[svc], 2) << svc;
    for (const std::string& c : clusters[svc])
      EXPECT_TRUE(c == "east-serve" || c == "south-shared" || c == "cloud-east" ||
                  c == "cloud-apse")
          << svc << " on " << c;
  }
  // Every rule kind applies: no notice of rules left out.
  EXPECT_EQ(out.find("does not apply"), std::string::npos) << out.substr(0, 500);
}

// The example's serving-h800-for-the-product: east-serve's H800 are the consumer product's;
// research training that may only run there (its dataset stays in cn-east) borrows them while
// idle if preemptible, and waits, naming the rule, if not.
TEST(Place, TheServingH800sAreLentToResearchTrainingOnlyPreemptibly) {
  fs::path jobs =
      fs::temp_directory_path() / ("tessera-place-serving-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(jobs) << R"(jobs:
  - {name: borrows-idle, class: training, tenant: ai-lab/applied/vision, preemptible: true,
     runtime: 2h, datasets: [customer-chats-east],
     taskGroups: [{count: 2, cpu: 64, memory: 512Gi, devices: {count: 8, models: [H800]}}]}
  - {name: may-not-hold, class: training, tenant: ai-lab/applied/vision, preemptible: false,
     runtime: 2h, datasets: [customer-chats-east],
     taskGroups: [{count: 2, cpu: 64, memory: 512Gi, devices: {count: 8, models: [H800]}}]}
)";
  auto rows = PlaceOnTheEnterprise(jobs);
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& r : rows) {
    if (r["job"] == "borrows-idle") {
      EXPECT_EQ(r["cluster"], "east-serve") << r.dump();
    } else {
      EXPECT_TRUE(r.contains("pending")) << r.dump();
      EXPECT_NE(r["summary"].get<std::string>().find(
                    "reservation serving-h800-for-the-product: 128 H800 held"),
                std::string::npos)
          << r.dump();
    }
  }
  fs::remove(jobs);
}

TEST(Place, AJobItsRulesExcludeEverywhereIsInfeasibleNamingTheRule) {
  fs::path jobs =
      fs::temp_directory_path() / ("tessera-place-rules-" + std::to_string(::getpid()) + ".yaml");
  // Batch work reading the ads click logs (cn-south, cn-east) on H800: the 40-node gang fits
  // north-h800, which batch-off-training-fabric and the residency exclude, but not the 16
  // H800 nodes of east-serve, the only H800 cluster left.
  // Its tenant has no quota: consumer's would refuse it before any placement.
  std::ofstream(jobs) << R"(tenants:
  - name: lab
jobs:
  - {name: big-batch, class: batch, tenant: lab, datasets: [ads-clicklogs],
     taskGroups: [{name: w, count: 40, cpu: 8, memory: 64Gi, devices: {count: 8, models: [H800]}}]}
)";
  auto rows = PlaceOnTheEnterprise(jobs);
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

// `place` builds the daemon's engine (engine/core.h): a daemon on configuration `config` (a
// directory) given the jobs of `jobs` in one cycle starts the same jobs on the same nodes and
// devices, and leaves the same ones waiting. `dir` holds the daemon's state.
void ExpectTheDaemonAgreesWithPlace(const fs::path& dir, const fs::path& config,
                                    const fs::path& jobs) {
  // What place says: job -> its tasks' node and devices, in task order ("" when waiting).
  using Where = std::vector<std::string>;
  auto where_of = [](const std::string& node, const nlohmann::json& devices) {
    std::string w = node;
    for (const auto& d : devices)
      w +=
          " " + std::to_string(d["index"].get<int>()) + ":" + std::to_string(d["milli"].get<int>());
    return w;
  };
  std::string out;
  // 0: everything placed; 3: some waits.
  const int placed_all = RunTessera(
      "place --fleet " + config.string() + " --jobs " + jobs.string() + " -o json", &out, false);
  ASSERT_TRUE(placed_all == 0 || placed_all == 3) << placed_all << "\n" << out.substr(0, 2000);
  std::map<std::string, Where> placed;
  for (const auto& r : Rows(out))
    placed[r["job"]].push_back(r.contains("pending") ? "" : where_of(r["node"], r["devices"]));

  // The daemon, its cycles 3 s apart so that the submissions below arrive for one cycle.
  testing::DaemonProcess d(dir / "daemon", config.string());
  d.set_extra_args({"--cycle-interval", "3s"});
  ASSERT_TRUE(d.Start()) << d.log();
  ASSERT_EQ(RunTessera("submit -f " + jobs.string(), &out, true, d.CliEnv()), 0) << out;
  nlohmann::json listed;
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(RunTessera("get jobs -o json --limit 1000", &out, false, d.CliEnv()), 0) << out;
    listed = nlohmann::json::parse(out, nullptr, false);
    bool decided = listed["items"].size() == placed.size();
    for (const auto& j : listed["items"])
      decided = decided && (j["state"] == "running" || j.value("reason", "") != "New");
    if (decided) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(listed["items"].size(), placed.size()) << listed.dump().substr(0, 2000);
  std::map<std::string, Where> ran;
  for (const auto& j : listed["items"]) {
    Where w;
    if (j["state"] == "running") {
      for (const auto& t : j["placement"])
        w.push_back(where_of(t["node"], t["devices"]));
    }
    ran[j["name"]] = w;
  }
  for (const auto& [job, tasks] : placed) {
    Where want = tasks;
    if (std::all_of(want.begin(), want.end(), [](const std::string& w) { return w.empty(); }))
      want.clear();  // a waiting job has no placement in the daemon's view
    EXPECT_EQ(ran[job], want) << job;
  }
  EXPECT_EQ(d.Stop(), 0) << d.log();
}

TEST(Place, TheDaemonGivesTheSameAnswerForTheSameQueue) {
  fs::path dir = fs::temp_directory_path() / ("tessera-place-daemon-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "config");
  // The small example's fleet (not its job) and a tenant without quotas.
  std::ifstream small(kSmall);
  std::ofstream fleet(dir / "config" / "fleet.yaml");
  for (std::string line; std::getline(small, line) && line.rfind("tenants:", 0) != 0;)
    fleet << line << "\n";
  fleet << "tenants:\n  - name: lab\n";
  fleet.close();
  const fs::path jobs = dir / "jobs.yaml";
  std::ofstream(jobs) << R"(jobs:
  - {name: wide, class: training, tenant: lab, runtime: 2h, gang: {require: leaf},
     taskGroups: [{name: w, count: 2, cpu: 8, memory: 64Gi, devices: {count: 8, models: [A100]}}]}
  - {name: pair, class: training, tenant: lab, runtime: 2h, gang: {require: leaf, prefer: node},
     taskGroups: [{name: w, count: 2, cpu: 8, memory: 64Gi, devices: {count: 2, models: [A100]}}]}
  - {name: share, class: eval, tenant: lab, runtime: 2h,
     taskGroups: [{name: e, count: 3, cpu: 2, memory: 8Gi, devices: {fraction: 0.5, models: [T4]}}]}
  - {name: etl, class: batch, tenant: lab, runtime: 2h,
     taskGroups: [{name: s, count: 2, cpu: 16, memory: 32Gi}]}
  - {name: too-wide, class: training, tenant: lab, runtime: 2h, gang: {require: leaf},
     taskGroups: [{name: w, count: 2, cpu: 8, memory: 64Gi, devices: {count: 8, models: [A100]}}]}
  - {name: behind, class: training, tenant: lab, runtime: 3h,
     taskGroups: [{name: w, count: 1, cpu: 8, memory: 64Gi, devices: {count: 8, models: [A100]}}]}
)";
  ExpectTheDaemonAgreesWithPlace(dir, dir / "config", jobs);
  fs::remove_all(dir);
}

// The same on the example enterprise and its ten jobs (every rule kind, quotas, budgets,
// datasets, 2,012 nodes). Its services are left out: a daemon starts a configuration's
// services when it starts, before any job is submitted, where `place` queues them after the
// jobs.
TEST(Place, TheDaemonGivesTheSameAnswerForTheEnterpriseExamplesJobs) {
  fs::path dir =
      fs::temp_directory_path() / ("tessera-place-enterprise-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "config");
  for (const auto& f : fs::directory_iterator(kEnterprise)) {
    const std::string name = f.path().filename().string();
    if (name == "jobs.yaml" || name == "services.yaml") continue;
    fs::copy_file(f.path(), dir / "config" / name);
  }
  ExpectTheDaemonAgreesWithPlace(dir, dir / "config", fs::path(kEnterprise) / "jobs.yaml");
  fs::remove_all(dir);
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
