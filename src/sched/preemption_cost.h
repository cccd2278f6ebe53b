// The preemption cost model (docs/queueing.md#preemption-cost): what stopping a run costs, what
// starting the preemptor now gains, both in device-milliseconds, and whether the gain pays.
//
//   cost of a victim = its devices x (work since its last checkpoint + its restart cost)
//                      x (1 + times it was preempted already)
//   gain             = the preemptor's devices x the wait it avoids x its class's weight
//   weight           = 1 + (preemptor's priority - the highest victim's priority) / 100
//
// The wait avoided is how long the preemptor would wait for enough of its devices to free up
// by the running jobs' estimated ends (backfill's shadow time); a preemption is made only when
// the gain exceeds the victims' cost together. The history factor makes a job that was stopped
// before dearer each time, so that it is not the cheapest victim again and again (churn).
// Pure: the engine hands in the numbers.
#pragma once

#include <cstdint>
#include <vector>

#include "common/quantity.h"

namespace tessera {

// How long a run is protected from preemption after it starts: its class's minRunTime, doubled
// for each time the job was preempted before, at most 8 times as long (kMaxProtectionDoublings):
// a job that restarts into a hole is not the next victim at once, again and again.
inline constexpr int32_t kMaxProtectionDoublings = 3;
Millis ProtectedFor(Millis min_run, int32_t preemptions);

struct StopCostInput {
  Milli devices = 0;            // the run's device share (milli devices)
  Millis since_checkpoint = 0;  // work it would lose
  Millis restart_cost = 0;      // what its restart costs before it makes progress again
  int32_t preemptions = 0;      // times it was preempted before
};

// Device-milliseconds lost by stopping the run now.
double StopCost(const StopCostInput& in);

// Device-milliseconds gained by starting a preemptor of `devices` (milli) now instead of after
// `wait_avoided`, `priority_gap` classes above its highest victim (0: the same class, as in an
// ordering's or a quota's preemption; negative counts as 0).
double PreemptionGain(Milli devices, Millis wait_avoided, int32_t priority_gap);

// The wait taken for a preemptor when the running jobs' estimates do not say when room frees
// up (some run without a runtime): a day.
inline constexpr Millis kUnknownWait = 24 * 3600 * 1000;

// Whether a preemption pays: the gain exceeds the cost of the victims together.
inline bool PreemptionPays(double gain, double cost) {
  return gain > cost;
}

// How long a job whose search for victims found none (or whose preemption did not pay) waits
// before it searches again: 30 s after its first failure, doubling with each failure after it,
// at most 8 minutes (kMaxSearchBackoff). The victims and what they cost change slowly against
// a scheduling cycle: a job within its guarantee, or at the head of a contended queue, does not
// search thousands of running jobs again each cycle, and still searches again within a bounded
// time (a reclaim owed to it comes within minutes, as Kueue's requeue backoff bounds it).
inline constexpr Millis kSearchBackoff = 30 * 1000;
inline constexpr int32_t kSearchBackoffDoublings = 4;
inline constexpr Millis kMaxSearchBackoff = kSearchBackoff << kSearchBackoffDoublings;  // 8 min
Millis SearchBackoff(int32_t failures);

// A victim's progress against its checkpoints.
struct VictimProgress {
  Milli devices = 0;
  Millis since_checkpoint = 0;
  Millis checkpoint_interval = 0;  // 0: it never checkpoints
};

// How long to wait before stopping the victims (0: stop them now): until the last of those that
// would lose work has saved its next checkpoint, when the preemptor's `devices` idling that long
// cost less than the work the victims would lose now. A victim without checkpoints never saves
// one: stop now.
Millis WaitForCheckpoints(Milli devices, const std::vector<VictimProgress>& victims);

}  // namespace tessera
