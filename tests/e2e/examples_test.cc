// Every example under examples/ validates, and the README's main job (validate + fleet on
// the enterprise example) works through the real binary, as scripts/demo runs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "config/loader.h"
#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

struct Output {
  int code;
  std::string text;
};

// stdout alone (the command's stderr dropped).
Output RunQuiet(const std::string& args) {
  Output out{0, ""};
  out.code = testing::RunTessera(args, &out.text, /*with_stderr=*/false);
  return out;
}

const fs::path kExamples = fs::path(TESSERA_SOURCE_DIR) / "examples";

TEST(Examples, EveryExampleDirectoryAndFileValidates) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(kExamples)) {
    // Workloads are not configurations: SimRun.TheExampleJsonlWorkloadRunsToCompletion runs them.
    if (!entry.is_directory() || entry.path().filename() == "workloads") continue;
    // fleets/ holds separate fleets, one per file; every other directory is one configuration.
    std::vector<fs::path> configs;
    if (entry.path().filename() == "fleets") {
      for (const auto& file : fs::directory_iterator(entry.path()))
        configs.push_back(file.path());
    } else {
      configs.push_back(entry.path());
    }
    for (const fs::path& config : configs) {
      LoadResult r = LoadSpecFiles({config.string()});
      EXPECT_TRUE(r.spec.has_value()) << config << "\n" << r.diagnostics.ToString();
      ++checked;
    }
  }
  EXPECT_GE(checked, 4);  // small, enterprise, fleets/gavel-108, fleets/philly-64
}

TEST(Examples, EnterpriseMeetsTheFoundationBrief) {
  LoadResult r = LoadSpecFiles({(kExamples / "enterprise").string()});
  ASSERT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  const Spec& s = *r.spec;
  EXPECT_GE(s.regions.size(), 3u);
  EXPECT_GE(s.clusters.size(), 6u);
  EXPECT_GT(s.nodes.size(), 2000u);
  std::set<ClusterTier> tiers;
  for (const Cluster& c : s.clusters)
    tiers.insert(c.tier);
  EXPECT_EQ(tiers.size(), 3u) << "dedicated, shared and elastic clusters";
  std::set<DeviceKind> kinds;
  bool cpu_only_nodes = false;
  for (const Node& n : s.nodes) {
    for (const Device& d : n.devices)
      kinds.insert(s.model(d.model).kind);
    cpu_only_nodes |= n.devices.empty();
  }
  EXPECT_TRUE(kinds.count(DeviceKind::kGpu) && kinds.count(DeviceKind::kNpu));
  EXPECT_TRUE(cpu_only_nodes);
  std::set<RuleKind> rule_kinds;
  for (const PolicyRule& p : s.policies)
    rule_kinds.insert(p.kind());
  EXPECT_EQ(rule_kinds.size(), static_cast<size_t>(kRuleKindCount)) << "every rule kind";
  std::set<WorkloadClass> classes;
  for (const Job& j : s.jobs)
    classes.insert(j.job_class);
  EXPECT_EQ(classes.size(), 4u) << "training, finetune, batch, eval";
  EXPECT_FALSE(s.services.empty());
  bool residency = false;
  for (const Dataset& d : s.datasets)
    residency |= !d.residency.empty();
  EXPECT_TRUE(residency);
  // Two orgs, each with departments that have projects.
  int roots = 0, depth3 = 0;
  for (const Tenant& t : s.tenants) {
    roots += t.parent ? 0 : 1;
    depth3 += std::count(t.path.begin(), t.path.end(), '/') == 2 ? 1 : 0;
  }
  EXPECT_GE(roots, 2);
  EXPECT_GE(depth3, 4);
}

TEST(MainJob, ValidateAndFleetViewThroughTheBinary) {
  std::string dir = (kExamples / "enterprise").string();
  Output v = RunQuiet("validate " + dir);
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.text.rfind("ok: ", 0), 0u) << v.text;

  Output table = RunQuiet("fleet " + dir);
  EXPECT_EQ(table.code, 0);
  EXPECT_NE(table.text.find("Largest gang"), std::string::npos);

  Output j = RunQuiet("fleet " + dir + " -o json");
  ASSERT_EQ(j.code, 0);
  auto doc = nlohmann::json::parse(j.text);
  LoadResult r = LoadSpecFiles({dir});
  ASSERT_TRUE(r.spec.has_value());
  EXPECT_EQ(doc["totals"]["nodes"].get<size_t>(), r.spec->nodes.size());
  int64_t devices = 0;
  for (const Node& n : r.spec->nodes)
    devices += static_cast<int64_t>(n.devices.size());
  EXPECT_EQ(doc["totals"]["devices"].get<int64_t>(), devices);
  int64_t by_model = 0;
  for (const auto& [model, n] : doc["totals"]["devicesByModel"].items())
    by_model += n.get<int64_t>();
  EXPECT_EQ(by_model, devices);
  EXPECT_EQ(doc["clusters"].size(), r.spec->clusters.size());

  Output y = RunQuiet("fleet " + dir + " -o yaml");
  EXPECT_EQ(y.code, 0);
  EXPECT_NE(y.text.find("devicesByModel:"), std::string::npos);
}

TEST(MainJob, BadInputExitsTwo) {
  EXPECT_EQ(RunQuiet("validate /nonexistent.yaml").code, 2);
  EXPECT_EQ(RunQuiet("fleet " + (kExamples / "enterprise").string() + " -o xml").code, 2);
  EXPECT_EQ(RunQuiet("no-such-command").code, 2);
}

}  // namespace
}  // namespace tessera
