// Heterogeneity-aware moves of running work (the `hetero` policy): which running jobs to try
// to move to a faster device model, in what order, and whether a move pays for itself. Pure
// functions over numbers the engine reads from its records; the engine finds the placement,
// stops the run and starts it again (engine_moves.cc).
//
// A move is a restart from the job's last checkpoint, so it is worth making only to a model
// at least 1.25x faster, and only when the time it saves on the rest of the run outweighs
// twice the work the restart throws away, plus a minute.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/quantity.h"

namespace tessera {

// Whether a model of speed `faster` is fast enough to move a run of speed `speed` to it
// (speeds in thousandths of the reference model's).
inline bool FastEnoughToMove(Milli faster, Milli speed) {
  return faster * 4 >= speed * 5;
}

// A running job that might move: its best speed over its current one, and the job.
struct MoveCandidate {
  double gain = 0;   // best speed / current speed
  uint64_t key = 0;  // the job's submission order, for ties
  uint32_t id = 0;
  Milli speed = 0;  // its current speed
};

// Largest speed-up first; ties by submission order.
void OrderMoveCandidates(std::vector<MoveCandidate>& candidates);

// The time (ms) a move from speed `speed` to speed `faster` saves on the rest of a run whose
// estimate is `runtime` (unknown: it is taken as long) and which has done `kept` of it.
double MoveSaving(std::optional<Millis> runtime, Millis kept, Milli speed, Milli faster);

// Whether a move that saves `saved_ms` pays for restarting from a checkpoint `lost_ms` old and
// reloading it (`restart_ms`, scheduler.restartCost).
inline bool MovePays(double saved_ms, Millis lost_ms, Millis restart_ms) {
  return saved_ms > 2 * static_cast<double>(lost_ms) + static_cast<double>(restart_ms);
}

}  // namespace tessera
