// FGD's fragmentation measure (Weng et al., "Beware of Fragmentation", USENIX ATC'23): the
// expected device capacity on a node that a task drawn from the target workload could not
// use. The target workload is the set of typical task shapes with their popularity.
//
// Exactly as ../shared/data/FGD-PROTOCOL.md §7 describes, including which idle capacity
// counts as fragment (all of it for CPU-only typical tasks and for typical tasks whose model
// the node lacks; only the too-small partial devices when a typical task fits).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/quantity.h"
#include "sched/task_shape.h"

namespace tessera {

struct TypicalTask {
  Milli cpu = 0;    // non-zero CPU
  Milli milli = 0;  // share per device; 0 = CPU-only
  int32_t count = 0;
  ModelMask models = kAnyAccelerator;
  double weight = 0;  // popularity, the weights sum to 1
};

class TargetWorkload {
 public:
  TargetWorkload() = default;
  // `pinned`: per set of acceptable models, the share of the whole workload's device demand
  // (every task, not only the typical ones) that may use only those models.
  explicit TargetWorkload(std::vector<TypicalTask> tasks,
                          std::vector<std::pair<ModelMask, double>> pinned = {})
      : tasks_(std::move(tasks)), pinned_(std::move(pinned)) {}
  const std::vector<TypicalTask>& tasks() const { return tasks_; }
  const std::vector<std::pair<ModelMask, double>>& pinned() const { return pinned_; }
  bool empty() const { return tasks_.empty(); }

  // The fragmentation (milli-devices) of a node with `cpu_free` and device free shares
  // `free`, whose devices are of the models in `node_models`.
  double Fragmentation(Milli cpu_free, std::span<const uint16_t> free, ModelMask node_models) const;

 private:
  std::vector<TypicalTask> tasks_;
  std::vector<std::pair<ModelMask, double>> pinned_;
};

// Per model set, the share of the device demand (milli x count) of `shapes` weighted by
// `counts` that names exactly that set; demand that accepts any model is left out.
std::vector<std::pair<ModelMask, double>> PinnedDemand(
    const std::vector<std::pair<TaskShape, double>>& shapes);

// A target workload from declared requests, each weighted by its number of tasks; equal
// shapes are merged, in first-seen order.
TargetWorkload TargetFromRequests(const Spec& spec,
                                  const std::vector<std::pair<const TaskRequest*, int64_t>>& reqs);

// The configuration's declared workload as the target: every job's task groups by their task
// count, every service's replica by its minimum (at least one).
TargetWorkload DeclaredTarget(const Spec& spec);

}  // namespace tessera
