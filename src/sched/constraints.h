// The hard placement rules of one job, compiled from the configuration: per cluster, whether
// the job may run there (ScopeTable verdicts) and which rule excluded it, and the order in
// which allowed clusters and device models are tried.
//
// Hard constraints (docs/placement.md#policy-rules, docs/global.md):
//   * `constrain` rules — all that match apply: allowRegions / denyRegions exclude by
//     region (RegionNotAllowed), allowClusters / denyClusters by cluster
//     (ClusterNotAllowed), `tiers` leaves the unlisted tiers out (TierNotAllowed);
//   * dataset residency — a dataset the job reads pins it to the regions its residency
//     lists (DataResidency);
//   * elastic clusters — open only through the job's first matching `burst` rule: without
//     one every elastic cluster is out (TierNotAllowed), with one those it does not name
//     (ClusterNotAllowed); when the job has waited long enough is the engine's call;
//   * allowed device models — the job's own model list, already part of its TaskShape.
// `crossRegion: false` needs nothing here for a job (a gang never spans clusters); the engine
// keeps a service's replicas in the region of their siblings (Engine::ReplicaRegion).
//
// Preference order: tiers in the rules' order (dedicated, shared, elastic when none is
// given), and within a tier the device models by the job's speed on them — its own model
// list, else the first matching `fallback` rule's order (models it does not list last), else
// the catalog's speed of each model for the job's class.
#pragma once

#include <string>
#include <vector>

#include "model/spec.h"
#include "sched/scope.h"
#include "sched/task_shape.h"

namespace tessera {

struct JobConstraints {
  ScopeTable::Verdicts verdicts;         // by ClusterId value
  std::vector<std::string> excluded_by;  // by cluster: the rule or dataset, "" when allowed
  std::vector<ClusterTier> tier_order;
  bool cross_region = true;

  bool allows(ClusterId c) const { return !verdicts[c.value()]; }
};

JobConstraints CompileConstraints(const Spec& spec, const Job& job);

// The job's speed on each device model of `accepted` it may use, best first, models of equal
// rank together: its own model lists (by speed), else the first matching `fallback` rule's
// order (models it does not list last), else the catalog's speed for the job's class.
std::vector<std::pair<Milli, ModelMask>> ModelPreference(const Spec& spec, const Job& job,
                                                         ModelMask accepted);

}  // namespace tessera
