// tessera sim run through the real binary: the Gavel traces and the native JSONL format on
// examples/fleets/gavel-108.yaml, the documented outputs, byte-identical reruns, and
// line-numbered errors with exit 2 for malformed workloads and flags.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testutil/g1_fleet.h"
#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kSource = TESSERA_SOURCE_DIR;
const std::string kFleet = kSource + "/examples/fleets/gavel-108.yaml";
// The fixtures cut from the public traces (tests/data); the whole traces are the data suite's.
const std::string kGavel = std::string(TESSERA_TEST_DATA) + "/gavel/traces/msr_seed0/";

fs::path TempDir(const std::string& tag) {
  fs::path p =
      fs::temp_directory_path() / ("tessera-simrun-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

using testing::RunTessera;

void ExpectSummary(const json& s, const std::string& what) {
  for (const char* k : {"mean", "p50", "p95", "p99"}) {
    ASSERT_TRUE(s.contains(k)) << what << "." << k;
    EXPECT_TRUE(s[k].is_number()) << what << "." << k;
  }
  EXPECT_LE(s["p50"].get<double>(), s["p95"].get<double>()) << what;
  EXPECT_LE(s["p95"].get<double>(), s["p99"].get<double>()) << what;
}

TEST(SimRun, GavelTraceUnderThreePoliciesWritesTheDocumentedOutputs) {
  fs::path out = TempDir("gavel");
  std::string text;
  ASSERT_EQ(RunTessera("sim run --fleet " + kFleet + " --workload " + kGavel +
                           "51b7ef.trace --format gavel --policy fifo --compare las,hetero --out " +
                           out.string() + " --no-progress",
                       &text),
            0)
      << text;
  EXPECT_NE(text.find("hetero"), std::string::npos) << text;
  for (const char* policy : {"fifo", "las", "hetero"}) {
    SCOPED_TRACE(policy);
    fs::path dir = out / policy;
    json m = json::parse(testing::ReadText(dir / "metrics.json"));
    EXPECT_EQ(m["policy"], policy);
    EXPECT_EQ(m["jobs"]["submitted"], 18);
    EXPECT_EQ(m["jobs"]["completed"], 18);
    ExpectSummary(m["jct_s"], "jct_s");
    ExpectSummary(m["queue_s"], "queue_s");
    ExpectSummary(m["per_class"]["training"]["jct_s"], "per_class.training.jct_s");
    EXPECT_GT(m["gpu_alloc_ratio"]["mean"].get<double>(), 0);
    EXPECT_LE(m["gpu_alloc_ratio"]["mean"].get<double>(), 1);
    EXPECT_GT(m["makespan_s"].get<double>(), 0);
    EXPECT_TRUE(m["preemptions"].is_number_integer());
    // A job's completion time is at least its queueing time.
    EXPECT_GE(m["jct_s"]["mean"].get<double>(), m["queue_s"]["mean"].get<double>());

    std::string series = testing::ReadText(dir / "timeseries.csv");
    EXPECT_EQ(series.rfind("time_s,", 0), 0u) << series.substr(0, 80);
    // Every job starts and finishes in the decision log; each line is JSON with a reason.
    std::istringstream log(testing::ReadText(dir / "decisions.jsonl"));
    int starts = 0, finishes = 0;
    for (std::string line; std::getline(log, line);) {
      json d = json::parse(line);
      ASSERT_TRUE(d.contains("reason")) << line;
      starts += d["kind"] == "start";
      finishes += d["kind"] == "finish";
    }
    EXPECT_GE(starts, 18);
    EXPECT_EQ(finishes, 18);
  }
  json all = json::parse(testing::ReadText(out / "metrics.json"));
  for (const char* policy : {"fifo", "las", "hetero"})
    EXPECT_EQ(all[policy]["policy"], policy) << "the combined metrics.json is keyed by policy";
  EXPECT_TRUE(fs::exists(out / "report.html"));
  fs::remove_all(out);
}

// hetero on a cut of a Gavel trace (its first 120 jobs): every job completes under the three
// policies and hetero moves running jobs to faster models. That it lowers mean JCT against fifo
// and las on whole traces is the data suite's claim (tests/data_suite/gavel_test.cc).
TEST(SimRun, HeteroMigratesOnACutOfAGavelTrace) {
  fs::path out = TempDir("hetero");
  std::string text;
  ASSERT_EQ(RunTessera("sim run --fleet " + kFleet + " --workload " + kGavel +
                           "2869ce.trace --format gavel --policy fifo --compare las,hetero --out " +
                           out.string() + " --no-progress",
                       &text),
            0)
      << text;
  json m = json::parse(testing::ReadText(out / "metrics.json"));
  for (const char* p : {"fifo", "las", "hetero"}) {
    ASSERT_EQ(m[p]["jobs"]["submitted"], 120) << p;
    ASSERT_EQ(m[p]["jobs"]["completed"], 120) << p;
  }
  EXPECT_GT(m["hetero"]["engine"]["migrations"].get<int>(), 0);
  EXPECT_EQ(m["fifo"]["engine"]["migrations"].get<int>(), 0);
  fs::remove_all(out);
}

// Sia's Philly arrival files (the fixture keeps one of them whole): every job completes, each
// charged the work of its application's documented table.
TEST(SimRun, ASiaWorkloadRunsToCompletion) {
  fs::path out = TempDir("sia");
  std::string text;
  ASSERT_EQ(
      RunTessera("sim run --fleet " + kSource + "/examples/fleets/philly-64.yaml --workload " +
                     std::string(TESSERA_TEST_DATA) +
                     "/sia/philly/workload-1.csv --format sia --policy fifo --out " + out.string() +
                     " --no-progress",
                 &text),
      0)
      << text;
  json m = json::parse(testing::ReadText(out / "fifo" / "metrics.json"));
  EXPECT_EQ(m["jobs"]["submitted"], 160);
  EXPECT_EQ(m["jobs"]["completed"], 160);
  ExpectSummary(m["jct_s"], "jct_s");
  fs::remove_all(out);
}

TEST(SimRun, SameInputsAndSeedGiveByteIdenticalOutput) {
  fs::path a = TempDir("det-a"), b = TempDir("det-b");
  for (const fs::path& out : {a, b}) {
    std::string text;
    ASSERT_EQ(RunTessera("sim run --fleet " + kFleet + " --format synthetic --jobs 300 --seed 7 " +
                             "--policy las --compare hetero --mtbf V100=200h --out " +
                             out.string() + " --no-progress",
                         &text),
              0)
        << text;
  }
  for (const char* file : {"las/metrics.json", "las/timeseries.csv", "las/decisions.jsonl",
                           "hetero/metrics.json", "hetero/decisions.jsonl", "report.html"}) {
    std::string x = testing::ReadText(a / file), y = testing::ReadText(b / file);
    EXPECT_FALSE(x.empty()) << file;
    EXPECT_TRUE(x == y) << file << " differs between two runs with the same seed";
  }
  // Another seed draws another workload.
  fs::path c = TempDir("det-c");
  ASSERT_EQ(RunTessera("sim run --fleet " + kFleet + " --format synthetic --jobs 300 --seed 8 " +
                       "--policy las --out " + c.string() + " --no-progress"),
            0);
  EXPECT_NE(testing::ReadText(a / "las/decisions.jsonl"),
            testing::ReadText(c / "las/decisions.jsonl"));
  for (const fs::path& p : {a, b, c})
    fs::remove_all(p);
}

TEST(SimRun, TheExampleJsonlWorkloadRunsToCompletion) {
  fs::path out = TempDir("jsonl");
  std::string text;
  ASSERT_EQ(
      RunTessera("sim run --fleet " + kFleet + " --workload " + kSource +
                     "/examples/workloads/small.jsonl --format jsonl --policy backfill --out " +
                     out.string() + " --no-progress",
                 &text),
      0)
      << text;
  json m = json::parse(testing::ReadText(out / "backfill" / "metrics.json"));
  EXPECT_EQ(m["jobs"]["completed"], 6) << m.dump(2);
  for (const char* cls : {"training", "finetune", "batch", "eval"})
    EXPECT_TRUE(m["per_class"].contains(cls)) << cls;
  fs::remove_all(out);
}

TEST(SimRun, EveryStartOnTheEnterpriseFleetSaysWhichClusterAndWhy) {
  // The example enterprise (9 clusters in 5 regions): the global layer names each start's
  // cluster and why; a cluster passed over is never the one chosen.
  fs::path out = TempDir("enterprise");
  std::string text;
  ASSERT_EQ(RunTessera("sim run --fleet " + kSource +
                           "/examples/enterprise --format synthetic --jobs 300 --load 0.8 --out " +
                           out.string() + " --no-progress",
                       &text),
            0)
      << text;
  // No --policy: the example's scheduler section's (backfill, tessera), as the daemon runs it.
  json top = json::parse(testing::ReadText(out / "metrics.json"));
  ASSERT_TRUE(top.contains("backfill")) << top.dump().substr(0, 200);
  EXPECT_EQ(top["backfill"]["placement"], "tessera");
  std::istringstream lines(testing::ReadText(out / "backfill" / "decisions.jsonl"));
  std::string line;
  std::set<std::string> clusters;
  int starts = 0;
  while (std::getline(lines, line)) {
    json d = json::parse(line);
    if (d["kind"] != "start") continue;
    ++starts;
    ASSERT_TRUE(d.contains("cluster") && d.contains("where")) << line;
    const std::string cluster = d["cluster"];
    const std::string where = d["where"];
    clusters.insert(cluster);
    EXPECT_EQ(where.rfind(cluster + " (", 0), 0u) << line;
    size_t passed = where.find("; passed over: ");
    if (passed != std::string::npos) {
      std::string over = where.substr(passed);
      size_t fell = over.find("; fell back from ");
      EXPECT_EQ(over.substr(0, fell).find(" " + cluster + ": "), std::string::npos) << line;
    }
  }
  EXPECT_GE(starts, 300);
  EXPECT_GE(clusters.size(), 3u);

  // What it cost: by cluster and by model the totals add up; every budget of the example
  // (tenants and burst rules) held on every day.
  json cost = json::parse(testing::ReadText(out / "backfill" / "metrics.json"))["cost"];
  EXPECT_EQ(cost["currency"], "CNY");
  const double total = cost["total"];
  EXPECT_GT(total, 0);
  for (const char* by : {"by_cluster", "by_model"}) {
    double sum = 0;
    for (const auto& [name, v] : cost[by].items())
      sum += v.get<double>();
    EXPECT_NEAR(sum, total, 0.01 * static_cast<double>(cost[by].size())) << by;
  }
  EXPECT_NEAR(
      cost["by_tenant"]["ai-lab"].get<double>() + cost["by_tenant"]["consumer"].get<double>(),
      total, 0.01);
  ASSERT_TRUE(cost["budgets"].contains("consumer/ads/creative"));
  for (const auto& [name, budget] : cost["budgets"].items())
    EXPECT_TRUE(budget["within"].get<bool>()) << name << ": " << budget.dump();

  // The example's four services ran replicas and met their SLO.
  json services = json::parse(testing::ReadText(out / "backfill" / "metrics.json"))["services"];
  EXPECT_GE(services["slo_attainment"].get<double>(), 0.99) << services.dump();
  for (const char* name : {"assistant-chat", "search-rerank", "assistant-sg", "creative-image-gen"})
    EXPECT_GT(services["per_service"][name]["replicas"]["max"].get<int>(), 0) << name;

  // Allocation per model over the arrival window: every share within [0, 1], the GPUs' share
  // their devices-weighted mean (the one NPU model is Ascend 910B: 1,280 of them).
  json alloc = json::parse(testing::ReadText(out / "backfill" / "metrics.json"))["allocation"];
  EXPECT_GT(alloc["window_s"].get<double>(), 0);
  double gpu_area = 0, gpus = 0;
  for (const auto& [model, a] : alloc["by_model"].items()) {
    const double mean = a["mean"], devices = a["devices"];
    EXPECT_GE(mean, 0) << model;
    EXPECT_LE(mean, 1) << model;
    if (model == "Ascend910B") {
      EXPECT_EQ(devices, 1280);
      EXPECT_NEAR(alloc["npu"].get<double>(), mean, 1e-9);
      continue;
    }
    gpu_area += devices * mean;
    gpus += devices;
  }
  EXPECT_GT(alloc["gpu"].get<double>(), 0);
  EXPECT_NEAR(alloc["gpu"].get<double>(), gpu_area / gpus, 0.002);
  fs::remove_all(out);
}

TEST(SimRun, ResidencyAndReservationsHoldThroughoutTheDecisionLog) {
  // The example's reservations, checked by replaying every start and stop of the decision
  // log: non-preemptible work other than critical inference never holds more than 256 - 64
  // L40S of east-serve (clusters-serving.yaml: 32 nodes x 8); work other than ai-lab/
  // foundation's training never holds more than 1,280 - 256 Ascend 910B in cn-west
  // (clusters-west.yaml: 160 nodes x 8; that hold lends nothing); work of tenants other than
  // consumer runs on east-serve's 128 H800, all held, only preemptibly. And every run of a job
  // that reads a resident dataset (datasets.yaml) starts in a region its residency lists.
  const std::map<std::string, std::set<std::string>> residency = {
      {"customer-chats-east", {"cn-east"}},
      {"ads-clicklogs", {"cn-south", "cn-east"}},
      {"sg-user-queries", {"ap-southeast"}}};
  const std::map<std::string, std::string> region = {
      {"north-h800", "cn-north"},   {"north-a800", "cn-north"}, {"north-dev", "cn-north"},
      {"west-ascend", "cn-west"},   {"west-shared", "cn-west"}, {"east-serve", "cn-east"},
      {"south-shared", "cn-south"}, {"cloud-east", "cn-east"},  {"cloud-apse", "ap-southeast"}};
  int resident_starts = 0;
  fs::path out = TempDir("holds");
  std::string text;
  ASSERT_EQ(RunTessera(
                "sim run --fleet " + kSource +
                    "/examples/enterprise --format synthetic --jobs 600 --load 0.9 --policy fifo " +
                    "--out " + out.string() + " --no-progress",
                &text),
            0)
      << text;
  std::istringstream lines(testing::ReadText(out / "fifo" / "decisions.jsonl"));
  std::string line;
  std::map<std::string, std::pair<double, double>> running;  // job -> (L40S, Ascend) counted
  double l40s = 0, ascend = 0, most_l40s = 0, most_ascend = 0;
  int l40s_starts = 0, h800_starts = 0;
  while (std::getline(lines, line)) {
    json d = json::parse(line);
    const std::string job = d["job"];
    if (d["kind"] == "start") {
      const std::string cluster = d["cluster"], cls = d["class"], tenant = d["tenant"];
      EXPECT_LE(d["submitted_s"].get<double>(), d["t_s"].get<double>()) << line;
      const json& devices = d["devices"];
      double l = 0, a = 0;
      if (cluster == "east-serve" && devices.contains("L40S")) {
        ++l40s_starts;
        const bool owner = cls == "inference" && d["priority"] == "critical";
        if (!owner && !d["preemptible"].get<bool>()) l = devices["L40S"].get<double>();
      }
      if (cluster == "east-serve" && devices.contains("H800")) {
        ++h800_starts;
        if (tenant.rfind("consumer", 0) != 0) {
          EXPECT_TRUE(d["preemptible"].get<bool>()) << line;
        }
      }
      if (cluster == "west-ascend" && devices.contains("Ascend910B")) {
        const bool owner = cls == "training" && tenant.rfind("ai-lab/foundation", 0) == 0;
        if (!owner) a = devices["Ascend910B"].get<double>();
      }
      ASSERT_TRUE(region.count(cluster)) << line;
      for (const auto& ds : d.value("datasets", json::array())) {
        auto it = residency.find(ds.get<std::string>());
        if (it == residency.end()) continue;
        ++resident_starts;
        EXPECT_TRUE(it->second.count(region.at(cluster))) << line;
      }
      if (auto it = running.find(job); it != running.end()) {  // a new run replaces the old
        l40s -= it->second.first;
        ascend -= it->second.second;
      }
      running[job] = {l, a};
      l40s += l;
      ascend += a;
      most_l40s = std::max(most_l40s, l40s);
      most_ascend = std::max(most_ascend, ascend);
      ASSERT_LE(l40s, 192.0 + 1e-9) << line;
      ASSERT_LE(ascend, 1024.0 + 1e-9) << line;
    } else if (running.count(job)) {  // finish, preempt, requeue, cancel: the run ends
      l40s -= running[job].first;
      ascend -= running[job].second;
      running.erase(job);
    }
  }
  EXPECT_GT(l40s_starts, 0);  // the check saw the held models in use
  EXPECT_GT(h800_starts, 0);
  EXPECT_GT(resident_starts, 10);  // and jobs bound by residency
  fs::remove_all(out);
}

TEST(SimRun, AnIdleNotebookIsReclaimedByTheExamplesRule) {
  // examples/enterprise/policies.yaml: notebooks idle below 2% for 30 minutes are preempted.
  // A notebook whose devices go idle 10 minutes into each run is requeued 40 minutes in, and
  // again 40 minutes after each restart, until its work is done.
  fs::path out = TempDir("idle");
  fs::create_directories(out);
  std::ofstream(out / "nb.jsonl")
      << R"({"name":"nb","submit":0,"work":7200,"tenant":"ai-lab/applied/speech",)"
      << R"("labels":{"workload":"notebook"},"idle_after":600,"checkpoint":60,)"
      << R"("tasks":[{"count":1,"gpus":1}]})"
      << "\n";
  std::string text;
  ASSERT_EQ(RunTessera("sim run --fleet " + kSource + "/examples/enterprise --format jsonl " +
                           "--workload " + (out / "nb.jsonl").string() + " --policy fifo --out " +
                           (out / "run").string() + " --no-progress",
                       &text),
            0)
      << text;
  std::istringstream lines(testing::ReadText(out / "run" / "fifo" / "decisions.jsonl"));
  std::string line;
  std::vector<double> requeues;
  bool finished = false;
  while (std::getline(lines, line)) {
    json d = json::parse(line);
    if (d["job"] != "nb") continue;
    if (d["kind"] == "requeue") {
      EXPECT_EQ(d["reason"].get<std::string>().rfind("idle-reclaim:reclaim-idle-notebooks", 0), 0u)
          << line;
      requeues.push_back(d["t_s"].get<double>());
    }
    finished = finished || d["kind"] == "finish";
  }
  ASSERT_GE(requeues.size(), 1u);
  EXPECT_DOUBLE_EQ(requeues[0], 2400.0);
  EXPECT_TRUE(finished);
  fs::remove_all(out);
}

// Runs `workload` (JSONL) under fifo on one node of `gpus` G1 (tenant t), into `out`/run.
int SimOnOneNode(const fs::path& out, int gpus, const std::string& workload, std::string* text) {
  fs::create_directories(out);
  std::ofstream(out / "fleet.yaml") << testing::G1Fleet(
      "      - {name: n, count: 1, cpu: 8, memory: 64Gi, devices: {model: G1, count: " +
          std::to_string(gpus) + "}}\n",
      "tenants:\n  - name: t\n");
  std::ofstream(out / "w.jsonl") << workload;
  return RunTessera("sim run --fleet " + (out / "fleet.yaml").string() +
                        " --format jsonl --workload " + (out / "w.jsonl").string() +
                        " --policy fifo --out " + (out / "run").string() + " --no-progress",
                    text);
}

TEST(SimRun, TheEarliestDeadlineGoesFirstAndTheMetricsCountDeadlinesMet) {
  // One GPU, busy until 1000 s. A job without a deadline arrives at 10 s, one due by 1150 s at
  // 20 s: earliest deadline first runs the second at 1000 s (ends 1100 s, met), the first after.
  fs::path out = TempDir("deadline");
  std::string text;
  ASSERT_EQ(SimOnOneNode(
                out, 1,
                R"({"name":"blocker","submit":0,"work":1000,"estimate":1000,"tasks":[{"gpus":1}]})"
                "\n"
                R"({"name":"plain","submit":10,"work":100,"estimate":100,"tasks":[{"gpus":1}]})"
                "\n"
                R"({"name":"urgent","submit":20,"work":100,"estimate":100,"deadline":1150,)"
                R"("tasks":[{"gpus":1}]})"
                "\n",
                &text),
            0)
      << text;
  std::map<std::string, double> started;
  std::istringstream lines(testing::ReadText(out / "run" / "fifo" / "decisions.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    json d = json::parse(line);
    if (d["kind"] == "start") started[d["job"]] = d["t_s"].get<double>();
  }
  EXPECT_EQ(started["urgent"], 1000.0) << text;
  EXPECT_EQ(started["plain"], 1100.0);
  json m = json::parse(testing::ReadText(out / "run" / "fifo" / "metrics.json"));
  EXPECT_EQ(m["deadlines"],
            json({{"jobs", 1}, {"met", 1}, {"missed", 0}, {"unfinished", 0}, {"share_met", 1.0}}));
  fs::remove_all(out);
}

TEST(SimRun, TheIsolatedBaselineKeepsEveryTeamOnItsAssignedCluster) {
  // docs/simulation.md#baselines: each (tenant, class) has one home cluster, never elastic;
  // every start of the workload lands there.
  fs::path out = TempDir("isolated");
  std::string text;
  ASSERT_EQ(
      RunTessera("sim run --fleet " + kSource +
                     "/examples/enterprise --format synthetic --jobs 300 --policy fifo --out " +
                     out.string() + " --baseline isolated --no-progress",
                 &text),
      0)
      << text;
  json m = json::parse(testing::ReadText(out / "fifo" / "metrics.json"));
  EXPECT_EQ(m["baseline"], "isolated");
  // Per class, the jobs that never finished are counted and their wait is in queue_s_all.
  int64_t unfinished = 0;
  for (const auto& [cls, pc] : m["per_class"].items()) {
    unfinished += pc["unfinished"].get<int64_t>();
    EXPECT_EQ(pc["queue_s_all"]["count"].get<int64_t>(),
              pc["completed"].get<int64_t>() + pc["unfinished"].get<int64_t>())
        << cls;
    EXPECT_GE(pc["queue_s_all"]["mean"].get<double>(), 0) << cls;
  }
  EXPECT_EQ(unfinished, m["jobs"]["unfinished"].get<int64_t>());
  const json& assignment = m["assignment"];
  ASSERT_EQ(assignment.size(), 8u) << assignment.dump();  // the example's leaf tenants
  for (const auto& [tenant, classes] : assignment.items()) {
    for (const auto& [cls, kinds] : classes.items()) {
      EXPECT_TRUE(kinds.contains("gpu")) << tenant << " " << cls;
      for (const auto& [kind, cluster] : kinds.items())
        EXPECT_EQ(cluster.get<std::string>().rfind("cloud-", 0), std::string::npos)
            << tenant << " " << cls << " " << kind;
    }
  }
  std::istringstream lines(testing::ReadText(out / "fifo" / "decisions.jsonl"));
  std::string line;
  int starts = 0;
  while (std::getline(lines, line)) {
    json d = json::parse(line);
    if (d["kind"] != "start") continue;
    ++starts;
    // The start's cluster is the home of its tenant and class for the kind it runs on.
    bool home = false;
    for (const auto& [kind, cluster] :
         assignment[d["tenant"].get<std::string>()][d["class"].get<std::string>()].items())
      home = home || d["cluster"] == cluster;
    EXPECT_TRUE(home) << line;
  }
  EXPECT_GE(starts, 300);
  // A bad value is refused before anything runs.
  EXPECT_NE(
      RunTessera("sim run --fleet " + kSource + "/examples/enterprise --format synthetic --out " +
                     out.string() + "/bad --baseline islands",
                 &text),
      0);
  EXPECT_NE(text.find("--baseline"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out / "bad"));
  fs::remove_all(out);
}

TEST(SimRun, BadDaysAreRefusedBeforeAnythingRuns) {
  fs::path out = TempDir("days");
  const std::string run = "sim run --fleet " + kSource + "/examples/enterprise --out " +
                          out.string() + " --no-progress ";
  for (const std::string& bad :
       {std::string("--format synthetic --days 0"), std::string("--format synthetic --days 400"),
        std::string("--format synthetic --days -1"),
        std::string("--format synthetic --days 2 --jobs 10"),
        "--format jsonl --workload " + kSource + "/examples/workloads/small.jsonl --days 1"}) {
    std::string text;
    EXPECT_NE(RunTessera(run + bad, &text), 0) << bad;
    EXPECT_NE(text.find("--days"), std::string::npos) << bad << ": " << text;
    EXPECT_FALSE(fs::exists(out)) << bad;
  }
}

TEST(SimRun, ProgressBarOnRequestAndNeverWithNoProgress) {
  fs::path out = TempDir("progress");
  std::string text;
  ASSERT_EQ(RunTessera("sim run --fleet " + kFleet +
                           " --format synthetic --jobs 50 --progress --out " + out.string(),
                       &text),
            0)
      << text;
  EXPECT_NE(text.find("synthetic: 50 jobs at load 0.8, seed 1"), std::string::npos) << text;
  // No --policy: the fleet declares no scheduler section, so the default, backfill.
  EXPECT_NE(text.find("backfill  [####"), std::string::npos) << text;
  EXPECT_EQ(text.find("100.0%"), text.rfind("100.0%")) << "100% is drawn once";
  ASSERT_EQ(RunTessera("sim run --fleet " + kFleet +
                           " --format synthetic --jobs 50 --no-progress --out " + out.string(),
                       &text),
            0);
  EXPECT_EQ(text.find('['), std::string::npos) << text;
  fs::remove_all(out);
}

// Philly's virtual cluster 2869ce (422 jobs, real durations; the fixture keeps all of them and
// 20 jobs of each other virtual cluster) on 64 P100: EASY backfill and
// preemptive LAS each lower mean JCT against strict FIFO; --backfill off turns backfill off for
// every policy of the run, and changes what LAS does.
TEST(SimRun, PhillyVirtualClusterBackfillAndLasBeatFifo) {
  const std::string philly = std::string(TESSERA_TEST_DATA) + "/philly/philly-jobs.csv";
  const std::string fleet = kSource + "/examples/fleets/philly-64.yaml";
  fs::path dir = TempDir("philly");
  std::string text;
  const std::string base = "sim run --fleet " + fleet + " --format philly --workload " + philly +
                           " --cluster 2869ce --no-progress";
  ASSERT_EQ(
      RunTessera(base + " --policy fifo --compare backfill,las --out " + (dir / "on").string(),
                 &text),
      0)
      << text;
  EXPECT_NE(text.find("virtual cluster 2869ce: 422 jobs, tenant philly/2869ce"), std::string::npos)
      << text;
  json on = json::parse(testing::ReadText(dir / "on" / "metrics.json"));
  auto mean_jct = [](const json& m) { return m["jct_s"]["mean"].get<double>(); };
  for (const char* p : {"fifo", "backfill", "las"}) {
    EXPECT_EQ(on[p]["jobs"]["completed"], 422) << p;
    ExpectSummary(on[p]["jct_s"], std::string(p) + ".jct_s");
  }
  EXPECT_LT(mean_jct(on["backfill"]), mean_jct(on["fifo"]));
  EXPECT_LT(mean_jct(on["las"]), mean_jct(on["fifo"]));
  EXPECT_GT(on["las"]["preemptions"].get<uint64_t>(), 0u);
  EXPECT_GT(on["backfill"]["engine"]["backfilled"].get<uint64_t>(), 0u);

  ASSERT_EQ(
      RunTessera(base + " --policy las --backfill off --out " + (dir / "off").string(), &text), 0)
      << text;
  json off = json::parse(testing::ReadText(dir / "off" / "metrics.json"));
  EXPECT_EQ(off["las"]["backfill"], false);
  EXPECT_EQ(on["las"]["backfill"], true);
  EXPECT_EQ(off["las"]["engine"]["backfilled"], 0);
  EXPECT_NE(mean_jct(off["las"]), mean_jct(on["las"]));

  EXPECT_EQ(
      RunTessera(base + " --policy backfill --backfill off --out " + (dir / "x").string(), &text),
      2);
  EXPECT_NE(text.find("policy backfill with --backfill off is fifo"), std::string::npos) << text;
  EXPECT_EQ(RunTessera(base + " --backfill maybe --out " + (dir / "x").string(), &text), 2);
  EXPECT_NE(text.find("--backfill: expected on or off"), std::string::npos) << text;
  EXPECT_EQ(RunTessera("sim run --fleet " + fleet + " --format philly --workload " + philly +
                           " --cluster nope --out " + (dir / "x").string(),
                       &text),
            2);
  EXPECT_NE(text.find("no virtual cluster \"nope\" (the trace has 0e4a51, 103959"),
            std::string::npos)
      << text;
  EXPECT_EQ(RunTessera("sim run --fleet " + kFleet + " --format gavel --workload " + kGavel +
                           "51b7ef.trace --cluster 51b7ef --out " + (dir / "x").string(),
                       &text),
            2);
  EXPECT_NE(text.find("--cluster is for --format philly only"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(dir / "x" / "metrics.json")) << "nothing is written on bad input";
  fs::remove_all(dir);
}

// report.html compares the policies of a --compare run: drawn in a real browser (headless
// Chromium, which scripts/bootstrap installs) without a script error, every chart on a canvas,
// the per-tenant table filled, and a screenshot taken.
TEST(SimRun, ReportComparesThePoliciesInARealBrowser) {
  fs::path dir = TempDir("report");
  std::string text;
  ASSERT_EQ(
      RunTessera("sim run --fleet " + kSource +
                     "/examples/fleets/philly-64.yaml --format synthetic --jobs 400 --load 0.9 "
                     "--policy fifo --compare backfill,las --no-progress --out " +
                     dir.string(),
                 &text),
      0)
      << text;
  const std::string page = testing::ReadText(dir / "report.html");
  EXPECT_EQ(page.find("<script src="), std::string::npos) << "self-contained";
  json metrics = json::parse(testing::ReadText(dir / "metrics.json"));
  for (const char* p : {"fifo", "backfill", "las"}) {
    ASSERT_EQ(metrics[p]["cdf"]["jct_s"].size(), 101u) << p;
    EXPECT_LE(metrics[p]["cdf"]["jct_s"][0].get<double>(),
              metrics[p]["jct_s"]["p50"].get<double>());
    EXPECT_EQ(metrics[p]["cdf"]["jct_s"][50], metrics[p]["jct_s"]["p50"]);
    size_t completed = 0;
    for (const auto& [tenant, m] : metrics[p]["per_tenant"].items())
      completed += m["completed"].get<size_t>();
    EXPECT_EQ(completed, 400u) << p << ": per-tenant counts add up";
  }
  const size_t tenants = metrics["fifo"]["per_tenant"].size();
  ASSERT_GE(tenants, 2u);

  auto browse = [&](const std::string& flags) {
    std::string out;
    FILE* browser = ::popen(("chromium --headless --no-sandbox --disable-gpu " + flags +
                             " file://" + (dir / "report.html").string() + " 2>/dev/null")
                                .c_str(),
                            "r");
    EXPECT_NE(browser, nullptr);
    if (!browser) return std::make_pair(-1, out);
    char buf[65536];
    while (size_t n = ::fread(buf, 1, sizeof buf, browser))
      out.append(buf, n);
    return std::make_pair(::pclose(browser), out);
  };
  auto [code, dom] = browse("--dump-dom");
  ASSERT_EQ(code, 0) << "chromium (scripts/bootstrap installs it) did not run";
  EXPECT_NE(dom.find("<pre id=\"errors\"></pre>"), std::string::npos)
      << dom.substr(dom.find("<pre id=\"errors\">"), 400);
  size_t canvases = 0;
  for (size_t at = dom.find("<canvas"); at != std::string::npos; at = dom.find("<canvas", at + 1))
    ++canvases;
  EXPECT_EQ(canvases, 7u) << "JCT, JCT CDF, queue, queue CDF, classes, allocation, pending";
  size_t tenant_rows = 0;
  size_t table = dom.find("<table id=\"tenants\">");
  ASSERT_NE(table, std::string::npos);
  for (size_t at = dom.find("<tr>", table);
       at != std::string::npos && at < dom.find("</table>", table); at = dom.find("<tr>", at + 1))
    ++tenant_rows;
  EXPECT_EQ(tenant_rows, 1 + 3 * tenants) << "a header and a row per tenant and policy";
  EXPECT_NE(dom.find("queue s: asked within guarantee", table), std::string::npos);

  const fs::path shot = dir / "report.png";
  auto [shot_code, ignored] = browse("--window-size=1200,3600 --screenshot=" + shot.string());
  ASSERT_EQ(shot_code, 0);
  const std::string png = testing::ReadText(shot);
  ASSERT_GT(png.size(), 50000u) << "a page of charts, not a blank screenshot";
  EXPECT_EQ(png.substr(1, 3), "PNG");
  fs::remove_all(dir);
}

TEST(SimRun, AnElasticGangStartsWithWhatFitsAndGrowsAtItsMembersPace) {
  // One node of 4 G1, 2 busy until 100 s: a 4-task gang with min_members 1 starts with 2 at
  // half pace (50 s of its 1000 s done by 100 s), grows to 4 when the blocker ends and
  // finishes the other 950 s at full pace: at 1050 s.
  fs::path out = TempDir("elastic");
  std::string text;
  ASSERT_EQ(
      SimOnOneNode(out, 4,
                   R"({"name":"blocker","submit":0,"work":100,"estimate":100,"tasks":[{"gpus":2}]})"
                   "\n"
                   R"({"name":"elastic","submit":0,"work":1000,"estimate":1000,)"
                   R"("tasks":[{"count":4,"gpus":1}],"gang":{"min_members":1}})"
                   "\n",
                   &text),
      0)
      << text;
  std::vector<std::pair<std::string, double>> elastic;  // (kind, t_s)
  std::string grew;
  std::istringstream lines(testing::ReadText(out / "run" / "fifo" / "decisions.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    json d = json::parse(line);
    if (d["job"] != "elastic") continue;
    elastic.push_back({d["kind"], d["t_s"].get<double>()});
    if (d["kind"] == "grow") grew = d["reason"];
  }
  EXPECT_EQ(elastic, (std::vector<std::pair<std::string, double>>{
                         {"start", 0.0}, {"grow", 100.0}, {"finish", 1050.0}}))
      << text;
  EXPECT_EQ(grew, "room: +2 task(s), 4 of 4");
  fs::remove_all(out);
}

TEST(SimRun, APreemptorShrinksAnElasticGangWhichGrowsBackAfterIt) {
  // One node of 4 G1. The elastic gang runs whole from 0 s; at 100 s a high-priority job takes
  // three G1: the gang shrinks to its one task (100 s done, 900 s left at a quarter pace), the
  // preemptor ends at 200 s (25 s more done), the gang grows back and finishes the other
  // 875 s at full pace: at 1075 s.
  fs::path out = TempDir("shrink");
  std::string text;
  ASSERT_EQ(SimOnOneNode(out, 4,
                         R"({"name":"elastic","submit":0,"work":1000,"estimate":1000,)"
                         R"("priority":"low","preemptible":true,)"
                         R"("tasks":[{"count":4,"gpus":1}],"gang":{"min_members":1}})"
                         "\n"
                         R"({"name":"urgent","submit":100,"work":100,"estimate":100,)"
                         R"("priority":"high","tasks":[{"gpus":3}]})"
                         "\n",
                         &text),
            0)
      << text;
  std::vector<std::pair<std::string, double>> elastic;  // (kind, t_s)
  std::istringstream lines(testing::ReadText(out / "run" / "fifo" / "decisions.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    json d = json::parse(line);
    if (d["job"] == "elastic") elastic.push_back({d["kind"], d["t_s"].get<double>()});
  }
  EXPECT_EQ(elastic, (std::vector<std::pair<std::string, double>>{
                         {"start", 0.0}, {"shrink", 100.0}, {"grow", 200.0}, {"finish", 1075.0}}))
      << text;
  fs::remove_all(out);
}

TEST(SimRun, MalformedWorkloadsAndFlagsExitTwoWithTheLine) {
  fs::path dir = TempDir("bad");
  fs::create_directories(dir);
  std::ofstream(dir / "bad.jsonl")
      << "{\"name\": \"ok\", \"submit\": 0, \"work\": 10, \"tasks\": [{\"gpus\": 1}]}\n"
      << "{\"name\": \"x\", \"submit\": -5, \"work\": 10, \"tasks\": [{\"gpus\": 1}]}\n"
      << "{\"name\": \"y\", \"submit\": 0, \"work\": 10, \"tasks\": [{\"gpus\": 1}], \"colour\": "
         "1}\n"
      << "not json\n"
      << "{\"name\": \"z\", \"submit\": 0, \"work\": 10, \"tasks\": [{\"name\": 5}]}\n"
      << "{\"name\": \"d\", \"submit\": 50, \"work\": 10, \"deadline\": 40, \"tasks\": [{}]}\n"
      << "{\"name\": \"e\", \"submit\": 0, \"work\": 10, \"tasks\": [{\"gpus\": 1}], "
         "\"gang\": {\"min_members\": 3}}\n";
  std::ofstream(dir / "bad.trace") << "ResNet-18 (batch size 32)\tcmd\t-n\t1\tmany\t0\t1\n";
  std::string text;
  EXPECT_EQ(RunTessera("sim run --fleet " + kFleet + " --workload " + (dir / "bad.jsonl").string() +
                           " --format jsonl --out " + (dir / "o").string(),
                       &text),
            2);
  EXPECT_NE(text.find("bad.jsonl:2: submit"), std::string::npos) << text;
  EXPECT_NE(text.find("bad.jsonl:3: colour: unknown field"), std::string::npos) << text;
  EXPECT_NE(text.find("bad.jsonl:4: not valid JSON"), std::string::npos) << text;
  EXPECT_NE(text.find("bad.jsonl:5: tasks[0].name: expected a non-empty string"), std::string::npos)
      << text;
  EXPECT_NE(text.find("bad.jsonl:6: deadline: expected a time at or after submit"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("bad.jsonl:7: gang.min_members: expected a whole number from 1 to the "
                      "job's 1 tasks"),
            std::string::npos)
      << text;
  EXPECT_FALSE(fs::exists(dir / "o" / "metrics.json")) << "nothing is written on bad input";

  fs::copy_file(std::string(TESSERA_TEST_DATA) + "/gavel/isolated_throughputs_v100_p100_k80.csv",
                dir / "isolated_throughputs_v100_p100_k80.csv");
  EXPECT_EQ(RunTessera("sim run --fleet " + kFleet + " --workload " + (dir / "bad.trace").string() +
                           " --format gavel --out " + (dir / "o").string(),
                       &text),
            2);
  EXPECT_NE(text.find("bad.trace:1: field 5 (total steps)"), std::string::npos) << text;

  EXPECT_EQ(RunTessera("sim run --fleet " + kFleet + " --format synthetic --policy lifo --out " +
                           (dir / "o").string(),
                       &text),
            2);
  EXPECT_NE(text.find("unknown policy 'lifo'"), std::string::npos) << text;
  EXPECT_EQ(
      RunTessera("sim run --fleet " + kFleet + " --format gavel --out " + (dir / "o").string(),
                 &text),
      2);
  EXPECT_NE(text.find("--workload is required"), std::string::npos) << text;
  EXPECT_EQ(RunTessera("sim run --fleet " + kFleet + " --format synthetic --seed -1 --out " +
                           (dir / "o").string(),
                       &text),
            2);
  EXPECT_NE(text.find("--seed"), std::string::npos) << text;
  fs::remove_all(dir);
}

TEST(SimRun, TheWeekLongComparisonOfTheDocsWritesEveryFigureOfItsTable) {
  // docs/simulation.md#coordinated-against-isolated-a-week-on-the-enterprise: the documented
  // command (a line of its own, ending with --baseline isolated) and the same without that
  // flag, run here at a tenth of the documented load to stay quick. Both write every figure
  // of the table; coordinated completes every job within every budget, meets the services'
  // SLO, and queues less than isolated.
  std::istringstream doc(testing::ReadText(kSource + "/docs/simulation.md"));
  const std::string flag = " --baseline isolated";
  std::string command;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("    tessera sim run ", 0) == 0 && line.find("--days 7") != std::string::npos &&
        line.size() > flag.size() && line.substr(line.size() - flag.size()) == flag) {
      command = line.substr(4 + std::string("tessera ").size());
    }
  }
  ASSERT_FALSE(command.empty()) << "no week-long comparison line in docs/simulation.md";
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = command.find(from);
    ASSERT_NE(at, std::string::npos) << from << " in: " << command;
    command.replace(at, from.size(), to);
  };
  replace("--load 0.5", "--load 0.05");
  replace("examples/enterprise", kSource + "/examples/enterprise");
  const fs::path out = TempDir("week");
  const size_t at = command.find("--out ");
  ASSERT_NE(at, std::string::npos);
  command.replace(at + 6, command.find(' ', at + 6) - at - 6, (out / "isolated").string());
  std::string text;
  ASSERT_EQ(RunTessera(command + " --no-progress", &text), 0) << text;
  std::string coordinated =
      command.substr(0, command.size() - std::string(" --baseline isolated").size());
  coordinated.replace(coordinated.find(out.string()), (out / "isolated").string().size(),
                      (out / "coordinated").string());
  ASSERT_EQ(RunTessera(coordinated + " --no-progress", &text), 0) << text;

  auto metrics = [&](const std::string& run) {
    return json::parse(testing::ReadText(out / run / "backfill" / "metrics.json"));
  };
  const json iso = metrics("isolated"), coord = metrics("coordinated");
  for (const json* m : {&iso, &coord}) {
    for (const char* cls : {"training", "finetune", "batch", "eval"}) {
      ExpectSummary((*m)["per_class"][cls]["queue_s"], cls);
      ExpectSummary((*m)["per_class"][cls]["queue_s_all"], cls);
    }
    EXPECT_EQ((*m)["allocation"]["by_model"].size(), 8u);
    EXPECT_GT((*m)["allocation"]["gpu"].get<double>(), 0);
    EXPECT_TRUE((*m)["services"]["slo_attainment"].is_number());
    EXPECT_TRUE((*m)["cost"]["by_tenant"].contains("consumer/ads/creative"));
    EXPECT_TRUE((*m)["cost"]["budgets"].contains("consumer/ads/creative"));
  }
  EXPECT_EQ(iso["baseline"], "isolated");
  EXPECT_EQ(coord["baseline"], "coordinated");
  EXPECT_EQ(coord["jobs"]["completed"], coord["jobs"]["submitted"]);
  EXPECT_GE(coord["services"]["slo_attainment"].get<double>(), 0.99);
  for (const auto& [name, budget] : coord["cost"]["budgets"].items())
    EXPECT_TRUE(budget["within"].get<bool>()) << name << ": " << budget.dump();
  // Queueing counts the jobs that never started until the run's end: isolated strands the
  // jobs whose data may not leave a region its team's cluster is not in, and its completed jobs
  // alone would flatter it.
  double iso_all = 0, coord_all = 0;
  for (const char* cls : {"training", "finetune", "batch", "eval"}) {
    const double iso_n = iso["per_class"][cls]["queue_s_all"]["count"].get<double>();
    const double coord_n = coord["per_class"][cls]["queue_s_all"]["count"].get<double>();
    EXPECT_EQ(iso_n, coord_n) << cls;
    iso_all += iso_n * iso["per_class"][cls]["queue_s_all"]["mean"].get<double>();
    coord_all += coord_n * coord["per_class"][cls]["queue_s_all"]["mean"].get<double>();
  }
  EXPECT_GT(iso["jobs"]["submitted"].get<int>(), iso["jobs"]["completed"].get<int>());
  EXPECT_LT(coord_all, iso_all);
  // The same jobs in both: a job started in both reads the same datasets.
  auto datasets = [&](const std::string& run) {
    std::map<std::string, std::string> read;
    std::istringstream log(testing::ReadText(out / run / "backfill" / "decisions.jsonl"));
    for (std::string line; std::getline(log, line);) {
      json d = json::parse(line);
      if (d["kind"] == "start") read[d["job"]] = d.value("datasets", json::array()).dump();
    }
    return read;
  };
  const auto iso_read = datasets("isolated"), coord_read = datasets("coordinated");
  int both = 0, reading = 0;
  for (const auto& [job, read] : iso_read) {
    auto it = coord_read.find(job);
    if (it == coord_read.end()) continue;
    ++both;
    reading += read != "[]";
    EXPECT_EQ(read, it->second) << job;
  }
  EXPECT_GT(both, 1000);
  EXPECT_GT(reading, 300);
  // The docs' `sim compare` lines, on these two runs: over the jobs both started, coordinated
  // queues no longer than isolated, in all and in every class.
  std::istringstream doc_again(testing::ReadText(kSource + "/docs/simulation.md"));
  int compares = 0;
  for (std::string line; std::getline(doc_again, line);) {
    if (line.rfind("    tessera sim compare /tmp/week-isolated /tmp/week-coordinated", 0) != 0)
      continue;
    ++compares;
    std::string compare = line.substr(4 + std::string("tessera ").size());
    compare.replace(compare.find("/tmp/week-isolated"), std::string("/tmp/week-isolated").size(),
                    (out / "isolated").string());
    compare.replace(compare.find("/tmp/week-coordinated"),
                    std::string("/tmp/week-coordinated").size(), (out / "coordinated").string());
    std::string shown;
    ASSERT_EQ(RunTessera(compare, &shown), 0) << compare << "\n" << shown;
    if (compare.find("-o json") == std::string::npos) {
      EXPECT_NE(shown.find("jobs both runs started"), std::string::npos) << shown;
      continue;
    }
    const json cmp = json::parse(shown);
    EXPECT_EQ(cmp["policy"], "backfill");
    EXPECT_LE(cmp["jobs"]["both"].get<int>(), both);  // service replicas left out
    EXPECT_GT(cmp["jobs"]["both"].get<int>(), 1000);
    EXPECT_EQ(cmp["jobs"]["only_base"].get<int>(), 0);
    EXPECT_GT(cmp["jobs"]["only_other"].get<int>(), 0);
    EXPECT_LE(cmp["queue_s"]["all"]["other"]["mean"].get<double>(),
              cmp["queue_s"]["all"]["base"]["mean"].get<double>());
    for (const auto& [cls, q] : cmp["queue_s"]["per_class"].items())
      EXPECT_LE(q["other"]["mean"].get<double>(), q["base"]["mean"].get<double>()) << cls;
  }
  EXPECT_EQ(compares, 2);
  fs::remove_all(out);
}

TEST(SimCompare, ABadOrMissingLogIsAnErrorNamingTheFileAndLine) {
  // Two hand-written runs: the other's log has a start without its submission time. Then a
  // directory with no run, and one with runs of two policies but no --policy.
  const fs::path out = TempDir("compare");
  fs::create_directories(out / "a" / "fifo");
  fs::create_directories(out / "b" / "fifo");
  std::ofstream(out / "a" / "fifo" / "decisions.jsonl")
      << R"({"t_s":5,"kind":"start","job":"x","submitted_s":1,"class":"batch"})"
      << "\n";
  std::ofstream(out / "b" / "fifo" / "decisions.jsonl")
      << R"({"t_s":2,"kind":"start","job":"x","submitted_s":1,"class":"batch"})"
      << "\n"
      << R"({"t_s":3,"kind":"start","job":"y","class":"batch"})"
      << "\n";
  std::string text;
  EXPECT_EQ(RunTessera("sim compare " + (out / "a").string() + " " + (out / "b").string(), &text),
            2);
  EXPECT_NE(text.find((out / "b" / "fifo" / "decisions.jsonl").string() +
                      ":2: a start without \"submitted_s\""),
            std::string::npos)
      << text;
  EXPECT_EQ(RunTessera("sim compare " + out.string() + " " + (out / "b").string(), &text), 2);
  EXPECT_NE(text.find("no run here"), std::string::npos) << text;
  fs::create_directories(out / "a" / "las");
  std::ofstream(out / "a" / "las" / "decisions.jsonl") << "";
  EXPECT_EQ(RunTessera("sim compare " + (out / "a").string() + " " + (out / "b").string(), &text),
            2);
  EXPECT_NE(text.find("several policies: name one with --policy"), std::string::npos) << text;
  // Named, and the other log fixed: a table.
  std::ofstream(out / "b" / "fifo" / "decisions.jsonl")
      << R"({"t_s":2,"kind":"start","job":"x","submitted_s":1,"class":"batch"})"
      << "\n";
  EXPECT_EQ(RunTessera("sim compare " + (out / "a").string() + " " + (out / "b").string() +
                           " --policy fifo",
                       &text),
            0)
      << text;
  EXPECT_NE(text.find("queueing delay over the 1 jobs both runs started"), std::string::npos)
      << text;
  fs::remove_all(out);
}

}  // namespace
}  // namespace tessera
