// The daemon's Backend port (server/backend_router.h) without HTTP or threads: a run on a
// `local` cluster goes to its nodes' agents as an order (the daemon's job id and run number,
// a placeholder command, the devices and their variable, the tenant's host user), its stop to
// the same agents with its grace; a run elsewhere goes to the emulated timers.
#include "server/backend_router.h"

#include <gtest/gtest.h>

#include <vector>

#include "config/loader.h"
#include "server/emulated_backend.h"

namespace tessera {
namespace {

const char* const kRouterFleet = R"(deviceModels:
  - {name: L4, kind: gpu, vendor: nvidia, memory: 24Gi}
regions:
  - name: lab
clusters:
  - name: bench
    region: lab
    tier: dedicated
    backend: local
    nodeGroups:
      - {name: gpu, count: 2, cpu: 8, memory: 32Gi, devices: {model: L4, count: 2}}
  - name: emu
    region: lab
    tier: shared
    backend: emulated
    nodeGroups:
      - {name: gpu, count: 1, cpu: 8, memory: 32Gi, devices: {model: L4, count: 2}}
tenants:
  - name: lab
    runAs: {user: nobody}
)";

struct Posted final : EventSink {
  void Post(const Event& e) override { events.push_back(e); }
  std::vector<Event> events;
};

class BackendRouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadResult r = LoadSpecTexts({{"fleet.yaml", kRouterFleet}});
    ASSERT_TRUE(r.spec) << r.diagnostics.ToString();
    spec_ = std::make_unique<Spec>(*r.spec);
    auto cell = CellState::FromSpec(*spec_);
    ASSERT_TRUE(cell.ok()) << cell.status().message();
    cell_ = std::make_unique<CellState>(std::move(*cell));
    for (uint32_t n = 0; n < cell_->node_count(); ++n)
      hub_.AddNode(cell_->node_name(n));
    router_.emulated().SetSink(&posted_);
    router_.Use(*spec_, *cell_);
  }

  // A running job of `tasks` tasks with one L4 each, on the nodes of `cluster` in turn.
  JobRecord RunOn(const std::string& cluster, int32_t tasks) {
    JobRecord j;
    j.id = JobId(3);
    j.job.name = "train";
    j.job.tenant = *spec_->FindTenant("lab");
    j.job.runtime = 600'000;
    j.job.task_groups.push_back({});
    j.job.task_groups[0].count = tasks;
    j.job.task_groups[0].request.devices.count = 1;
    j.restarts = 2;
    j.generation = 7;
    j.state = JobState::kRunning;
    const ClusterId want = *spec_->FindCluster(cluster);
    int32_t t = 0;
    for (uint32_t n = 0; n < cell_->node_count() && t < tasks; ++n) {
      if (spec_->node(cell_->spec_node(n)).cluster != want) continue;
      Placement p;
      p.node = n;
      p.devices.push_back({1, 1000});
      p.task.index = t++;
      j.placements.push_back(p);
    }
    return j;
  }

  std::unique_ptr<Spec> spec_;
  std::unique_ptr<CellState> cell_;
  Posted posted_;
  std::vector<const JobRecord*> keyed_;
  BackendRouter router_{std::make_unique<AgentHub>(AgentHubOptions{}, "epoch"),
                        [this](const JobRecord& j) {
                          keyed_.push_back(&j);
                          return BackendRouter::RunKey{41, 5 + j.restarts};
                        }};
  AgentHub& hub_ = router_.agents();
};

TEST_F(BackendRouterTest, ARunOnALocalClusterIsAnOrderToItsAgents) {
  JobRecord j = RunOn("bench", 2);
  EXPECT_EQ(router_.KindOf(j), BackendKind::kLocal);
  RunOrder order = router_.OrderOf(j);
  EXPECT_EQ(order.job, 41);
  EXPECT_EQ(order.run, 7);  // the daemon's count of runs, not the engine's
  EXPECT_EQ(order.generation, 7u);
  // No program named: a placeholder that holds the devices for the runtime left.
  EXPECT_EQ(order.command, (std::vector<std::string>{"/bin/sh", "-c", "exec sleep 600"}));
  ASSERT_EQ(order.tasks.size(), 2u);
  EXPECT_EQ(order.tasks[0].node, "bench-gpu-0000");
  EXPECT_EQ(order.tasks[1].node, "bench-gpu-0001");
  EXPECT_EQ(order.tasks[0].devices, std::vector<int>{1});
  EXPECT_EQ(order.tasks[0].visible_variable, "CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(order.tasks[0].run_as_user, "nobody");

  router_.Launch(j, 1000);
  EXPECT_TRUE(posted_.events.empty());  // not the emulated timers
  SyncAnswer a = hub_.Wait("bench-gpu-0001", 0, 0);
  ASSERT_EQ(a.run.size(), 1u);
  EXPECT_EQ(a.run[0].key.ToString(), "41.7.1");
  EXPECT_EQ(a.run[0].run_as_user, "nobody");

  j.stop_grace = 30'000;
  router_.Stop(j, 2000);
  a = hub_.Wait("bench-gpu-0001", a.version, 0);
  ASSERT_EQ(a.stop.size(), 1u);
  EXPECT_EQ(a.stop[0].key.ToString(), "41.7.1");
  EXPECT_EQ(a.stop[0].grace_ms, 30'000);
}

TEST_F(BackendRouterTest, ARunElsewhereIsAnEmulatedTimer) {
  JobRecord j = RunOn("emu", 1);
  EXPECT_EQ(router_.KindOf(j), BackendKind::kEmulated);
  j.last_start = 1000;
  router_.Launch(j, 1000);
  ASSERT_EQ(posted_.events.size(), 1u);
  EXPECT_EQ(posted_.events[0].kind, EventKind::kFinish);
  EXPECT_EQ(posted_.events[0].time, 601'000);
  EXPECT_EQ(posted_.events[0].generation, 7u);
  router_.Stop(j, 2000);  // the timer is left to fire: the engine ignores an older run's events
  EXPECT_TRUE(hub_.Wait("bench-gpu-0000", 0, 0).run.empty());
  EXPECT_TRUE(keyed_.empty());  // the agents' ids were never asked for
}

TEST_F(BackendRouterTest, EachTaskHasItsGroupsShapeForSlurm) {
  JobRecord j = RunOn("bench", 2);
  j.job.task_groups[0].request.cpu = 4000;
  j.job.task_groups[0].request.memory = 8192;
  std::vector<SlurmTaskShape> shapes = BackendRouter::ShapesOf(j);
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[1].cpu, 4000);
  EXPECT_EQ(shapes[1].memory, 8192);
  EXPECT_EQ(shapes[1].gpus, 1);
  // A job with no placement runs nowhere but on the timers.
  EXPECT_EQ(router_.KindOf(JobRecord{}), BackendKind::kEmulated);
}

}  // namespace
}  // namespace tessera
