// Property tests over random workloads: whatever arrives, fails or is cancelled, the engine
// never over-commits a device, CPU or memory at any instant, its own counters agree with the
// cell, nothing runs on a lost node, every job ends terminal or pending with a reason, and
// the cell is empty once the last job has ended.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>

#include "engine/drive.h"
#include "engine/engine.h"
#include "engine/engine_testutil.h"
#include "sched/policy/builtin.h"
#include "sched/preemption_cost.h"

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
  void Resize(const JobRecord& job, TimeMs now) override { Launch(job, now); }
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
      // Every task, or an elastic gang's minimum at least.
      const int32_t least = j.job.gang.min_members > 0 ? j.job.gang.min_members : j.task_count;
      ASSERT_LE(static_cast<int32_t>(j.placements.size()), j.task_count) << j.job.name;
      ASSERT_GE(static_cast<int32_t>(j.placements.size()), least) << j.job.name;
      for (size_t t = 0; t < j.placements.size(); ++t)
        ASSERT_EQ(j.placements[t].task.index, static_cast<int32_t>(t)) << j.job.name;
      ASSERT_EQ(j.run_milli, MilliOf(j.placements)) << j.job.name;
      allocated += j.run_milli;
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
  // Some gangs are elastic: they start with what fits, grow, and shrink for preemptors.
  const int32_t count = job.task_groups[0].count;
  if (count > 1 && rng.Uniform(3) == 0)
    job.gang.min_members = 1 + static_cast<int32_t>(rng.Uniform(static_cast<uint64_t>(count - 1)));
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
  DriveUntil(engine, clock, kNever, [&] {
    EXPECT_LT(++steps, 100000) << "the run does not end";
    check.Invariants();
    return steps < 100000 && !::testing::Test::HasFatalFailure();
  });
  if (::testing::Test::HasFatalFailure()) return;

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

namespace tessera {
namespace {

// 16 G1 shared by a random tenant tree: org guarantees all 16; two departments split them,
// and each splits its share between two projects; limits, borrowing and lending are random.
std::string RandomTenantFleet(Rng& rng) {
  std::string yaml = testing::G1Fleet(
      "      - {name: n, count: 4, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}\n",
      "tenants:\n  - name: org\n    quotas: {G1: {guaranteed: 16}}\n    children:\n");
  int d1 = 4 + static_cast<int>(rng.Uniform(9));  // 4..12
  for (int d = 0; d < 2; ++d) {
    int dept = d == 0 ? d1 : 16 - d1;
    int p1 = static_cast<int>(rng.Uniform(static_cast<uint64_t>(dept) + 1));
    yaml += "      - name: d" + std::to_string(d) +
            "\n        quotas: {G1: {guaranteed: " + std::to_string(dept) +
            "}}\n        children:\n";
    for (int p = 0; p < 2; ++p) {
      int g = p == 0 ? p1 : dept - p1;
      int limit = g + static_cast<int>(rng.Uniform(static_cast<uint64_t>(17 - g)));
      // One draw per statement: the order of draws within one expression is the compiler's.
      const bool borrow = rng.Uniform(4) != 0;
      const bool lend = rng.Uniform(4) != 0;
      yaml += "          - {name: p" + std::to_string(p) +
              ", quotas: {G1: {guaranteed: " + std::to_string(g) +
              ", limit: " + std::to_string(limit) + ", borrow: " + (borrow ? "true" : "false") +
              ", lend: " + (lend ? "true" : "false") + "}}}\n";
    }
  }
  return yaml;
}

// Property: under random tenant trees and one-device jobs, no tenant (nor any ancestor) ever
// holds more than its limit, the tracker's usage equals what runs, and no tenant below its
// guarantee has a job waiting for longer than the jobs' checkpoint interval — its guarantee is
// honoured in the cycle the job is considered (reclaim delay: one cycle; a job preempted in this
// cycle waits for the next), or once the borrowers' runs reach their next checkpoint when that
// loses less (docs/queueing.md#preemption-cost; minRunTime is 0 here), or — when its last
// search for victims found none, say before a borrower started — once its search's backoff is
// over (sched/preemption_cost.h SearchBackoff: at most kMaxSearchBackoff).
TEST(EngineProperty, QuotaLimitsHoldAndGuaranteesAreHonoured) {
  int contended = 0;  // observations of a tenant waiting at or above its guarantee
  for (const char* ordering : {"fifo", "las"}) {
    for (bool backfill : {false, true}) {
      for (uint64_t seed = 1; seed <= 10; ++seed) {
        SCOPED_TRACE(std::string(ordering) + (backfill ? "+backfill" : "") + " seed " +
                     std::to_string(seed));
        SeededRng rng(seed), engine_rng(seed);
        Spec spec = testing::LoadFleet(RandomTenantFleet(rng));
        constexpr Millis kCheckpoint = 60 * 1000;
        std::vector<std::optional<TimeMs>> below_since(spec.tenants.size());
        // Reclaims at once: no class's minRunTime bounds them (Governance tests the bound).
        for (PriorityClass& pc : spec.priority_classes)
          pc.min_run = 0;
        auto scorer = policy::MakeBestFit();
        OrderingRegistry registry;
        RegisterBuiltinOrderings(registry);
        auto order = registry.Create(ordering).value();
        ManualClock clock(0);
        MemoryStore store;
        TimedBackend backend;
        EngineOptions options;
        options.backfill = backfill;
        Engine engine(spec, *CellState::FromSpec(spec), *scorer, *order, store, backend, clock,
                      engine_rng, options);
        backend.sink = &engine;
        std::vector<TenantId> leaves;
        for (size_t t = 0; t < spec.tenants.size(); ++t)
          if (spec.tenants[t].children.empty())
            leaves.push_back(TenantId(static_cast<uint32_t>(t)));
        for (int i = 0; i < 120; ++i) {
          Job job = MakeJob(spec, "j" + std::to_string(i), 1,
                            (1 + static_cast<Millis>(rng.Uniform(900))) * 1000);
          job.tenant = leaves[rng.Uniform(leaves.size())];
          job.preemptible = true;
          job.checkpoint_interval = rng.Uniform(2) ? kCheckpoint : 0;
          engine.Submit(job, static_cast<TimeMs>(rng.Uniform(3600)) * 1000);
        }
        const QuotaTracker& q = engine.quotas();
        int steps = 0;
        auto check = [&] {
          std::vector<Milli> used(spec.tenants.size(), 0);
          std::vector<bool> waiting(spec.tenants.size(), false);
          for (size_t i = 0; i < engine.job_count(); ++i) {
            const JobRecord& j = engine.job(JobId(static_cast<uint32_t>(i)));
            if (j.running()) {
              for (std::optional<TenantId> t = j.job.tenant; t; t = spec.tenant(*t).parent)
                used[t->value()] += j.device_milli;
            } else if (j.state == JobState::kPending && j.reason != PendingReason::kNew &&
                       j.reason != PendingReason::kPreempted) {
              waiting[j.job.tenant.value()] = true;
            }
          }
          for (size_t t = 0; t < spec.tenants.size(); ++t) {
            TenantId id(static_cast<uint32_t>(t));
            const std::string& path = spec.tenants[t].path;
            ASSERT_EQ(q.usage(id, 0), used[t]) << path;
            // Headroom is exactly the most Check admits.
            std::vector<Milli> per(q.model_count(), 0);
            const Milli room = q.Headroom(id, 0);
            if (room > 0 && room < QuotaTracker::kUnlimitedRoom) {
              per[0] = room;
              ASSERT_TRUE(q.Check(id, per).ok) << path << " headroom " << room;
            }
            if (room < QuotaTracker::kUnlimitedRoom) {
              per[0] = room + 1;
              ASSERT_FALSE(q.Check(id, per).ok) << path << " headroom " << room;
            }
            const Quota* quota = spec.tenants[t].QuotaFor(DeviceModelId(0));
            if (quota && quota->limit) {
              ASSERT_LE(used[t], *quota->limit) << path << " above its limit";
            }
            const bool below = waiting[t] && used[t] + 1000 <= q.guaranteed(id, 0);
            if (!below) below_since[t].reset();
            if (below && !below_since[t]) below_since[t] = clock.Now();
            if (below && clock.Now() - *below_since[t] > kCheckpoint + kMaxSearchBackoff) {
              std::string state;
              for (size_t u = 0; u < spec.tenants.size(); ++u)
                state += " " + spec.tenants[u].path + "=" + std::to_string(used[u] / 1000) + "/" +
                         std::to_string(q.guaranteed(TenantId(static_cast<uint32_t>(u)), 0) / 1000);
              for (size_t i = 0; i < engine.job_count(); ++i) {
                const JobRecord& j = engine.job(JobId(static_cast<uint32_t>(i)));
                if (j.state == JobState::kPending && j.job.tenant == id &&
                    j.reason != PendingReason::kNew)
                  state += "; " + j.job.name + " " + std::string(PendingReasonCode(j.reason)) +
                           " " + j.detail;
              }
              FAIL() << path << " waits below its guarantee (" << used[t] << " of "
                     << q.guaranteed(id, 0) << ") at " << clock.Now() << ":" << state;
            }
            if (waiting[t] && used[t] >= q.guaranteed(id, 0) && q.guaranteed(id, 0) > 0)
              ++contended;
          }
        };
        DriveUntil(engine, clock, kNever, [&] {
          EXPECT_LT(++steps, 100000) << "the run does not end";
          check();
          return steps < 100000 && !::testing::Test::HasFatalFailure();
        });
        if (::testing::Test::HasFatalFailure()) return;
        // Every job ends, but one its tenant's quotas can never admit: larger than its limit
        // (which the job says), or beyond a guarantee it may not borrow past, or in a pool
        // that siblings which do not lend hold whole. Nothing runs any more, so what the
        // tracker refuses now it refuses for ever.
        ASSERT_EQ(engine.running_count(), 0u);
        for (size_t i = 0; i < engine.job_count(); ++i) {
          const JobRecord& j = engine.job(JobId(static_cast<uint32_t>(i)));
          if (IsTerminal(j.state)) continue;
          std::vector<Milli> one(q.model_count(), 0);
          one[0] = j.device_milli;
          EXPECT_FALSE(q.Check(j.job.tenant, one).ok) << j.job.name << ": " << j.detail;
          if (q.Limit(j.job.tenant, 0) == 0) {
            EXPECT_EQ(j.reason, PendingReason::kInfeasible) << j.job.name << ": " << j.detail;
            EXPECT_NE(j.detail.find("exceed its tenant's limit"), std::string::npos) << j.detail;
          }
        }
      }
    }
  }
  EXPECT_GT(contended, 100) << "tenants rarely waited at their guarantee: the runs test little";
}

}  // namespace
}  // namespace tessera
