// The order in which a job's device models are tried when it is placed: a mask of models per
// attempt, why each comes before the next (for the explanations), and whether the last
// attempt is only for when every other is infeasible. Pure functions; the engine reads the
// quota and the speeds they take (engine_placement.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "sched/task_shape.h"

namespace tessera {

struct ModelOrder {
  std::vector<ModelMask> masks;
  std::vector<const char*> whys;  // by index; null: not said
  bool mixed_last = false;
};

// A speed-aware ordering: each of the job's models (`mine`) apart, in the order of
// `preferred` (its fastest first, or — when `contended` — where it gains most over the
// others first); then, with more than one model, all of them together, tried only when every
// single model is infeasible (a gang larger than any one model's devices may still run across
// models, at the pace of the slowest; one that fits a single model waits for it instead).
ModelOrder SpeedOrder(const std::vector<uint16_t>& preferred, ModelMask mine, bool contended);

// A speed-agnostic ordering of a job that may use several models (`mine`): first the models
// within its tenant's guarantee (`own`), then the models the quota admits the whole job on
// (`whole`), last all of them (for a gang that may split across models, or to tell a job that
// fits nowhere from one the quota keeps off the models where it would fit). Asking the quota
// before the placer keeps a job from landing on a model the lending pool then refuses while
// the models it may use fill up. The last attempt is only for the infeasible when there are
// others before it and the job is a single task.
ModelOrder AgnosticOrder(ModelMask mine, ModelMask whole, ModelMask own, bool single_task);

}  // namespace tessera
