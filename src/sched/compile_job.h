// A submitted job compiled once into what every cycle reads: its gang request (task shapes
// and placement scope interned), the device models it accepts in the order of its speed on
// them, the signature that makes equal jobs equal within a cycle, its request to the global
// layer and the policy rules that apply to it. A pure function of the job, the spec and the
// engine's tables it interns into: no I/O, no clock.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model/job.h"
#include "model/spec.h"
#include "sched/cluster_summary.h"
#include "sched/constraints.h"
#include "sched/fleet_view.h"
#include "sched/gang.h"
#include "sched/global.h"
#include "sched/scope.h"
#include "sched/task_shape.h"

namespace tessera {

struct CompiledJob {
  // The tasks a run starts with: every task, or an elastic gang's first gang.minMembers (its
  // other tasks join the run as room appears: `growth`).
  GangRequest gang;
  // An elastic gang's tasks beyond `gang`, in task order, with the same shapes (empty for an
  // all-or-nothing gang).
  std::vector<GangGroup> growth;
  GangRequest whole_gang;  // an elastic gang's every task (empty for an all-or-nothing gang)
  ModelMask mask = 0;      // the models any of its tasks accepts
  std::vector<uint16_t> by_speed;   // acceptable models present in the cell, fastest first
  std::vector<Milli> speed_of;      // by model: the gang's speed there (its slowest task's)
  std::vector<uint32_t> signature;  // equal signatures: equal placement chances and rights
  int32_t task_count = 0;
  Milli device_milli = 0;   // device share of one run, all tasks together
  int32_t start_tasks = 0;  // the tasks of `gang`: what a run needs to start
  Milli start_milli = 0;    // their device share
  bool elastic() const { return start_tasks < task_count; }
  // On a fleet of several clusters: what the global layer needs, and the job's burst rule.
  std::optional<GlobalRequest> global;
  // An elastic gang's request for all its tasks: clusters that hold the whole job are
  // preferred to those that hold only its start (`global`).
  std::optional<GlobalRequest> whole_global;
  const PolicyRule* burst = nullptr;
  const PolicyRule* idle = nullptr;  // its idle-reclaim rule, the first that matches
  uint64_t holds = 0;                // the reservation holds it owns
  // The (cluster, model) pairs its pending demand presses on, and each pair's share of it.
  std::vector<std::pair<uint32_t, uint16_t>> pressure_on;
  Milli pressure_share = 0;
  // A service replica's group in the replica spread, unless its weights rule sets spread to 0.
  std::optional<uint32_t> spread_group;
  // The scorer its weights rule names (the first that matches); "" = the scheduler's.
  std::string placement;
  // Set when the job exceeds its tenant's limit on every model it accepts (limits are
  // static): why it can never be admitted.
  std::string over_limit;
};

// Equal constraints, one copy shared by the jobs that have them (most jobs of a tenant and
// class): a restart compiles every active job at once, and each copy was fresh memory.
class ConstraintsTable {
 public:
  std::shared_ptr<const JobConstraints> Intern(JobConstraints constraints);

 private:
  struct Same {
    bool operator()(const std::shared_ptr<const JobConstraints>& a,
                    const std::shared_ptr<const JobConstraints>& b) const {
      return std::tie(a->verdicts, a->excluded_by, a->tier_order, a->cross_region) <
             std::tie(b->verdicts, b->excluded_by, b->tier_order, b->cross_region);
    }
  };
  std::set<std::shared_ptr<const JobConstraints>, Same> table_;
};

// The engine's tables a compilation reads, and interns shapes, scopes and constraints into.
struct CompileTables {
  const Spec& spec;
  const std::vector<bool>& model_present;  // by model: the cell has devices of it
  ShapeTable& shapes;
  ScopeTable& scopes;
  ConstraintsTable& constraints;
  // On a fleet of several clusters with nodes: the global layer's summaries and paths (null:
  // one cluster, no global request).
  const ClusterSummaries* summaries = nullptr;
  const RegionPaths* paths = nullptr;
};

// What the engine knows of the job beyond the spec.
struct JobStanding {
  int32_t priority = 0;
  uint64_t holds = 0;                        // the reservation holds it owns
  std::optional<uint32_t> service_group;     // its service's group in the replica spread
  std::function<Milli(size_t model)> limit;  // its tenant's limit per model (-1: none)
};

CompiledJob CompileJob(const Job& job, JobId id, const JobStanding& standing,
                       CompileTables& tables);

}  // namespace tessera
