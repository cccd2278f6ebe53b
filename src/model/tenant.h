// The tenant tree (org / department / project) with quotas per device model.
//
// Semantics (enforced by the scheduler's admission step, issue 4): a tenant may use up to its
// `guaranteed` devices of a model at any time; beyond that, up to `limit`, only by borrowing
// capacity that siblings lend (and only if `borrow` is set); lent capacity is reclaimed by
// preemption when its owner needs it. A child's limit never exceeds its parent's limit, and
// the children's guarantees never add up to more than the parent's guarantee.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/quantity.h"
#include "model/run_as.h"

namespace tessera {

struct Quota {
  DeviceModelId model;
  Milli guaranteed = 0;        // milli-devices
  std::optional<Milli> limit;  // unset: the parent's limit (or unlimited at the root)
  bool borrow = true;
  bool lend = true;
};

struct Tenant {
  std::string name;  // the last path component: "llm"
  std::string path;  // "acme/research/llm"
  std::optional<TenantId> parent;
  std::vector<TenantId> children;
  std::vector<Quota> quotas;            // at most one per model
  std::optional<Milli> budget_per_day;  // milli currency units; unset = unlimited
  std::map<std::string, std::string> labels;
  std::optional<RunAs> run_as;  // its tasks' host user; unset = its parent's

  const Quota* QuotaFor(DeviceModelId model) const;
};

// How long a run of any class goes unpreempted unless its class says otherwise: twice the
// simulator's default checkpoint interval, so that a run saves its work at least once before
// it may be stopped, and a job that restarts into a hole is not the next cheapest victim at
// once (docs/queueing.md#preemption-cost).
inline constexpr Millis kDefaultMinRunTime = 10 * 60 * 1000;

// A priority class: a name for an integer priority. Higher wins.
struct PriorityClass {
  std::string name;
  int32_t value = 0;
  bool preemptible = false;  // the default for jobs of this class
  // A run of a job of this class is not preempted (by priority, order, reclaim or a held
  // reservation) until it has run this long (Slurm's PreemptExemptTime); unset:
  // kDefaultMinRunTime.
  std::optional<Millis> min_run;
  Millis min_run_or_default() const { return min_run.value_or(kDefaultMinRunTime); }
};

}  // namespace tessera
