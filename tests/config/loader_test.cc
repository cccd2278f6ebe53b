// Loading: merging of several files, node expansion, and what a rejected load leaves behind.
#include "config/loader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

TEST(Loader, NodeGroupsExpandWithNamesLeavesSpinesAndIslands) {
  LoadResult r = LoadSpecTexts({{"f.yaml", R"(
deviceModels: [{name: G, kind: gpu, memory: 16Gi}]
regions: [{name: r}]
clusters:
  - name: c
    region: r
    nodeGroups:
      - name: big
        count: 10
        cpu: 8
        memory: 64Gi
        devices: {model: G, count: 8, perIsland: 4}
        topology: {nodesPerLeaf: 4, leavesPerSpine: 2}
      - {name: small, count: 2, cpu: 4, memory: 8Gi}
    nodes:
      - {name: a, cpu: 1, memory: 1Gi, leaf: x}
      - {name: b, cpu: 1, memory: 1Gi, leaf: x}
      - {name: lone, cpu: 1, memory: 1Gi}
)"}});
  ASSERT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  const Spec& s = *r.spec;
  ASSERT_EQ(s.nodes.size(), 15u);
  EXPECT_EQ(s.nodes[0].name, "c-big-0000");
  EXPECT_EQ(s.nodes[9].name, "c-big-0009");
  // 10 nodes, 4 per leaf -> leaves 0,0,0,0,1,1,1,1,2,2; 2 leaves per spine -> spines 0,0,1.
  EXPECT_EQ(s.nodes[3].leaf, 0);
  EXPECT_EQ(s.nodes[4].leaf, 1);
  EXPECT_EQ(s.nodes[9].leaf, 2);
  EXPECT_EQ(s.nodes[7].spine, 0);
  EXPECT_EQ(s.nodes[8].spine, 1);
  EXPECT_EQ(s.nodes[0].devices[3].island, 0);
  EXPECT_EQ(s.nodes[0].devices[4].island, 1);
  // The next group starts a new leaf and spine.
  EXPECT_EQ(s.nodes[10].name, "c-small-0000");
  EXPECT_EQ(s.nodes[10].leaf, 3);
  EXPECT_EQ(s.nodes[10].spine, 2);
  EXPECT_TRUE(s.nodes[10].devices.empty());
  // Single nodes naming the same leaf share it; an unnamed one gets a leaf of its own.
  EXPECT_EQ(s.nodes[12].leaf, s.nodes[13].leaf);
  EXPECT_NE(s.nodes[14].leaf, s.nodes[12].leaf);
  EXPECT_EQ(s.clusters[0].node_count, 15u);
}

TEST(Loader, FilesMergeAndErrorsUseEachFilesOwnIndices) {
  LoadResult ok = LoadSpecTexts(
      {{"a.yaml", "regions: [{name: r1}, {name: r2}]\n"}, {"b.yaml", "regions: [{name: r3}]\n"}});
  ASSERT_TRUE(ok.spec.has_value());
  EXPECT_EQ(ok.spec->regions.size(), 3u);
  EXPECT_EQ(ok.spec->regions[2].name, "r3");

  LoadResult bad = LoadSpecTexts({{"a.yaml", "regions: [{name: r1}, {name: r2}]\n"},
                                  {"b.yaml", "regions:\n  - name: r3\n  - nmae: r4\n"}});
  ASSERT_FALSE(bad.spec.has_value());
  std::string text = bad.diagnostics.ToString();
  // The second region of b.yaml is regions[1] in b.yaml, though regions[3] when merged.
  EXPECT_NE(text.find("b.yaml:3:5: regions[1].nmae: unknown field"), std::string::npos) << text;
}

TEST(Loader, TheSchedulerSectionIsReadOnceAndDefaultsWhenAbsent) {
  LoadResult none = LoadSpecTexts({{"a.yaml", "regions: [{name: r1}]\n"}});
  ASSERT_TRUE(none.spec.has_value());
  EXPECT_EQ(none.spec->scheduler.policy_or_default(), "backfill");
  EXPECT_EQ(none.spec->scheduler.placement_or_default(), "tessera");

  LoadResult las = LoadSpecTexts({{"a.yaml", "scheduler: {ordering: las, placement: best-fit}\n"}});
  ASSERT_TRUE(las.spec.has_value()) << las.diagnostics.ToString();
  EXPECT_EQ(las.spec->scheduler.ordering, "las");
  EXPECT_EQ(las.spec->scheduler.placement, "best-fit");
  // A command line's flags take the place of what they name.
  SchedulerSettings over = las.spec->scheduler.OverriddenBy({"hetero", ""});
  EXPECT_EQ(over.ordering, "hetero");
  EXPECT_EQ(over.placement, "best-fit");

  LoadResult twice = LoadSpecTexts(
      {{"a.yaml", "scheduler: {ordering: las}\n"}, {"b.yaml", "scheduler: {ordering: fifo}\n"}});
  ASSERT_FALSE(twice.spec.has_value());
  EXPECT_NE(twice.diagnostics.ToString().find(
                "b.yaml:1:12: scheduler: the scheduler section is declared in another file too"),
            std::string::npos)
      << twice.diagnostics.ToString();
}

TEST(Loader, ReferencesResolveAcrossFilesInAnyOrder) {
  LoadResult r = LoadSpecTexts(
      {{"jobs.yaml",
        "jobs: [{name: j, class: batch, tenant: t, taskGroups: [{cpu: 1, memory: 1Gi}]}]\n"},
       {"tenants.yaml", "tenants: [{name: t}]\n"},
       {"fleet.yaml",
        "regions: [{name: r}]\nclusters: [{name: c, region: r, nodes: [{name: n, "
        "cpu: 2, memory: 2Gi}]}]\n"}});
  ASSERT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  EXPECT_EQ(r.spec->jobs[0].tenant, *r.spec->FindTenant("t"));
}

TEST(Loader, AnUnreadableFileDoesNotFloodWithDanglingReferences) {
  LoadResult r = LoadSpecTexts(
      {{"catalog.yaml", "deviceModels:\n  - {name: H800, kind: gpu, memory: 80Gi\n"},
       {"fleet.yaml", std::string(testing::kBaseFleet).substr(0, 0) +
                          "regions: [{name: r}]\nclusters: [{name: c, region: r, nodeGroups: "
                          "[{name: g, count: 2, cpu: 8, memory: 8Gi, devices: {model: H800, "
                          "count: 8}}]}]\n"}});
  ASSERT_FALSE(r.spec.has_value());
  ASSERT_EQ(r.diagnostics.size(), 1u) << r.diagnostics.ToString();
  EXPECT_NE(r.diagnostics.items()[0].message.find("YAML syntax error"), std::string::npos);
}

// The small example with its A100 count misspelt: the one cause is reported, and none of the
// four consequences (a price for devices the cluster lost, quota guarantees and two requests
// the fleet can no longer hold), which a note counts.
TEST(Loader, AFleetErrorIsReportedWithoutItsConsequences) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/examples/small/fleet.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::string good = "devices: {model: A100, count: 8}";
  ASSERT_NE(yaml.find(good), std::string::npos);
  LoadResult ok = LoadSpecTexts({{"fleet.yaml", yaml}});
  ASSERT_TRUE(ok.spec) << ok.diagnostics.ToString();
  EXPECT_TRUE(ok.diagnostics.notes().empty());

  yaml.replace(yaml.find(good), good.size(), "devices: {model: A100, count: eight}");
  LoadResult r = LoadSpecTexts({{"fleet.yaml", yaml}});
  ASSERT_FALSE(r.spec);
  ASSERT_EQ(r.diagnostics.size(), 1u) << r.diagnostics.ToString();
  EXPECT_EQ(r.diagnostics.items()[0].path, "clusters[0].nodeGroups[0].devices.count");
  ASSERT_EQ(r.diagnostics.notes().size(), 1u);
  EXPECT_EQ(r.diagnostics.notes()[0].rfind("4 more error(s) about the fleet's capacity", 0), 0u)
      << r.diagnostics.notes()[0];

  // An error outside the fleet leaves the capacity checks on: a job asking for too much is
  // still reported beside a bad priority.
  LoadResult jobs = testing::LoadWithBase(R"(jobs:
  - {name: j, class: batch, tenant: acme/prod, priority: nope,
     taskGroups: [{count: 1, cpu: 1, memory: 1Gi, devices: {count: 16}}]}
)");
  ASSERT_EQ(jobs.diagnostics.size(), 2u) << jobs.diagnostics.ToString();
  EXPECT_TRUE(jobs.diagnostics.notes().empty());
}

TEST(Loader, DirectoriesLoadTheirYamlFilesInNameOrder) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tessera-loader-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "b.yaml") << "regions: [{name: second}]\n";
  std::ofstream(dir / "a.yml") << "regions: [{name: first}]\n";
  std::ofstream(dir / "notes.txt") << "not yaml: [\n";
  LoadResult r = LoadSpecFiles({dir.string()});
  ASSERT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  ASSERT_EQ(r.spec->regions.size(), 2u);
  EXPECT_EQ(r.spec->regions[0].name, "first");
  fs::path empty = dir / "empty";
  fs::create_directories(empty);
  EXPECT_FALSE(LoadSpecFiles({empty.string()}).spec.has_value());
  EXPECT_FALSE(LoadSpecFiles({(dir / "missing.yaml").string()}).spec.has_value());
  fs::remove_all(dir);
}

TEST(Loader, DefaultPriorityClassesApplyOnlyWhenNoneAreDeclared) {
  LoadResult d = LoadSpecTexts({{"a.yaml", "regions: [{name: r}]\n"}});
  ASSERT_TRUE(d.spec.has_value());
  EXPECT_NE(d.spec->FindPriority("critical"), nullptr);
  LoadResult own = LoadSpecTexts({{"a.yaml", "priorityClasses: [{name: p1, value: 5}]\n"}});
  ASSERT_TRUE(own.spec.has_value());
  EXPECT_EQ(own.spec->priority_classes.size(), 1u);
  EXPECT_EQ(own.spec->FindPriority("critical"), nullptr);
}

TEST(Loader, JobFieldsAreReadWithTheirUnits) {
  LoadResult r = testing::LoadWithBase(R"(
jobs:
  - name: j
    class: training
    tenant: acme/research/llm
    priority: high
    preemptible: true
    checkpointInterval: 30m
    runtime: 2.5h
    deadline: 2026-12-10T08:00:00Z
    datasets: [corpus]
    gang: {minMembers: 2, require: leaf, prefer: node}
    taskGroups:
      - name: w
        count: 2
        cpu: 500m
        memory: 1.5Gi
        devices: {count: 8, models: [H800, {model: Ascend910B, speed: 0.6}], minMemory: 64Gi}
      - {name: e, cpu: 1, memory: 1Gi, devices: {fraction: 0.25, kind: gpu}}
)");
  ASSERT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  const Job& j = r.spec->jobs.at(0);
  EXPECT_EQ(j.job_class, WorkloadClass::kTraining);
  EXPECT_EQ(j.preemptible, true);
  EXPECT_EQ(j.checkpoint_interval, 1800000);
  EXPECT_EQ(j.runtime, 9000000);
  EXPECT_EQ(j.deadline, 1796889600000);
  EXPECT_EQ(j.gang.require, TopologyLevel::kLeaf);
  EXPECT_EQ(j.TaskCount(), 3);
  const TaskRequest& w = j.task_groups[0].request;
  EXPECT_EQ(w.cpu, 500);
  EXPECT_EQ(w.memory, 1536);
  EXPECT_EQ(w.devices.TotalMilli(), 8000);
  EXPECT_EQ(w.devices.SpeedOn(*r.spec->FindModel("Ascend910B")), 600);
  EXPECT_EQ(w.devices.min_memory, 64 * 1024);
  const DeviceRequest& e = j.task_groups[1].request.devices;
  EXPECT_TRUE(e.fractional());
  EXPECT_EQ(e.milli_each, 250);
  EXPECT_TRUE(e.Accepts(*r.spec->FindModel("H800"), r.spec->model(*r.spec->FindModel("H800"))));
  EXPECT_FALSE(
      e.Accepts(*r.spec->FindModel("Ascend910B"), r.spec->model(*r.spec->FindModel("Ascend910B"))));
}

}  // namespace
}  // namespace tessera
