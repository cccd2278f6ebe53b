// A small engine harness for tests: a fleet of 4 nodes x 4 G1 (two per leaf), a manual clock,
// the in-memory store and a scripted backend that records what it was asked to do.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "model/spec.h"
#include "testutil/g1_fleet.h"

namespace tessera::testing {

// Records launches and stops; completions are posted by the test (Harness::Finish).
// `told`, when set, sees each call (launch or not) with the record the engine handed over.
class ScriptedBackend final : public Backend {
 public:
  void Launch(const JobRecord& job, TimeMs) override {
    launches.push_back(job.id.value());
    if (told) told(job, true);
  }
  void Stop(const JobRecord& job, TimeMs) override {
    stops.push_back(job.id.value());
    if (told) told(job, false);
  }
  void Resize(const JobRecord& job, TimeMs) override {
    resizes.push_back({job.id.value(), job.placements.size()});
  }
  std::vector<uint32_t> launches;
  std::vector<uint32_t> stops;
  std::vector<std::pair<uint32_t, size_t>> resizes;  // (job, the tasks it has now)
  std::function<void(const JobRecord& job, bool launch)> told;
};

// Loads a fleet from YAML text; fails the test (and aborts) on a bad text.
Spec LoadFleet(const std::string& yaml);

// The harness's fleet: cluster "c", nodes n0..n3 with 4 G1 each, 2 nodes per leaf; tenant t.
extern const std::string kEngineFleet;

// A training job of `tasks` tasks with one G1 each, gang within the cluster, normal priority.
Job MakeJob(const Spec& spec, const std::string& name, int32_t tasks, Millis runtime);

struct Harness {
  Harness(const std::string& ordering, bool backfill, const std::string& fleet = kEngineFleet);
  JobId Submit(const Job& job, TimeMs at) { return engine->Submit(job, at); }
  // Handles every event up to `t` in time order, as the simulator's loop does.
  void RunUntil(TimeMs t);
  // Reports the current run of `job` finished at `t`.
  void Finish(JobId job, TimeMs t);
  // Reports run `generation` of `job` finished at `t` (an older run's late report).
  void FinishRun(JobId job, uint64_t generation, TimeMs t);
  Milli FreeMilli() const;

  Spec spec;
  ManualClock clock{0};
  SeededRng rng{1};
  MemoryStore store;
  ScriptedBackend backend;
  std::unique_ptr<Scorer> scorer;
  std::unique_ptr<OrderingPolicy> order;
  std::unique_ptr<Engine> engine;
};

}  // namespace tessera::testing
