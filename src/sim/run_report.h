// What a finished simulation reports: metrics.json (jobs, completion and queueing by class and
// tenant, fairness, allocation, preemptions, cost, services, the engine's counters) and
// decisions.jsonl, read from the engine, its ledger and its decision log (docs/simulation.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "sim/services.h"
#include "sim/sim_run.h"

namespace tessera {

// The run as the report reads it.
struct RunFacts {
  const Spec& spec;
  const SimPolicy& policy;
  const SimOptions& options;
  const Engine& engine;
  const ServiceDriver& services;
  size_t jobs = 0, tasks = 0;
  TimeMs first_arrival = 0, last_arrival = 0;
  TimeMs last_end = 0;  // when the last job ended
  TimeMs now = 0;       // the end of the run: what an unfinished job waited until
  // Integrals over the arrival window: allocated and healthy device-ms, and by model.
  double area_alloc = 0, area_healthy = 0;
  const std::vector<double>& area_model;
  const std::vector<Milli>& capacity_model;
};

nlohmann::ordered_json RunMetrics(const RunFacts& f);
// One JSON line per decision, in order: time, kind, job, reason; a start with its job's
// tenant, class, priority, datasets, devices, topology level, nodes, cluster and where.
std::string DecisionsJsonl(const Spec& spec, const Engine& engine,
                           const std::vector<Decision>& decisions);

}  // namespace tessera
