// One trace-driven simulation: the real engine (src/engine) with a simulated clock and the sim
// backend, fed a workload's arrivals and the failure model's outages in time order, until
// every job has ended or nothing more can happen. Outputs metrics (docs/simulation.md), a time
// series and the decision log. Same spec, workload, policy and seed: byte-identical outputs.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/ordering.h"
#include "sched/scorer.h"
#include "sim/failures.h"
#include "sim/workload.h"

namespace tessera {

// A named scheduling policy of the simulator: an ordering plug-in plus whether EASY backfill
// may pass a blocked job.
//   fifo      arrival order, strict: nothing passes the first job that cannot start;
//   backfill  arrival order with EASY backfill around the head job's reservation;
//   las       Tiresias-style least attained service, preemptive, with backfill;
//   hetero    heterogeneity-aware LAS (each job on its fastest model with room), with backfill.
struct SimPolicy {
  std::string name;
  std::string ordering;
  bool backfill = true;
};
Result<SimPolicy> ParseSimPolicy(std::string_view name);
std::vector<std::string> SimPolicyNames();

struct SimOptions {
  std::string placement = "tessera";  // the placement scorer
  uint64_t seed = 1;
  Millis sample_interval = 0;  // time-series step; 0 = chosen from the arrival span
  FailureModel failures;
  // Called now and then with the share of jobs that have ended (0..1).
  std::function<void(double)> progress;
};

struct SimOutcome {
  nlohmann::ordered_json metrics;
  std::string timeseries_csv;
  std::string decisions_jsonl;
  size_t jobs = 0;
  size_t tasks = 0;
};

Result<SimOutcome> RunSimulation(const Spec& spec, const Workload& workload,
                                 const SimPolicy& policy, const SimOptions& options,
                                 const ScorerRegistry& scorers, const OrderingRegistry& orderings);

}  // namespace tessera
