// Single-task placement on a 10,000-node x 8-GPU cell with an openb-like task mix
// (DESIGN.md §5 target: >= 50,000 decisions/s with the default policy on one core).
//
// Steady state: the cell is filled to about half, then every iteration places one task from
// the mix, commits it, and releases the oldest live task, so the node states (and the
// equivalence classes) keep changing as they do in a running scheduler.
//
//   build/release/bench/placement_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true   (one command line)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <deque>

#include "common/rng.h"
#include "config/loader.h"
#include "sched/fragmentation.h"
#include "sched/gang.h"
#include "sched/placer.h"
#include "sched/scorer.h"

namespace tessera {
namespace {

Spec MakeFleet(int nodes) {
  std::string yaml =
      "deviceModels: [{name: G2, kind: gpu, memory: 32Gi}, {name: T4, kind: gpu, memory: 16Gi}]\n"
      "regions: [{name: r}]\nclusters:\n  - name: c\n    region: r\n    nodeGroups:\n"
      "      - {name: g2, count: " +
      std::to_string(nodes * 3 / 4) +
      ", cpu: 96, memory: 768Gi, devices: {model: G2, count: 8}, topology: {nodesPerLeaf: 32}}\n"
      "      - {name: t4, count: " +
      std::to_string(nodes - nodes * 3 / 4) +
      ", cpu: 64, memory: 512Gi, devices: {model: T4, count: 8}, topology: {nodesPerLeaf: 32}}\n";
  LoadResult r = LoadSpecTexts({{"bench.yaml", yaml}});
  if (!r.spec) std::abort();
  return *r.spec;
}

// The openb default trace's most common shapes (CPU milli, share, GPUs) with their weights.
struct MixItem {
  Milli cpu;
  Milli milli;
  int32_t count;
  double weight;
};
const MixItem kMix[] = {{3152, 810, 1, 0.13},   {11300, 1000, 1, 0.11}, {6000, 460, 1, 0.08},
                        {8000, 1000, 1, 0.08},  {4000, 500, 1, 0.08},   {12000, 1000, 1, 0.07},
                        {16000, 1000, 2, 0.06}, {2000, 0, 0, 0.10},     {32000, 1000, 4, 0.04},
                        {64000, 1000, 8, 0.02}, {6000, 250, 1, 0.08},   {8000, 1000, 1, 0.15}};

TaskShape Draw(Rng& rng, ShapeTable& table) {
  double u = rng.UniformDouble(), acc = 0;
  for (const MixItem& m : kMix) {
    acc += m.weight;
    if (u <= acc || &m == &kMix[std::size(kMix) - 1]) {
      TaskShape s;
      s.cpu = s.cpu_for_score = m.cpu;
      s.memory = 16 * 1024;
      s.count = m.count;
      s.milli = m.count ? m.milli : 0;
      table.Intern(s);
      return s;
    }
  }
  return {};
}

// `pinned`: a tenth of the device demand is pinned to T4, so tessera's pressure follows how
// full the T4 pool is (cell-wide state: the placer drops its cached scores when it changes).
TargetWorkload Workload(bool pinned = false) {
  std::vector<TypicalTask> t;
  for (const MixItem& m : kMix)
    t.push_back({m.cpu, m.milli, m.count, kAnyAccelerator, m.weight});
  if (!pinned) return TargetWorkload(std::move(t));
  return TargetWorkload(std::move(t), {{ModelMask{2}, 0.1}});
}

void BM_PlaceOne(benchmark::State& state, const char* policy, bool pinned) {
  static Spec spec = MakeFleet(10000);
  TargetWorkload workload = Workload(pinned);
  ScorerRegistry registry;
  RegisterBuiltinScorers(registry);
  ScorerContext ctx{&workload};
  auto scorer = registry.Create(policy, ctx);
  CellState cell = *CellState::FromSpec(spec);
  Placer placer(**scorer);
  ShapeTable shapes;
  SeededRng rng(1);
  std::deque<Placement> live;
  // Fill to about half of the GPUs.
  int64_t gpu_milli = 0;
  while (gpu_milli < 10000LL * 8 * 1000 / 2) {
    TaskShape s = Draw(rng, shapes);
    PlaceResult r = placer.Place(cell, s, &rng);
    if (r.outcome != PlaceOutcome::kPlaced) break;
    if (!cell.Commit(r.placement).ok()) std::abort();
    gpu_milli += s.total_milli();
    live.push_back(r.placement);
  }
  for (auto _ : state) {
    TaskShape s = Draw(rng, shapes);
    PlaceResult r = placer.Place(cell, s, &rng);
    benchmark::DoNotOptimize(r);
    if (r.outcome == PlaceOutcome::kPlaced) {
      if (!cell.Commit(r.placement).ok()) std::abort();
      live.push_back(r.placement);
    }
    Placement old = live.front();
    live.pop_front();
    old.node_version = cell.node(old.node).version;
    cell.Release(old);
  }
  state.counters["decisions/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["classes"] = static_cast<double>(cell.live_classes());
  state.counters["bytes/node"] =
      static_cast<double>(cell.MemoryBytes()) / static_cast<double>(cell.node_count());
}

// A 256-task gang (one whole GPU each) that must sit under one leaf switch (32 nodes x 8
// GPUs = 256 GPUs per leaf), on the same half-loaded fleet; each iteration places the gang and
// releases it. Target: p99 <= 5 ms.
void BM_Gang256Leaf(benchmark::State& state) {
  static Spec spec = MakeFleet(10000);
  TargetWorkload workload = Workload();
  ScorerRegistry registry;
  RegisterBuiltinScorers(registry);
  ScorerContext ctx{&workload};
  auto scorer = registry.Create("tessera", ctx);
  CellState cell = *CellState::FromSpec(spec);
  Placer placer(**scorer);
  ShapeTable shapes;
  SeededRng rng(2);
  int64_t gpu_milli = 0;
  while (gpu_milli < 10000LL * 8 * 1000 / 2) {
    TaskShape s = Draw(rng, shapes);
    PlaceResult r = placer.Place(cell, s, &rng);
    if (r.outcome != PlaceOutcome::kPlaced || !cell.Commit(r.placement).ok()) break;
    gpu_milli += s.total_milli();
  }
  TaskShape one;
  one.cpu = one.cpu_for_score = 2000;
  one.memory = 8 * 1024;
  one.count = 1;
  one.milli = 1000;
  shapes.Intern(one);
  GangRequest gang{{{one, 256}}, TopologyLevel::kLeaf, JobId(1), {}};
  std::vector<double> micros;
  int placed = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    GangResult r = PlaceGang(cell, placer, gang, &rng);
    micros.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    if (r.outcome == PlaceOutcome::kPlaced) {
      ++placed;
      for (Placement& p : r.placements) {
        p.node_version = cell.node(p.node).version;
        cell.Release(p);
      }
    }
  }
  std::sort(micros.begin(), micros.end());
  state.counters["p50_ms"] = micros[micros.size() / 2] / 1000;
  state.counters["p99_ms"] = micros[micros.size() * 99 / 100] / 1000;
  state.counters["placed"] = placed;
}
BENCHMARK(BM_Gang256Leaf)->Unit(benchmark::kMillisecond)->Iterations(200);

BENCHMARK_CAPTURE(BM_PlaceOne, tessera, "tessera", false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlaceOne, tessera_pinned, "tessera", true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlaceOne, fgd, "fgd", false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlaceOne, best_fit, "best-fit", false)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tessera

BENCHMARK_MAIN();
