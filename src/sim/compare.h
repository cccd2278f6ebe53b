// Two runs of the same workload compared job by job (`tessera sim compare`,
// docs/simulation.md#comparing-two-runs).
//
// A run's metrics summarise the jobs it completed. Two runs that leave different jobs unstarted
// (the isolated baseline strands the jobs whose data may not leave a region its team's cluster
// is not in) then summarise different jobs, and the one that ran fewer of the hard ones looks
// better than it is. The comparison reads both decision logs and takes each job's queueing
// delay — its first start less its submission — over the jobs both runs started, per workload
// class and in all; and counts the jobs only one of them started.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera {

// A named decision log: its text and the name errors use (a path).
struct DecisionLogText {
  std::string name;
  std::string_view text;
};

// {jobs: {base_started, other_started, both, only_base, only_other},
//  queue_s: {all: {base: SUMMARY, other: SUMMARY}, per_class: {CLASS: {base, other}}}}
// with SUMMARY {count, mean, p50, p95, p99} (seconds). Service replicas (class inference) are
// left out, as from a run's job metrics: each run scales its own. An error names the log and
// the line: a line that is not a JSON object, a start without `job`, `class`, `t_s` or
// `submitted_s` (logs written before the decision log carried `submitted_s` have none).
Result<nlohmann::ordered_json> CompareDecisionLogs(const DecisionLogText& base,
                                                   const DecisionLogText& other);

}  // namespace tessera
