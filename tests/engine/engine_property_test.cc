// Property tests over random workloads: whatever arrives, fails or is cancelled, the engine
// never over-commits a device, CPU or memory at any instant, its own counters agree with the
// cell, nothing runs on a lost node, every job ends terminal or pending with a reason, and
// the cell is empty once the last job has ended.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "engine/engine.h"
#include "engine/engine_testutil.h"
#include "sched/policy/builtin.h"

namespace tessera {
namespace {

using testing::MakeJob;

// Completes every run after its declared runtime (a restart runs it again in full).
class TimedBackend final : public Backend {
 public:
  EventSink* sink = nullptr;
  void Launch(const JobRecord& job, TimeMs now) override {
    Event e;
    e.time = now + *job.job.runtime;
    e.kind = EventKind::kFinish;
    e.job = job.id;
    e.generation = job.generation;
    sink->Post(e);
  }
  void Stop(const JobRecord&, TimeMs) override {}
};

const char* const kFleet = R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
  - {name: G2, kind: gpu, vendor: nvidia, memory: 40Gi, speed: {training: 0.5}}
regions:
  - name: r
clusters:
  - name: c
    region: r
    tier: dedicated
    nodeGroups:
      - {name: a, count: 4, cpu: 32, memory: 256Gi, devices: {model: G1, count: 4},
         topology: {nodesPerLeaf: 2}}
      - {name: b, count: 2, cpu: 32, memory: 256Gi, devices: {model: G2, count: 8},
         topology: {nodesPerLeaf: 2}}
      - {name: cpu, count: 1, cpu: 64, memory: 256Gi}
tenants:
  - name: t
)";

struct Check {
  const Engine& engine;
  int64_t observations = 0;

  void Invariants() {
    ++observations;
    const CellState& cell = engine.cell();
    std::map<std::pair<uint32_t, uint16_t>, Milli> device_use;
    std::vector<Milli> cpu(cell.node_count(), 0);
    std::vector<MiB> mem(cell.node_count(), 0);
    Milli allocated = 0;
    for (size_t i = 0; i < engine.job_count(); ++i) {
      const JobRecord& j = engine.job(JobId(static_cast<uint32_t>(i)));
      if (!j.running()) {
        ASSERT_TRUE(j.placements.empty()) << j.job.name << " holds resources while not running";
        continue;
      }
      ASSERT_EQ(static_cast<int32_t>(j.placements.size()), j.task_count) << j.job.name;
      allocated += j.device_milli;
      for (const Placement& p : j.placements) {
        ASSERT_TRUE(engine.node_up(p.node)) << j.job.name << " runs on a lost node";
        cpu[p.node] += p.cpu;
        mem[p.node] += p.memory;
        for (const DeviceUse& u : p.devices)
          device_use[{p.node, u.index}] += u.milli;
      }
    }
    ASSERT_EQ(allocated, engine.allocated_milli());
    for (uint32_t n = 0; n < cell.node_count(); ++n) {
      const NodeState& s = cell.node(n);
      ASSERT_LE(cpu[n], s.cpu_total) << "CPU over-committed on " << cell.node_name(n);
      ASSERT_LE(mem[n], s.mem_total) << "memory over-committed on " << cell.node_name(n);
      ASSERT_EQ(s.cpu_free, s.cpu_total - cpu[n]) << cell.node_name(n);
      ASSERT_EQ(s.mem_free, s.mem_total - mem[n]) << cell.node_name(n);
      auto devices = cell.devices(n);
      for (uint16_t d = 0; d < devices.size(); ++d) {
        Milli used = device_use[{n, d}];
        ASSERT_LE(used, 1000) << "device over-committed on " << cell.node_name(n);
        ASSERT_EQ(devices[d].free, 1000 - used) << cell.node_name(n) << " device " << d;
      }
    }
  }
};

Job RandomJob(const Spec& spec, Rng& rng, int i) {
  int kind = static_cast<int>(rng.Uniform(10));
  int32_t tasks = kind < 5   ? 1 + static_cast<int32_t>(rng.Uniform(4))
                  : kind < 8 ? 1 + static_cast<int32_t>(rng.Uniform(16))
                             : 1;
  Job job = MakeJob(spec, "j" + std::to_string(i), tasks,
                    (1 + static_cast<Millis>(rng.Uniform(600))) * 1000);
  DeviceRequest& dev = job.task_groups[0].request.devices;
  dev.models.push_back({*spec.FindModel("G2"), 500});
  if (kind == 8) dev.milli_each = 250 * (1 + static_cast<Milli>(rng.Uniform(3)));  // a share
  if (kind == 9) dev = DeviceRequest{};                                            // CPU only
  if (rng.Uniform(20) == 0) job.task_groups[0].count = 40;  // larger than the fleet
  static const char* kPriorities[] = {"low", "normal", "high"};
  job.priority = kPriorities[rng.Uniform(3)];
  job.preemptible = rng.Uniform(2) == 0;
  job.checkpoint_interval = rng.Uniform(2) ? 60 * 1000 : 0;
  if (rng.Uniform(3) == 0) job.gang.require = TopologyLevel::kLeaf;
  return job;
}

void RunRandom(const std::string& ordering, bool backfill, uint64_t seed) {
  SCOPED_TRACE(ordering + (backfill ? "+backfill" : "") + " seed " + std::to_string(seed));
  Spec spec = testing::LoadFleet(kFleet);
  auto scorer = policy::MakeBestFit();
  OrderingRegistry registry;
  RegisterBuiltinOrderings(registry);
  auto order = registry.Create(ordering).value();
  ManualClock clock(0);
  SeededRng rng(seed), engine_rng(seed);
  MemoryStore store;
  TimedBackend backend;
  EngineOptions options;
  options.backfill = backfill;
  Engine engine(spec, *CellState::FromSpec(spec), *scorer, *order, store, backend, clock,
                engine_rng, options);
  backend.sink = &engine;
  const uint32_t nodes = static_cast<uint32_t>(engine.cell().node_count());

  std::vector<JobId> ids;
  for (int i = 0; i < 80; ++i) {
    TimeMs at = static_cast<TimeMs>(rng.Uniform(1800)) * 1000;
    ids.push_back(engine.Submit(RandomJob(spec, rng, i), at));
    if (rng.Uniform(10) == 0)
      engine.Cancel(ids.back(), at + static_cast<TimeMs>(rng.Uniform(900)) * 1000);
  }
  for (int k = 0; k < 4; ++k) {
    uint32_t node = static_cast<uint32_t>(rng.Uniform(nodes));
    TimeMs at = static_cast<TimeMs>(rng.Uniform(1800)) * 1000;
    engine.NodeLost(node, at);
    engine.NodeRecovered(node, at + static_cast<TimeMs>(1 + rng.Uniform(600)) * 1000);
  }

  Check check{engine};
  int steps = 0;
  while (auto next = engine.NextEventTime()) {
    ASSERT_LT(++steps, 100000) << "the run does not end";
    clock.Set(std::max(clock.Now(), *next));
    engine.RunDue();
    check.Invariants();
    if (::testing::Test::HasFatalFailure()) return;
  }

  size_t infeasible = 0;
  for (JobId id : ids) {
    const JobRecord& j = engine.job(id);
    if (IsTerminal(j.state)) continue;
    // Still pending: only a job no node could ever host, and it says so.
    ASSERT_EQ(j.state, JobState::kPending) << j.job.name;
    ASSERT_EQ(j.reason, PendingReason::kInfeasible) << j.job.name << ": " << j.detail;
    ASSERT_FALSE(j.detail.empty());
    ++infeasible;
  }
  EXPECT_EQ(engine.running_count(), 0u);
  EXPECT_EQ(engine.allocated_milli(), 0);
  EXPECT_EQ(engine.active_count(), infeasible);
  for (uint32_t n = 0; n < nodes; ++n) {
    const NodeState& s = engine.cell().node(n);
    EXPECT_EQ(s.cpu_free, s.cpu_total) << "the cell is not empty after the last job";
    for (const DeviceSlot& d : engine.cell().devices(n))
      EXPECT_EQ(d.free, 1000);
  }
  EXPECT_GT(check.observations, 80);
}

TEST(EngineProperty, RandomWorkloadsNeverOverCommitAndEndClean) {
  for (const char* ordering : {"fifo", "las", "hetero"}) {
    for (bool backfill : {false, true}) {
      for (uint64_t seed = 1; seed <= 12; ++seed) {
        RunRandom(ordering, backfill, seed);
        if (HasFatalFailure()) return;
      }
    }
  }
}

}  // namespace
}  // namespace tessera
