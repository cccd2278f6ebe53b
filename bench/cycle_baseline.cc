// The scheduling cycle without the API: the daemon's engine (the enterprise example, the
// default scorer, FIFO with backfill) fed the job stream of bench/serve — RATE one-CPU batch
// jobs of 1 s per second, each submitted when it arrives, between cycles as in the daemon —
// by a manual clock, on one thread, CYCLES_PER_SECOND cycles a second (the daemon's own frequency
// under that load, so that both cycles take the same work: the jobs that arrived since the last
// cycle, and the finishes due). Prints the mean wall time of a cycle, to compare with
// tessera_scheduling_cycle_seconds under bench/serve's load (the API's share of the cycle).
//
// As in the daemon, the cycles are paced in real time (the thread sleeps between them, and a
// cycle starts with what the sleep left of the caches) and the binary allocates with the
// daemon's allocator and options (src/cli/allocator.cc). With --hot the cycles run back to
// back instead (caches warm: the engine's best case, which no daemon sees; SECONDS is then
// simulated time, not waited).
//
//   cycle_baseline [RATE=2800] [CYCLES_PER_SECOND=450] [SECONDS=30] [--hot]
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "config/loader.h"
#include "engine/engine.h"
#include "sched/fragmentation.h"

namespace {

struct Finishes final : tessera::Backend, tessera::EventSink {
  tessera::Engine* engine = nullptr;
  void Post(const tessera::Event& e) override { engine->Post(e); }
  void Launch(const tessera::JobRecord& j, tessera::TimeMs now) override {
    tessera::Event e;
    e.kind = tessera::EventKind::kFinish;
    e.job = j.id;
    e.generation = j.generation;
    e.time = std::max(now, j.last_start) + *j.job.runtime;
    Post(e);
  }
  void Stop(const tessera::JobRecord&, tessera::TimeMs) override {}
  void Resize(const tessera::JobRecord& j, tessera::TimeMs now) override { Launch(j, now); }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace tessera;
  double rate = argc > 1 ? std::stod(argv[1]) : 2800;
  double cycles_per_s = argc > 2 ? std::stod(argv[2]) : 450;
  double seconds = argc > 3 ? std::stod(argv[3]) : 30;
  const bool paced = !(argc > 4 && std::string(argv[4]) == "--hot");
  LoadResult loaded = LoadSpecFiles({TESSERA_EXAMPLES "/enterprise"});
  if (!loaded.spec) {
    std::fprintf(stderr, "%s", loaded.diagnostics.ToString().c_str());
    return 1;
  }
  const Spec& spec = *loaded.spec;
  ScorerRegistry scorers;
  RegisterBuiltinScorers(scorers);
  OrderingRegistry orderings;
  RegisterBuiltinOrderings(orderings);
  TargetWorkload target = DeclaredTarget(spec);  // as the daemon's engine
  auto scorer = scorers.Create(kDefaultScorer, ScorerContext{&target});
  auto ordering = orderings.Create("fifo");
  auto cell = CellState::FromSpec(spec);
  ManualClock clock(0);
  SeededRng rng(1);
  MemoryStore store;
  Finishes backend;
  Engine engine(spec, std::move(*cell), **scorer, **ordering, store, backend, clock, rng);
  backend.engine = &engine;
  JobLoad job =
      LoadJobText(spec, {"job", R"({"name":"j","class":"batch","tenant":"consumer/ads/ctr",
      "runtime":"1s","taskGroups":[{"name":"w","count":1,"cpu":1,"memory":"1Gi"}]})"});
  if (!job.job) return 1;
  // Time in microseconds: the daemon may run several cycles within one millisecond. The k-th
  // job arrives at k / RATE s (paced: submitted then, as an API worker would), the j-th cycle
  // runs at j / CYCLES_PER_SECOND s.
  const double cycle_step_us = 1e6 / cycles_per_s, arrival_step_us = 1e6 / rate;
  double next_cycle_us = 0, next_arrival_us = 0, wall = 0;
  int64_t cycles = 0;
  const auto start = std::chrono::steady_clock::now();
  while (next_cycle_us < seconds * 1e6) {
    const bool arrival = next_arrival_us < next_cycle_us;
    const double t_us = arrival ? next_arrival_us : next_cycle_us;
    if (paced) {
      std::this_thread::sleep_until(start + std::chrono::microseconds(static_cast<int64_t>(t_us)));
    }
    const TimeMs t = static_cast<TimeMs>(t_us / 1000);
    clock.Set(t);
    if (arrival) {
      engine.Submit(*job.job, t);
      next_arrival_us += arrival_step_us;
      continue;
    }
    next_cycle_us += cycle_step_us;
    uint64_t before = engine.counters().cycles;
    auto t0 = std::chrono::steady_clock::now();
    engine.RunDue();
    double w =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (engine.counters().cycles != before) {
      wall += w;
      ++cycles;
    }
  }
  // Per submitted job too: with the same cycles a second it compares as the mean does.
  const double jobs = rate * seconds;
  std::printf(
      "{\"rate\":%.0f,\"cycles\":%lld,\"mean_cycle_ms\":%.3f,\"cycle_us_per_job\":%.1f,"
      "\"running\":%zu}\n",
      rate, static_cast<long long>(cycles), cycles ? wall / static_cast<double>(cycles) : 0.0,
      jobs > 0 ? wall * 1000 / jobs : 0.0, engine.running_count());
  return 0;
}
