// Device nodes are for device work: CPU-only work goes to nodes without devices first, and no
// task takes the CPU or memory a node's free devices need, unless nothing else fits (then the
// decision says so). The guards are TaskShape::Guard, applied by Engine::PlaceGuarded.
#include <gtest/gtest.h>

#include <string>

#include "engine/engine.h"
#include "engine/engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::G1Fleet;
using testing::Harness;
using testing::kSec;

// A job of one task with `cpu` cores and `devices` whole G1 (0: CPU-only).
Job OneTask(const Spec& spec, const std::string& name, int32_t cpu, int32_t devices) {
  Job job = testing::MakeJob(spec, name, 1, 100 * kSec);
  TaskRequest& r = job.task_groups[0].request;
  r.cpu = cpu * 1000;
  if (devices == 0) {
    r.devices = {};
  } else {
    r.devices.count = devices;
  }
  return job;
}

// The cluster node a job's run landed on.
std::string NodeOf(const Harness& h, JobId id) {
  const JobRecord& j = h.engine->job(id);
  if (j.placements.empty()) return "";
  const CellState& cell = h.engine->cell();
  return h.spec.node(cell.spec_node(j.placements.front().node)).name;
}

// The `where` of the job's start in the decision log.
std::string WhereOf(const Harness& h, JobId id) {
  for (const Decision& d : h.store.decisions())
    if (d.job == id && d.kind == DecisionKind::kStart) return d.where;
  return "";
}

TEST(DeviceNodes, CpuOnlyWorkFillsTheCpuNodeFirstAndKeepsTheDevicesFed) {
  // c-g-0000: 8 G1, 64 cores (8 per device); c-cpu-0000: 32 cores, no devices. Best-fit alone
  // would put a 16-core task on either; CPU-only work goes to the CPU node first.
  Harness h("fifo", /*backfill=*/true,
            G1Fleet("      - {name: g, count: 1, cpu: 64, memory: 512Gi, devices: {model: G1, "
                    "count: 8}}\n"
                    "      - {name: cpu, count: 1, cpu: 32, memory: 256Gi}\n",
                    "tenants:\n  - name: t\n"));
  JobId a = h.Submit(OneTask(h.spec, "a", 16, 0), 0);
  JobId b = h.Submit(OneTask(h.spec, "b", 16, 0), 0);
  h.RunUntil(0);
  EXPECT_EQ(NodeOf(h, a), "c-cpu-0000");
  EXPECT_EQ(NodeOf(h, b), "c-cpu-0000");
  EXPECT_EQ(WhereOf(h, a), "");
  // The CPU node is full: the next one uses the device node, leaving its devices their share.
  JobId c = h.Submit(OneTask(h.spec, "c", 16, 0), 1 * kSec);
  h.RunUntil(1 * kSec);
  EXPECT_EQ(NodeOf(h, c), "c-g-0000");
  EXPECT_EQ(WhereOf(h, c), "c; on device nodes: no CPU-only node had room");
  // 44 more cores would leave the 8 free devices 4: nothing else fits, so it takes them, and
  // says so.
  JobId d = h.Submit(OneTask(h.spec, "d", 44, 0), 2 * kSec);
  h.RunUntil(2 * kSec);
  EXPECT_EQ(NodeOf(h, d), "c-g-0000");
  EXPECT_EQ(WhereOf(h, d), "c; took CPU or memory kept for free devices: nothing else fits");
}

TEST(DeviceNodes, ADeviceTaskLeavesTheDevicesItDoesNotTakeTheirShare) {
  // Two nodes of 8 G1: c-a-0000 with 64 cores (8 per device), c-b-0000 with 128 (16 per
  // device). A one-device task of 60 cores: best-fit prefers the smaller node, but there it
  // would leave 7 devices 4 cores; on c-b it leaves them 68.
  Harness h("fifo", /*backfill=*/true,
            G1Fleet("      - {name: a, count: 1, cpu: 64, memory: 512Gi, devices: {model: G1, "
                    "count: 8}}\n"
                    "      - {name: b, count: 1, cpu: 128, memory: 512Gi, devices: {model: G1, "
                    "count: 8}}\n",
                    "tenants:\n  - name: t\n"));
  JobId x = h.Submit(OneTask(h.spec, "x", 60, 1), 0);
  h.RunUntil(0);
  EXPECT_EQ(NodeOf(h, x), "c-b-0000");
  EXPECT_EQ(WhereOf(h, x), "");
  // A task of all eight devices may take all of c-a's cores: no device stays free.
  JobId whole = h.Submit(OneTask(h.spec, "whole", 64, 8), 1 * kSec);
  h.RunUntil(1 * kSec);
  EXPECT_EQ(NodeOf(h, whole), "c-a-0000");
  EXPECT_EQ(WhereOf(h, whole), "");
  // Another task like x fits only on c-b, leaving its 6 free devices 8 cores (16 each is their
  // share): nothing else fits, so it goes there, and says so.
  JobId y = h.Submit(OneTask(h.spec, "y", 60, 1), 2 * kSec);
  h.RunUntil(2 * kSec);
  EXPECT_EQ(NodeOf(h, y), "c-b-0000");
  EXPECT_EQ(WhereOf(h, y), "c; took CPU or memory kept for free devices: nothing else fits");
}

TEST(DeviceNodes, CpuOnlyWorkChoosesItsClusterByCpuPricesAndRoomOnCpuNodes) {
  // Two dedicated clusters of one region: gpus (8-G1 nodes, cores at 0.2 an hour) lists first;
  // farm (CPU nodes, cores at 0.1) is cheaper for CPU work and has the room for it.
  Harness h("fifo", /*backfill=*/true, R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
regions:
  - name: r
clusters:
  - name: gpus
    region: r
    tier: dedicated
    prices: {G1: 10, cpu: 0.2}
    nodeGroups:
      - {name: g, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 8}}
  - name: farm
    region: r
    tier: dedicated
    prices: {cpu: 0.1}
    nodeGroups:
      - {name: cpu, count: 2, cpu: 32, memory: 256Gi}
tenants:
  - name: t
)");
  JobId a = h.Submit(OneTask(h.spec, "a", 16, 0), 0);
  h.RunUntil(0);
  EXPECT_EQ(NodeOf(h, a).rfind("farm-cpu-", 0), 0u) << NodeOf(h, a);
  const std::string where = WhereOf(h, a);
  EXPECT_EQ(where.rfind("farm (dedicated, CPU only, score ", 0), 0u) << where;
  EXPECT_NE(where.find("cost -0.50"), std::string::npos) << where;
  EXPECT_NE(where.find("other candidates: gpus -1.00"), std::string::npos) << where;
}

}  // namespace
}  // namespace tessera
