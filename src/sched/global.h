// The global layer (docs/global.md): for one job, which clusters to try and in what order,
// from the per-cluster summaries alone — O(clusters x models), never O(nodes).
//
// A cluster is passed over, with the reason, when
//   * a hard rule excludes it (constrain rules, dataset residency: the job's JobConstraints),
//   * its tier is not in the job's tier order,
//   * the caller blocks it now (an elastic cluster the job may not burst to yet, a budget),
//   * it has no schedulable node, or none of the job's device models,
//   * it could not hold the job even when empty, or
//   * by its summary it has no room now (free devices of the job's models, the largest free
//     share on one node, the most free CPU on one node).
// The others are candidates, one per (cluster, step of the job's model preference) with room,
// ordered by
//   1. tier, in the job's tier order (dedicated, shared, elastic by default);
//   2. the step of the model preference (the job's own list by speed, else the first
//      matching `fallback` rule's order, else the catalog's speed for the job's class);
//   3. score, highest first: the weights rule's speed x the step's speed x the communication
//      model's factor for the level the gang would span there (sched/communication.h: a
//      gang over several nodes runs faster on a better fabric), minus cost x the
//      cheapest price there over the fleet's highest price, minus locality x the time to bring
//      the job's datasets there over (that time + 1 h), plus balance x the cluster's free
//      share of those models;
//   4. cluster id.
// The caller places the job in the first candidate and, if that placement fails (the summary
// promised more than the nodes hold), in the next: the job is never lost to a stale summary.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "model/spec.h"
#include "sched/cluster_summary.h"
#include "sched/constraints.h"
#include "sched/fleet_view.h"

namespace tessera {

// What the global layer needs to know about a job, compiled once.
struct GlobalRequest {
  std::shared_ptr<const JobConstraints> constraints;  // never null (shared by equal jobs)
  // The model preference, best first: (speed, models). Empty for a CPU-only job.
  std::vector<std::pair<Milli, ModelMask>> model_steps;
  Milli devices = 0;  // device milli of the whole gang
  // The loosest level the gang may span (kCluster for kAny and looser): a cluster where no
  // node or leaf switch holds the gang, as it requires, is passed over.
  TopologyLevel require = TopologyLevel::kCluster;
  Milli largest_task = 0;  // device milli of its largest task (one node)
  Milli largest_task_cpu = 0;
  WorkloadClass job_class = WorkloadClass::kBatch;  // for the communication model
  int32_t tasks = 0;
  std::vector<Millis> transfer;  // by cluster: time to bring the job's datasets there
  double w_speed = 1, w_cost = 1, w_locality = 1, w_balance = 1, w_spread = 1;
  // The share of the job's own pending demand in each (cluster, model) queue pressure it
  // counts in (set by the engine; left out of what the decision log says others want).
  Milli pressure_share = 0;
};

// `weights`: the job's weights rule (the first that matches), null when none does.
GlobalRequest MakeGlobalRequest(const Spec& spec, const RegionPaths& paths, const Job& job,
                                std::shared_ptr<const JobConstraints> constraints,
                                ModelMask accepted, bool cpu_only, const WeightsRule* weights);

struct ClusterScore {
  uint32_t cluster = 0;
  ModelMask models = 0;  // the step's models present there (0 for a CPU-only job)
  size_t tier_rank = 0;
  size_t step = 0;
  double score = 0;
  double speed = 0, cost = 0, locality = 0, balance = 0;  // the weighted parts
  double spread = 0;  // a service replica's: minus the share of its siblings already there
};

// Why a cluster is not a candidate (formatted only when someone reads it).
enum class PassCode : uint8_t {
  kRule,         // a hard rule: the request's constraints name it
  kTier,         // its tier is not in the job's tier order
  kBlocked,      // the caller blocks it now
  kUnavailable,  // no schedulable node
  kCpu,          // no node with the largest task's CPU free (need)
  kNoModel,      // none of the job's device models
  kOtherModels,  // it has only models of the job (models) not among those tried now (`only`)
  kTooSmall,     // fewer devices of the models (have) than the job needs (need), even empty
  kBusy,         // fewer free (have) than needed (need)
  kFragmented,   // no node with the largest task's devices free (need)
  kNoNode,       // the gang must fit on one node: none has its devices free (need)
  kNoLeaf,       // the gang must fit under one leaf switch: none has its devices free (need)
};

struct Passed {
  uint32_t cluster = 0;
  PassCode code = PassCode::kRule;
  ModelMask models = 0;
  Milli have = 0, need = 0;
  Milli queued = 0;  // kBusy: the queue pressure on those models there
};

struct GlobalChoice {
  std::vector<ClusterScore> candidates;  // in the order to try
  std::vector<Passed> passed;            // clusters that are not, and why
  bool spread = false;                   // the scores have a spread part
  ModelMask only = 0;                    // the models this choice was made for
  std::string_view why_only;             // why those first (the caller's; "" = not said)
  size_t steps = 0;                      // the job's model preference steps (0: CPU only)
};

// `only` restricts the job's models (the caller's model choice); `blocked`, by cluster, marks
// the clusters the caller rules out at this moment (may be empty); `siblings`, by cluster, counts
// the running replicas of the job's service (empty for a job of no service, or none running).
// "H800/A100": the names of the models in `mask` ("devices" for none).
std::string ModelNames(const Spec& spec, ModelMask mask);

GlobalChoice ChooseClusters(const Spec& spec, const ClusterSummaries& summaries,
                            const GlobalRequest& request, ModelMask only,
                            const std::vector<bool>& blocked,
                            const std::vector<int32_t>& siblings = {});

// "west-ded: RegionNotAllowed (rule u-not-west), cloud: Busy (...)": every cluster passed
// over and why; `blocked_why` explains the caller's blocks.
std::string DescribePassed(const Spec& spec, const GlobalRequest& request,
                           const GlobalChoice& choice, const std::string& blocked_why);

// Whether a cluster was passed over for the caller's blocks (whose explanation, `blocked_why`
// of the two above, need only be made then).
bool AnyBlocked(const GlobalChoice& choice);

// One line for the decision log: the chosen cluster's score parts, the other candidates'
// scores and why each cluster passed over was.
std::string DescribeChoice(const Spec& spec, const GlobalRequest& request,
                           const GlobalChoice& choice, uint32_t chosen,
                           const std::string& blocked_why);

}  // namespace tessera
