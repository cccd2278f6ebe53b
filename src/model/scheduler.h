// The scheduler a configuration asks for (its `scheduler` section): the queue's policy and the
// placement scorer, by the names `tessera serve`, `tessera sim run` and `tessera place` take.
// The daemon and the simulator build the same engine from them (engine/core.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/quantity.h"

namespace tessera {

// A policy of the queue: the ordering that ranks the waiting jobs (engine/ordering.h) and
// whether jobs may pass a blocked one (EASY backfill).
struct SchedulingPolicy {
  std::string_view name;
  std::string_view ordering;
  bool backfill = true;
};

// fifo (strict arrival order), backfill (fifo with EASY backfill), las (preemptive
// least-attained-service, with backfill), hetero (heterogeneity-aware: las that waits for a
// job's faster models and moves running jobs to them).
const std::vector<SchedulingPolicy>& SchedulingPolicies();
const SchedulingPolicy* FindSchedulingPolicy(std::string_view name);
std::vector<std::string_view> SchedulingPolicyNames();

// The placement scorers Tessera ships (sched/policy/builtin.cc registers exactly these).
const std::vector<std::string_view>& BuiltinScorerNames();

// What a configuration that says nothing gets, and why (docs/policies.md#the-scheduler):
// backfill keeps the measured gains of EASY backfill over strict order (1.3-174x mean JCT)
// without the preemption churn of las on mixed workloads; tessera is the scorer that weighs
// fragmentation, locality, cost and speed.
inline constexpr std::string_view kDefaultPolicy = "backfill";
inline constexpr std::string_view kDefaultScorer = "tessera";

// A restart's cost where the configuration names none: a minute of the run's devices.
inline constexpr Millis kDefaultRestartCost = 60 * 1000;
// How long a job owed its tenant's guarantee queues before it reclaims borrowed capacity, where
// the configuration names nothing: 5 minutes.
inline constexpr Millis kDefaultReclaimAfter = 5 * 60 * 1000;

// The `scheduler` section; an empty name means the default.
struct SchedulerSettings {
  std::string ordering;   // a SchedulingPolicy's name
  std::string placement;  // a scorer's name
  // What a run's restart costs before it makes progress again (loading its checkpoint,
  // warming up), as the preemption cost model counts it (sched/preemption_cost.h).
  Millis restart_cost = kDefaultRestartCost;
  // How long a job within its tenant's guarantee queues before it preempts borrowers to take its
  // guarantee back (docs/queueing.md#quotas-guarantees-limits-borrowing-and-reclaim).
  Millis reclaim_after = kDefaultReclaimAfter;

  std::string_view policy_or_default() const {
    return ordering.empty() ? kDefaultPolicy : std::string_view(ordering);
  }
  std::string_view placement_or_default() const {
    return placement.empty() ? kDefaultScorer : std::string_view(placement);
  }
  // These, with what `over` names in their place (a command line's flags).
  SchedulerSettings OverriddenBy(const SchedulerSettings& over) const {
    return {over.ordering.empty() ? ordering : over.ordering,
            over.placement.empty() ? placement : over.placement, restart_cost, reclaim_after};
  }
};

}  // namespace tessera
