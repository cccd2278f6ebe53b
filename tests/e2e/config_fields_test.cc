// No dead configuration: every field that docs/configuration.md documents is walked, and each
// must either change a decision in a small scenario run here through the real binary
// (`tessera place`, or `tessera sim run` for what happens over time), be proved by a named
// scenario test elsewhere (which must exist), be required (leaving it out is an error), or be
// documented as free text that nothing acts on. The fields not yet proved are listed in
// kNotYetProved with the reason: the list must name exactly the documented fields that no probe
// covers, so that a new field cannot slip in unproved and a proof, once added, takes its field
// off the list.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testutil/g1_fleet.h"
#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::RunTessera;

const fs::path kSource = TESSERA_SOURCE_DIR;

// A documented field: its section ("12.1") and key ("classes"), with its table row.
struct Field {
  std::string section, key, row;
  std::string id() const { return section + " " + key; }
};

// The fields of the tables of docs/configuration.md §3-§14 (§8's rows are node names, §2's
// units; §3's rows other than currency name the sections walked below them).
std::vector<Field> DocumentedFields() {
  std::ifstream in(kSource / "docs" / "configuration.md");
  std::vector<Field> fields;
  std::string section, line;
  const std::regex heading(R"(^#{2,3} (\d+(\.\d+)?)\.? )");
  const std::regex row(R"(^\| `([^`]+)`)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, heading)) {
      section = m[1];
      continue;
    }
    if (line.rfind("## ", 0) == 0) section.clear();
    if (section.empty() || !std::regex_search(line, m, row)) continue;
    const int major = std::stoi(section);
    if (major < 3 || major > 14 || major == 8) continue;
    if (major == 3 && m[1] != "currency") continue;
    // §11's first table lists the built-in classes, not fields.
    if (section == "11" && m[1] != "name" && m[1] != "value" && m[1] != "preemptible" &&
        m[1] != "minRunTime")
      continue;
    fields.push_back({section, m[1], line});
  }
  return fields;
}

// A configuration directory: file name -> text.
using Files = std::map<std::string, std::string>;

fs::path Write(const Files& files, const std::string& tag) {
  static int n = 0;
  fs::path dir = fs::temp_directory_path() /
                 ("tessera-fields-" + std::to_string(::getpid()) + "-" + tag + std::to_string(++n));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [name, text] : files)
    std::ofstream(dir / name) << text;
  return dir;
}

// What `place` decided: per task, its outcome, cluster, node and devices.
std::string Decisions(const Files& files) {
  fs::path dir = Write(files, "place");
  std::string out;
  const int code = RunTessera(
      "place --fleet " + dir.string() + " --jobs " + (dir / "jobs.yaml").string() + " -o json",
      &out);
  fs::remove_all(dir);
  if (code != 0 && code != 3) return "exit " + std::to_string(code) + ": " + out;
  std::string decided;
  std::istringstream lines(out);
  for (std::string l; std::getline(lines, l);) {
    if (l.empty() || l[0] != '{') continue;
    nlohmann::json r = nlohmann::json::parse(l);
    decided += r.value("job", "") + "/" + r.value("task", "") + " " + r.value("outcome", "") + " " +
               r.value("cluster", "") + " " + r.value("node", "") + " " +
               (r.contains("devices") ? r["devices"].dump() : "") + "\n";
  }
  return decided;
}

// What `sim run` decided over time: its decision log (a JSONL workload `workload.jsonl`).
std::string SimDecisions(const Files& files) {
  fs::path dir = Write(files, "sim");
  std::string out;
  const int code =
      RunTessera("sim run --fleet " + (dir / "fleet.yaml").string() +
                     " --format jsonl --workload " + (dir / "workload.jsonl").string() +
                     " --policy fifo --out " + (dir / "out").string() + " --no-progress",
                 &out);
  std::string log = code == 0 ? testing::ReadText(dir / "out" / "fifo" / "decisions.jsonl")
                              : "exit " + std::to_string(code) + ": " + out;
  fs::remove_all(dir);
  return log;
}

// The scenario most probes vary: two dedicated clusters, e1 (east, G1 at 10 an hour) and w1
// (west, G2 at 2); the job j (training, tenant lab, two devices of any model) goes to w1,
// the cheaper.
const std::string kFleet = R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi, labels: [fp8]}
  - {name: G2, kind: gpu, vendor: nvidia, memory: 40Gi}
regions:
  - name: east
  - name: west
links:
  - {from: east, to: west, latency: 20ms, bandwidth: 1Gbps}
clusters:
  - name: e1
    region: east
    tier: dedicated
    prices: {G1: 10, cpu: 0.2}
    nodeGroups:
      - {name: a, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
  - name: w1
    region: west
    tier: dedicated
    prices: {G2: 2, cpu: 0.1}
    nodeGroups:
      - {name: b, count: 2, cpu: 64, memory: 512Gi, devices: {model: G2, count: 4}}
tenants:
  - name: lab
  - name: ops
)";
const std::string kJobs = R"(jobs:
  - name: j
    class: training
    tenant: lab
    runtime: 1h
    labels: {team: y}
    taskGroups:
      - {name: w, count: 1, cpu: 4, memory: 16Gi, devices: {count: 2}}
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "no " << from << " in\n" << text;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

Files WithPolicies(const std::string& rules, const std::string& fleet = kFleet,
                   const std::string& jobs = kJobs) {
  return {{"fleet.yaml", fleet}, {"jobs.yaml", jobs}, {"policies.yaml", "policies:\n" + rules}};
}

// A constrain rule sending the jobs `match` selects away from w1 (to e1).
std::string OffW1(const std::string& match) {
  return "  - {name: r, kind: constrain, match: " + match + ", denyClusters: [w1]}\n";
}
std::string Weights(const std::string& values) {
  return "  - {name: w, kind: weights, " + values + "}\n";
}

// A pair of configurations that differ in one field, and what runs them.
struct Scenario {
  std::function<std::string(const Files&)> run;
  Files before, after;
};

// The scenarios, by field: the decisions must differ.
std::map<std::string, Scenario> Scenarios() {
  std::map<std::string, Scenario> s;
  auto place = [](Files a, Files b) { return Scenario{Decisions, std::move(a), std::move(b)}; };
  s["12 match"] = place(WithPolicies(OffW1("{jobs: [other]}")),
                        WithPolicies("  - {name: r, kind: constrain, denyClusters: [w1]}\n"));
  s["12.1 classes"] = place(WithPolicies(OffW1("{classes: [batch]}")),
                            WithPolicies(OffW1("{classes: [training]}")));
  s["12.1 tenants"] =
      place(WithPolicies(OffW1("{tenants: [ops]}")), WithPolicies(OffW1("{tenants: [lab]}")));
  s["12.1 minPriority"] = place(WithPolicies(OffW1("{minPriority: high}")),
                                WithPolicies(OffW1("{minPriority: normal}")));
  s["12.1 maxPriority"] = place(WithPolicies(OffW1("{maxPriority: low}")),
                                WithPolicies(OffW1("{maxPriority: normal}")));
  s["12.1 labels"] =
      place(WithPolicies(OffW1("{labels: {team: x}}")), WithPolicies(OffW1("{labels: {team: y}}")));
  s["12.1 jobs"] =
      place(WithPolicies(OffW1("{jobs: [other]}")), WithPolicies(OffW1("{jobs: [j]}")));
  s["12.2 denyClusters"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
            WithPolicies("  - {name: r, kind: constrain, denyClusters: [w1]}\n"));
  s["12.2 allowClusters"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
            WithPolicies("  - {name: r, kind: constrain, allowClusters: [e1]}\n"));
  s["12.2 denyRegions"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
            WithPolicies("  - {name: r, kind: constrain, denyRegions: [west]}\n"));
  s["12.2 allowRegions"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
            WithPolicies("  - {name: r, kind: constrain, allowRegions: [east]}\n"));
  const std::string shared_w1 = Replace(kFleet, "    region: west\n    tier: dedicated",
                                        "    region: west\n    tier: shared");
  s["12.2 tiers"] = place(
      WithPolicies("  - {name: r, kind: constrain, tiers: [dedicated, shared]}\n", shared_w1),
      WithPolicies("  - {name: r, kind: constrain, tiers: [shared, dedicated]}\n", shared_w1));
  s["7 tier"] = place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
                      {{"fleet.yaml", shared_w1}, {"jobs.yaml", kJobs}});
  s["12.3 cost"] = place(WithPolicies(Weights("cost: 1")), WithPolicies(Weights("cost: 0")));
  s["7 prices"] = place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
                        {{"fleet.yaml", Replace(kFleet, "prices: {G2: 2,", "prices: {G2: 20,")},
                         {"jobs.yaml", kJobs}});
  // j reads 200Ti kept in east: with locality weighed, it runs next to the data.
  const std::string with_data = kFleet + "datasets:\n  - {name: logs, region: east, size: 200Ti}\n";
  const std::string reads =
      Replace(kJobs, "    labels: {team: y}\n", "    labels: {team: y}\n    datasets: [logs]\n");
  s["12.3 locality"] = place(WithPolicies(Weights("locality: 0"), with_data, reads),
                             WithPolicies(Weights("locality: 5"), with_data, reads));
  s["13 datasets"] = place({{"fleet.yaml", with_data}, {"jobs.yaml", kJobs}},
                           WithPolicies(Weights("locality: 5"), with_data, reads));
  s["9 size"] = place(
      WithPolicies(Weights("locality: 5"), Replace(with_data, "size: 200Ti", "size: 1Gi"), reads),
      WithPolicies(Weights("locality: 5"), with_data, reads));
  s["9 region"] =
      place(WithPolicies(Weights("locality: 5"),
                         Replace(with_data, "region: east, size", "region: west, size"), reads),
            WithPolicies(Weights("locality: 5"), with_data, reads));
  s["9 residency"] =
      place({{"fleet.yaml", with_data}, {"jobs.yaml", reads}},
            {{"fleet.yaml", Replace(with_data, "size: 200Ti}", "size: 200Ti, residency: [west]}")},
             {"jobs.yaml", reads}});
  s["9 replicas"] = place(
      WithPolicies(Weights("locality: 5"), with_data, reads),
      WithPolicies(Weights("locality: 5"),
                   Replace(with_data, "size: 200Ti}", "size: 200Ti, replicas: [west]}"), reads));
  // A filler job of lab takes 6 of w1's 8 devices first: with balance weighed, j goes to the
  // emptier e1.
  const std::string filler = Replace(
      kJobs, "jobs:\n",
      "jobs:\n  - {name: filler, class: batch, tenant: lab, runtime: 1h, taskGroups: [{name: f, "
      "count: 3, cpu: 1, memory: 1Gi, devices: {count: 2, models: [G2]}}]}\n");
  s["12.3 balance"] = place(WithPolicies(Weights("balance: 0"), kFleet, filler),
                            WithPolicies(Weights("balance: 10"), kFleet, filler));
  // The device request.
  s["13.2 models"] = place(
      {{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
      {{"fleet.yaml", kFleet},
       {"jobs.yaml", Replace(kJobs, "devices: {count: 2}", "devices: {count: 2, models: [G1]}")}});
  s["13.2 labels"] = place(
      {{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
      {{"fleet.yaml", kFleet},
       {"jobs.yaml", Replace(kJobs, "devices: {count: 2}", "devices: {count: 2, labels: [fp8]}")}});
  s["4 labels"] = place(
      {{"fleet.yaml", kFleet},
       {"jobs.yaml", Replace(kJobs, "devices: {count: 2}", "devices: {count: 2, labels: [fp8]}")}},
      {{"fleet.yaml", Replace(kFleet, "labels: [fp8]}", "labels: []}")},
       {"jobs.yaml", Replace(kJobs, "devices: {count: 2}", "devices: {count: 2, labels: [fp8]}")}});
  s["13.2 minMemory"] = place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
                              {{"fleet.yaml", kFleet},
                               {"jobs.yaml", Replace(kJobs, "devices: {count: 2}",
                                                     "devices: {count: 2, minMemory: 64Gi}")}});
  s["4 memory"] =
      place({{"fleet.yaml", kFleet},
             {"jobs.yaml",
              Replace(kJobs, "devices: {count: 2}", "devices: {count: 2, minMemory: 64Gi}")}},
            {{"fleet.yaml", Replace(kFleet, "memory: 40Gi}", "memory: 80Gi}")},
             {"jobs.yaml",
              Replace(kJobs, "devices: {count: 2}", "devices: {count: 2, minMemory: 64Gi}")}});
  s["13.2 count"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
            {{"fleet.yaml", kFleet},
             {"jobs.yaml", Replace(kJobs, "devices: {count: 2}", "devices: {count: 5}")}});
  s["13.2 fraction"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
            {{"fleet.yaml", kFleet},
             {"jobs.yaml", Replace(kJobs, "devices: {count: 2}", "devices: {fraction: 0.5}")}});
  s["13.1 devices"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
            {{"fleet.yaml", kFleet}, {"jobs.yaml", Replace(kJobs, ", devices: {count: 2}}", "}")}});
  s["13.1 count"] = place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
                          {{"fleet.yaml", kFleet},
                           {"jobs.yaml", Replace(kJobs, "count: 1, cpu: 4", "count: 3, cpu: 4")}});
  s["13.1 cpu"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
            {{"fleet.yaml", kFleet}, {"jobs.yaml", Replace(kJobs, "cpu: 4,", "cpu: 100,")}});
  s["13.1 memory"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
            {{"fleet.yaml", kFleet}, {"jobs.yaml", Replace(kJobs, "memory: 16Gi", "memory: 1Ti")}});
  s["7.3 cpu"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", Replace(kJobs, "cpu: 4,", "cpu: 48,")}},
            {{"fleet.yaml", Replace(kFleet, "count: 2, cpu: 64, memory: 512Gi, devices: {model: G2",
                                    "count: 2, cpu: 32, memory: 512Gi, devices: {model: G2")},
             {"jobs.yaml", Replace(kJobs, "cpu: 4,", "cpu: 48,")}});
  s["7.3 memory"] = place(
      {{"fleet.yaml", kFleet}, {"jobs.yaml", Replace(kJobs, "memory: 16Gi", "memory: 300Gi")}},
      {{"fleet.yaml", Replace(kFleet, "count: 2, cpu: 64, memory: 512Gi, devices: {model: G2",
                              "count: 2, cpu: 64, memory: 256Gi, devices: {model: G2")},
       {"jobs.yaml", Replace(kJobs, "memory: 16Gi", "memory: 300Gi")}});
  s["7.3 count"] =
      place({{"fleet.yaml", kFleet},
             {"jobs.yaml", Replace(kJobs, "devices: {count: 2}", "devices: {count: 5}")}},
            {{"fleet.yaml",
              Replace(kFleet, "devices: {model: G2, count: 4}", "devices: {model: G2, count: 8}")},
             {"jobs.yaml", Replace(kJobs, "devices: {count: 2}", "devices: {count: 5}")}});
  const std::string on_g1 =
      Replace(kJobs, "devices: {count: 2}", "devices: {count: 2, models: [G1]}");
  s["7.3 model"] = place({{"fleet.yaml", kFleet}, {"jobs.yaml", on_g1}},
                         {{"fleet.yaml", Replace(Replace(kFleet, "devices: {model: G2, count: 4}",
                                                         "devices: {model: G1, count: 4}"),
                                                 "prices: {G2: 2,", "prices: {G1: 2,")},
                          {"jobs.yaml", on_g1}});
  s["13 tenant"] = place(WithPolicies(OffW1("{tenants: [lab]}")),
                         WithPolicies(OffW1("{tenants: [lab]}"), kFleet,
                                      Replace(kJobs, "tenant: lab", "tenant: ops")));
  s["13 class"] = place(WithPolicies(OffW1("{classes: [training]}")),
                        WithPolicies(OffW1("{classes: [training]}"), kFleet,
                                     Replace(kJobs, "class: training", "class: batch")));
  s["13 priority"] =
      place(WithPolicies(OffW1("{minPriority: high}")),
            WithPolicies(OffW1("{minPriority: high}"), kFleet,
                         Replace(kJobs, "runtime: 1h", "runtime: 1h\n    priority: high")));
  s["13 labels"] = place(WithPolicies(OffW1("{labels: {team: y}}")),
                         WithPolicies(OffW1("{labels: {team: y}}"), kFleet,
                                      Replace(kJobs, "labels: {team: y}", "labels: {team: z}")));
  s["12.7 order"] = place(WithPolicies("  - {name: f, kind: fallback, order: [G2, G1]}\n"),
                          WithPolicies("  - {name: f, kind: fallback, order: [G1, G2]}\n"));
  s["12.7 model"] = s["12.7 order"];
  // Over time: the communication model slows a gang spread over two nodes by the bandwidth
  // between them.
  auto sim = [](const std::string& leaf) {
    const std::string fleet = testing::G1Fleet(
        "      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4},\n"
        "         topology: {nodesPerLeaf: 2}}\n",
        "tenants:\n  - name: lab\n");
    return Files{
        {"fleet.yaml", Replace(fleet, "    tier: dedicated\n",
                               "    tier: dedicated\n    interconnect: {nodeBandwidth: 64GB/s, "
                               "leafBandwidth: " +
                                   leaf + "}\n")},
        {"workload.jsonl", R"({"name":"g","submit":0,"work":3600,"class":"training",)"
                           R"("tasks":[{"count":2,"gpus":4}]})"
                           "\n"}};
  };
  s["7.1 leafBandwidth"] = Scenario{SimDecisions, sim("400Gbps"), sim("10Gbps")};
  s["7.1 nodeBandwidth"] = Scenario{
      SimDecisions, sim("10Gbps"), [&] {
        Files f = sim("10Gbps");
        f["fleet.yaml"] = Replace(f["fleet.yaml"], "nodeBandwidth: 64GB/s", "nodeBandwidth: 4GB/s");
        return f;
      }()};
  // The two nodes under two leaves of one spine, or of two spines.
  auto spread = [&](const std::string& topology, const std::string& bandwidth) {
    Files f = sim("100Gbps");
    f["fleet.yaml"] = Replace(Replace(f["fleet.yaml"], "topology: {nodesPerLeaf: 2}", topology),
                              "leafBandwidth: 100Gbps", "leafBandwidth: 100Gbps, " + bandwidth);
    return f;
  };
  s["7.1 spineBandwidth"] =
      Scenario{SimDecisions, spread("topology: {nodesPerLeaf: 1}", "spineBandwidth: 100Gbps"),
               spread("topology: {nodesPerLeaf: 1}", "spineBandwidth: 5Gbps")};
  s["7.1 coreBandwidth"] = Scenario{SimDecisions,
                                    spread("topology: {nodesPerLeaf: 1, leavesPerSpine: 1}",
                                           "spineBandwidth: 100Gbps, coreBandwidth: 100Gbps"),
                                    spread("topology: {nodesPerLeaf: 1, leavesPerSpine: 1}",
                                           "spineBandwidth: 100Gbps, coreBandwidth: 5Gbps")};
  // Without nodeBandwidth, the island's bandwidth stands in for it: the gang over two nodes
  // loses more against a faster island fabric.
  auto island = [&](const std::string& bandwidth) {
    Files f = sim("100Gbps");
    f["fleet.yaml"] =
        Replace(f["fleet.yaml"], "nodeBandwidth: 64GB/s", "islandBandwidth: " + bandwidth);
    return f;
  };
  s["7.1 islandBandwidth"] = Scenario{SimDecisions, island("900GB/s"), island("100GB/s")};
  // A fallback rule's speed: the run on that model takes 1/speed as long.
  auto fallback = [&](const std::string& order) {
    Files f = sim("100Gbps");
    f["fleet.yaml"] +=
        "policies:\n  - {name: f, kind: fallback, match: {classes: [training]}, "
        "order: " +
        order + "}\n";
    f["workload.jsonl"] =
        Replace(f["workload.jsonl"], R"("count":2,"gpus":4)", R"("count":1,"gpus":1)");
    return f;
  };
  s["12.7 speed"] = Scenario{SimDecisions, fallback("[G1]"), fallback("[{model: G1, speed: 0.5}]")};
  // Two G1 clusters, the cheaper on a slow fabric: a gang over two nodes runs faster on the
  // other, which a speed weight prefers.
  const std::string fabrics = R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
regions:
  - name: r
clusters:
  - name: fast
    region: r
    tier: dedicated
    prices: {G1: 10}
    interconnect: {nodeBandwidth: 64GB/s, leafBandwidth: 400Gbps}
    nodeGroups:
      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
  - name: slow
    region: r
    tier: dedicated
    prices: {G1: 5}
    interconnect: {nodeBandwidth: 64GB/s, leafBandwidth: 10Gbps}
    nodeGroups:
      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
tenants:
  - name: lab
)";
  const std::string two_nodes =
      "jobs:\n  - {name: j, class: training, tenant: lab, runtime: 1h, taskGroups: [{name: w, "
      "count: 2, cpu: 4, memory: 16Gi, devices: {count: 4}}]}\n";
  s["12.3 speed"] = place(WithPolicies(Weights("speed: 0"), fabrics, two_nodes),
                          WithPolicies(Weights("speed: 10"), fabrics, two_nodes));
  // The catalog's speed orders models for a job that names none.
  s["4 speed"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", kJobs}},
            {{"fleet.yaml", Replace(kFleet, "memory: 80Gi, labels: [fp8]}",
                                    "memory: 80Gi, labels: [fp8], speed: {training: 2}}")},
             {"jobs.yaml", kJobs}});
  const std::string npu_job =
      Replace(kJobs, "devices: {count: 2}", "devices: {count: 2, kind: npu}");
  const std::string g2_npu = Replace(kFleet, "{name: G2, kind: gpu", "{name: G2, kind: npu");
  s["13.2 kind"] = place(
      {{"fleet.yaml", g2_npu}, {"jobs.yaml", npu_job}},
      {{"fleet.yaml", g2_npu},
       {"jobs.yaml", Replace(kJobs, "devices: {count: 2}", "devices: {count: 2, kind: gpu}")}});
  s["4 kind"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", npu_job}},
            {{"fleet.yaml", Replace(kFleet, "{name: G2, kind: gpu", "{name: G2, kind: npu")},
             {"jobs.yaml", npu_job}});
  // A gang of two 4-device tasks on G2 under one leaf switch: w1's two nodes share a leaf, or
  // not.
  const std::string gang = Replace(
      kJobs, "      - {name: w, count: 1, cpu: 4, memory: 16Gi, devices: {count: 2}}\n",
      "      - {name: w, count: 2, cpu: 4, memory: 16Gi, devices: {count: 4, models: [G2]}}\n"
      "    gang: {require: leaf}\n");
  const std::string w1_topology = "devices: {model: G2, count: 4}}";
  auto w1_with = [&](const std::string& topology) {
    return Replace(kFleet, w1_topology,
                   "devices: {model: G2, count: 4}, topology: " + topology + "}");
  };
  s["7.3 nodesPerLeaf"] =
      place({{"fleet.yaml", w1_with("{nodesPerLeaf: 2}")}, {"jobs.yaml", gang}},
            {{"fleet.yaml", w1_with("{nodesPerLeaf: 1}")}, {"jobs.yaml", gang}});
  s["13.3 require"] =
      place({{"fleet.yaml", w1_with("{nodesPerLeaf: 1}")}, {"jobs.yaml", gang}},
            {{"fleet.yaml", w1_with("{nodesPerLeaf: 1}")},
             {"jobs.yaml", Replace(gang, "gang: {require: leaf}", "gang: {require: cluster}")}});
  // Three 4-device tasks on G2: more than w1's 8, so the gang is infeasible whole; elastic
  // from one task, it starts with the two that fit.
  const std::string array = Replace(
      kJobs, "      - {name: w, count: 1, cpu: 4, memory: 16Gi, devices: {count: 2}}\n",
      "      - {name: w, count: 3, cpu: 4, memory: 16Gi, devices: {count: 4, models: [G2]}}\n");
  s["13.3 minMembers"] =
      place({{"fleet.yaml", kFleet}, {"jobs.yaml", array}},
            {{"fleet.yaml", kFleet}, {"jobs.yaml", array + "    gang: {minMembers: 1}\n"}});
  const std::string spine_gang = Replace(gang, "gang: {require: leaf}", "gang: {require: spine}");
  s["7.3 leavesPerSpine"] = place(
      {{"fleet.yaml", w1_with("{nodesPerLeaf: 1, leavesPerSpine: 2}")}, {"jobs.yaml", spine_gang}},
      {{"fleet.yaml", w1_with("{nodesPerLeaf: 1, leavesPerSpine: 1}")}, {"jobs.yaml", spine_gang}});
  // w1 declared node by node.
  auto w1_node = [&](const std::string& cordoned) {
    return Replace(kFleet,
                   "    nodeGroups:\n      - {name: b, count: 2, cpu: 64, memory: 512Gi, devices: "
                   "{model: G2, count: 4}}\n",
                   "    nodes:\n      - {name: w1-x, cpu: 64, memory: 512Gi, cordoned: " +
                       cordoned + ", devices: {model: G2, count: 4}}\n");
  };
  // w1's two nodes declared one by one, each naming its leaf and spine; a gang of two 4-device
  // tasks needs them under one leaf (or spine).
  auto w1_nodes = [&](const std::string& second_leaf, const std::string& second_spine) {
    return Replace(kFleet,
                   "    nodeGroups:\n      - {name: b, count: 2, cpu: 64, memory: 512Gi, devices: "
                   "{model: G2, count: 4}}\n",
                   "    nodes:\n      - {name: w1-x, cpu: 64, memory: 512Gi, leaf: l1, spine: s1, "
                   "devices: {model: G2, count: 4}}\n      - {name: w1-y, cpu: 64, memory: 512Gi, "
                   "leaf: " +
                       second_leaf + ", spine: " + second_spine +
                       ", devices: {model: G2, count: 4}}\n");
  };
  s["7.4 leaf"] = place({{"fleet.yaml", w1_nodes("l1", "s1")}, {"jobs.yaml", gang}},
                        {{"fleet.yaml", w1_nodes("l2", "s1")}, {"jobs.yaml", gang}});
  s["7.4 spine"] = place({{"fleet.yaml", w1_nodes("l2", "s1")}, {"jobs.yaml", spine_gang}},
                         {{"fleet.yaml", w1_nodes("l2", "s2")}, {"jobs.yaml", spine_gang}});
  // Two devices within one island of a w1 node, islands of one device or of four.
  const std::string in_island =
      Replace(Replace(kJobs, "devices: {count: 2}", "devices: {count: 2, models: [G2]}"),
              "    taskGroups:", "    gang: {require: island}\n    taskGroups:");
  auto islands = [&](const std::string& per) {
    return Replace(kFleet, "devices: {model: G2, count: 4}}",
                   "devices: {model: G2, count: 4, perIsland: " + per + "}}");
  };
  s["7.3 perIsland"] = place({{"fleet.yaml", islands("4")}, {"jobs.yaml", in_island}},
                             {{"fleet.yaml", islands("1")}, {"jobs.yaml", in_island}});
  // A service's labels, matched by a rule that keeps the matching replicas off w1.
  auto service = [&](const std::string& tier) {
    return WithPolicies(
        "  - {name: r, kind: constrain, match: {labels: {tier: web}}, denyClusters: [w1]}\n",
        kFleet,
        kJobs + "services:\n  - name: s\n    tenant: lab\n    labels: {tier: " + tier +
            "}\n    replicas: {min: 1, max: 1}\n    replica: {cpu: 1, memory: 1Gi, devices: "
            "{count: 1}}\n    latencySLO: 800ms\n    load: {peakRps: 10, rpsPerReplica: 10}\n");
  };
  s["14 labels"] = place(service("db"), service("web"));
  s["7.4 cordoned"] = place({{"fleet.yaml", w1_node("false")}, {"jobs.yaml", kJobs}},
                            {{"fleet.yaml", w1_node("true")}, {"jobs.yaml", kJobs}});
  return s;
}

// Fields whose effect a scenario test elsewhere proves (over time, through a daemon, its
// agents or Slurm), by the test's name.
const std::map<std::string, std::string> kProvedElsewhere = {
    {"4 vendor", "BackendRouterTest.ARunOnALocalClusterIsAnOrderToItsAgents"},
    {"7 backend", "BackendRouterTest.ARunElsewhereIsAnEmulatedTimer"},
    {"7 backendOptions", "SlurmTest.AGangRunsAsOneSlurmAllocationWithItsDevices"},
    {"7 runAs", "SpecLookups.ATaskRunsAsItsTenantsUserElseAnAncestorsElseTheClusters"},
    {"10 runAs", "AgentRunAs.ATenantsTasksRunAsItsHostUser"},
    {"10 budgetPerDay", "Budgets.ATenantWhoseBudgetIsCommittedWaitsUntilMidnight"},
    {"10 guaranteed", "Governance.BorrowedCapacityIsReclaimedWhenItsOwnerNeedsIt"},
    {"10 limit", "EngineProperty.QuotaLimitsHoldAndGuaranteesAreHonoured"},
    {"10 borrow", "EngineProperty.QuotaLimitsHoldAndGuaranteesAreHonoured"},
    {"10 lend", "EngineProperty.QuotaLimitsHoldAndGuaranteesAreHonoured"},
    {"11 preemptible", "Governance.PreemptionTakesTheCheapestVictimsAndNeverAHigherClass"},
    {"11 minRunTime",
     "PreemptionGuard.AYoungRunIsProtectedUntilItsClassesMinRunTimeThenTakenWithoutAnotherEvent"},
    {"12.2 crossRegion", "GlobalLayer.CrossRegionFalseKeepsAServicesReplicasInTheRegionOfTheFirst"},
    {"12.3 placement", "EngineChoice.AWeightsRulesScorerPlacesTheJobsItMatches"},
    {"12.3 spread", "ReplicaSpreading.WithoutTheLabelOrWithSpreadWeighedZeroTheyPack"},
    {"12.4 allow", "Governance.PreemptionRulesRestrictWhoMayPreemptWhom"},
    {"12.4 victimClasses", "VictimRules.ARuleNarrowsByClassPriorityAndPlace"},
    {"12.4 victimMaxPriority", "VictimRules.ARuleNarrowsByClassPriorityAndPlace"},
    {"12.4 victimsPreemptibleOnly", "VictimRules.AllowFalseAndPreemptibleOnlyYieldToAReclaim"},
    {"12.4 clusters", "VictimRules.ARuleNarrowsByClassPriorityAndPlace"},
    {"12.4 regions", "Governance.APreemptionRuleMayOpenNonPreemptibleVictimsInItsRegionsOnly"},
    {"12.4 gracePeriod", "Governance.AGracePeriodLetsTheVictimCheckpointAndDelaysThePreemptor"},
    {"12.5 after", "GlobalLayer.DedicatedFirstThenSharedThenElasticAfterTheWait"},
    {"12.5 budgetPerDay", "Budgets.TheBurstBudgetClosesTheCloudOnceSpent"},
    {"12.5 clusters", "GlobalLayer.DedicatedFirstThenSharedThenElasticAfterTheWait"},
    {"12.6 clusters", "Reservations.NonPreemptibleWorkStaysOffHeldDevices"},
    {"12.6 regions", "SimRun.ResidencyAndReservationsHoldThroughoutTheDecisionLog"},
    {"12.6 lendPreemptibly", "Reservations.AHoldThatIsNotLentStaysEmptyEvenForPreemptibleWork"},
    {"12.8 utilizationBelow", "IdleReclaim.ABusyReportRestartsTheClock"},
    {"12.8 action", "IdleReclaim.OtherWorkIsNoticedOnceAndKeepsRunning"},
    {"12.9 ordering", "DaemonEngineThread.TheSchedulerIsTheConfigurationsAndEveryDecisionNamesIt"},
    {"12.9 placement", "DaemonEngineThread.TheSchedulerIsTheConfigurationsAndEveryDecisionNamesIt"},
    {"12.9 restartCost",
     "PreemptionGuard.ARestartCostLongerThanTheWaitAvoidedMakesAVictimWorthKeeping"},
    {"12.9 reclaimAfter", "Governance.BorrowedCapacityIsReclaimedWhenItsOwnerNeedsIt"},
    {"13 preemptible", "Reservations.PreemptibleWorkBorrowsHeldDevicesAndGivesThemBack"},
    {"13 checkpointInterval", "Governance.PreemptionTakesTheCheapestVictimsAndNeverAHigherClass"},
    {"13 runtime", "EngineScenario.BackfillPassesTheHeadGangOnlyWhereItCannotDelayIt"},
    {"13 deadline", "Deadlines.TheEarliestDeadlineStartsFirstWithinAPriority"},
    {"13 command", "AgentsTest.TheExampleJobsRunAsProcessesWithTheirDevicesAndPeers"},
    {"13 env", "ControlPlaneAgents.ATaskSeesNoneOfItsAgentsCredentials"},
    {"13.1 name", "Place.JsonNamesClusterNodeAndDevicesPerTask"},
    {"13.3 prefer", "Place.RowsSayWhetherThePreferredLevelWasMet"},
    {"14 priority", "Services.ScaleUpPreemptsBatchAndScaleDownReturnsTheDevices"},
    {"14 userRegions", "Services.ReplicasTooFarFromTheirUsersDoNotCount"},
    {"14 weight", "Services.ReplicasTooFarFromTheirUsersDoNotCount"},
    {"14 curve", "ServeServices.ReplicasFollowTheLoadSurviveAKill9AndStopWithTheirService"},
    {"14 serviceTime", "AgentsTest.AServicesReplicasRunOnAgentsUntilTheServiceIsDeleted"},
};

// Fields that only hold others, walked through theirs.
const std::set<std::string> kContainers = {
    "7 interconnect", "7 nodeGroups", "7 nodes",     "7.3 devices", "7.3 topology",
    "7.4 devices",    "10 quotas",    "10 children", "12 kind",     "13 taskGroups",
    "13 gang",        "14 replicas",  "14 replica",  "14 load"};

// Documented fields no probe proves yet, and why: each is work left. None today; a field
// added to the docs without a probe goes here with its reason until one proves it.
const std::map<std::string, std::string> kNotYetProved = {};

// Whether a TEST or TEST_F named `name` ("Suite.Name") is in the tests' sources.
bool TestExists(const std::string& name) {
  const size_t dot = name.find('.');
  const std::string suite = name.substr(0, dot), test = name.substr(dot + 1);
  const std::regex declared("TEST(_F)?\\(" + suite + ", " + test + "\\)");
  for (const auto& f : fs::recursive_directory_iterator(kSource / "tests")) {
    if (f.path().extension() != ".cc") continue;
    if (std::regex_search(testing::ReadText(f.path()), declared)) return true;
  }
  return false;
}

TEST(ConfigFields, EveryDocumentedFieldIsProvedRequiredFreeTextOrListedAsNotYet) {
  const std::vector<Field> fields = DocumentedFields();
  ASSERT_GT(fields.size(), 150u) << "the tables of docs/configuration.md were not found";
  const std::map<std::string, Scenario> scenarios = Scenarios();
  std::set<std::string> documented, unproved;
  for (const Field& f : fields) {
    documented.insert(f.id());
    if (scenarios.count(f.id()) || kProvedElsewhere.count(f.id()) || kContainers.count(f.id()))
      continue;
    // Required: leaving it out is an error (BadInput covers the required fields' messages).
    if (f.row.find("| yes |") != std::string::npos) continue;
    // Free text that nothing acts on, and the docs say so.
    if (f.row.find("free text") != std::string::npos ||
        f.row.find("free key/values") != std::string::npos)
      continue;
    unproved.insert(f.id());
  }
  std::set<std::string> listed;
  for (const auto& [id, why] : kNotYetProved)
    listed.insert(id);
  EXPECT_EQ(unproved, listed) << "a documented field is neither proved nor listed, or a listed "
                                 "one is proved now (take it off kNotYetProved)";
  for (const auto& [id, test] : kProvedElsewhere) {
    EXPECT_TRUE(documented.count(id)) << id << " is not documented";
    EXPECT_TRUE(TestExists(test)) << id << ": no test " << test;
  }
  for (const auto& [id, sc] : scenarios)
    EXPECT_TRUE(documented.count(id)) << id << " is not documented";
  for (const std::string& id : kContainers)
    EXPECT_TRUE(documented.count(id)) << id << " is not documented";
}

TEST(ConfigFields, EachScenarioChangesADecision) {
  const std::map<std::string, Scenario> scenarios = Scenarios();
  for (const auto& [id, sc] : scenarios) {
    SCOPED_TRACE(id);
    // One side decides; the other decides otherwise, or is refused with a located error.
    const std::string before = sc.run(sc.before), after = sc.run(sc.after);
    EXPECT_FALSE(before.rfind("exit", 0) == 0 && after.rfind("exit", 0) == 0) << before << "\n"
                                                                              << after;
    EXPECT_NE(before, after) << "the field changed no decision:\n" << before;
  }
}

}  // namespace
}  // namespace tessera
