// Services in the simulator (docs/simulation.md#services): replicas follow the diurnal curve,
// scale-up preempts preemptible batch work, scale-down returns the devices, and SLO attainment
// counts only replicas whose round trip and service time fit the SLO.
#include "sim/services.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "config/loader.h"
#include "sim/sim_run.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::kHour;

// 8 G1 in region near; users in near (2 ms) and far (300 ms one way). chat needs 100 rps per
// replica: at the diurnal peak (600 rps) 6 replicas, at the trough (180 rps) 2.
std::string Fleet(const std::string& users) {
  return R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
regions:
  - name: near
  - name: far
links:
  - {from: near, to: far, latency: 300ms, bandwidth: 10Gbps}
clusters:
  - name: c
    region: near
    tier: dedicated
    nodeGroups:
      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
tenants:
  - name: t
services:
  - name: chat
    tenant: t
    priority: critical
    replicas: {min: 1, max: 8}
    replica: {cpu: 4, memory: 16Gi, devices: {count: 1, models: [G1]}}
    latencySLO: 500ms
    serviceTime: 100ms
    userRegions:
)" + users +
         R"(    load: {peakRps: 600, rpsPerReplica: 100, curve: diurnal}
)";
}

// Eight low-priority, preemptible one-G1 batch jobs of 40 hours at time 0, and a last small
// job at 48 h: the services run for two days.
Workload Batch(const Spec& spec) {
  Workload w;
  for (int i = 0; i <= 8; ++i) {
    TraceJob tj;
    Job& j = tj.job;
    j.name = "batch" + std::to_string(i);
    j.job_class = WorkloadClass::kBatch;
    j.tenant = TenantId(0);
    j.priority = "low";
    j.preemptible = true;
    j.checkpoint_interval = kHour;
    TaskGroup g;
    g.name = "task";
    g.request.cpu = 1000;
    g.request.memory = 1024;
    g.request.devices.count = 1;
    g.request.devices.models = {{*spec.FindModel("G1"), 1000}};
    j.task_groups.push_back(g);
    j.submit_time = i < 8 ? 0 : 48 * kHour;
    tj.work = i < 8 ? 40 * kHour : kHour;
    j.runtime = tj.work;
    w.jobs.push_back(tj);
  }
  return w;
}

SimOutcome Simulate(const std::string& users) {
  LoadResult loaded = LoadSpecTexts({{"fleet.yaml", Fleet(users)}});
  EXPECT_TRUE(loaded.spec.has_value());
  const Spec& spec = *loaded.spec;
  ScorerRegistry scorers;
  RegisterBuiltinScorers(scorers);
  OrderingRegistry orderings;
  RegisterBuiltinOrderings(orderings);
  auto out = RunSimulation(spec, Batch(spec), *ParseSimPolicy("backfill"), SimOptions{}, scorers,
                           orderings);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return *out;
}

TEST(Services, ScaleUpPreemptsBatchAndScaleDownReturnsTheDevices) {
  SimOutcome out = Simulate("      - {region: near, weight: 1}\n");
  const auto& chat = out.metrics["services"]["per_service"]["chat"];
  // 2..6 replicas over the day; the peak needs 6 of 8 devices, so batch work makes room.
  EXPECT_EQ(chat["replicas"]["max"], 6) << chat.dump();
  EXPECT_GE(out.metrics["services"]["slo_attainment"].get<double>(), 0.99) << chat.dump();
  int preempted_by_replica = 0, replicas_cancelled = 0;
  std::istringstream lines(out.decisions_jsonl);
  std::string line;
  while (std::getline(lines, line)) {
    auto d = nlohmann::json::parse(line);
    const std::string job = d["job"], reason = d["reason"];
    if (d["kind"] == "preempt" && reason.rfind("preempted-by:chat/r", 0) == 0) {
      EXPECT_EQ(job.rfind("batch", 0), 0u) << line;
      ++preempted_by_replica;
    }
    if (d["kind"] == "cancel" && job.rfind("chat/r", 0) == 0) ++replicas_cancelled;
  }
  EXPECT_GE(preempted_by_replica, 3);
  EXPECT_GE(replicas_cancelled, 4);  // each night back down to 2, and all at the end
  // The batch work still completes, on the devices the replicas gave back.
  EXPECT_EQ(out.metrics["jobs"]["completed"], 9) << out.metrics["jobs"].dump();
  EXPECT_GT(out.metrics["preemptions"].get<int>(), 0);
}

TEST(Services, ReplicasTooFarFromTheirUsersDoNotCount) {
  // Users in far: a round trip of 600 ms exceeds the SLO before any service time, so no
  // cluster may host their replicas; they wait and nothing is served within the SLO.
  SimOutcome out = Simulate("      - {region: far, weight: 1}\n");
  const auto& chat = out.metrics["services"]["per_service"]["chat"];
  EXPECT_EQ(chat["replicas"]["max"], 0) << chat.dump();
  EXPECT_EQ(out.metrics["services"]["slo_attainment"].get<double>(), 0.0);
}

}  // namespace
}  // namespace tessera
