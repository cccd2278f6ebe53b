// The preemption cost model (docs/queueing.md#preemption-cost): what stopping runs costs, what
// starting the preemptor now gains, and whether the gain pays. Everything is counted in
// job-milliseconds of waiting, the unit of mean JCT: a gang of 32 devices waiting an hour weighs
// one job-hour, as does each of the quarter-device jobs it would stop.
//
//   a victim's stop   = (work since its last checkpoint + its restart cost) x (1 + p)
//                       + the wait it queues again before it restarts x (1 + p)
//   the preemptor's gain = the wait it avoids x its class's weight
//   weight            = 1 + (preemptor's priority - the highest victim's priority) / 100
//
// p is how often the victim was preempted already: a job stopped before is dearer each time,
// so that it is not the cheapest victim again and again (churn). A victim queues again about as
// long as the preemptor would have waited: the room comes back at the pace it would have come
// to the preemptor. So a preemption pays when
//
//   wait avoided x (weight - sum of (1 + p)) > sum of (lost work + restart) x (1 + p):
//
// a normal job (weight 4 over low) may stop at most three low jobs never stopped before, and
// only when its wait is long against what they lose. A job of the victims' own class (weight
// 1) would never pay so, which is why an ordering's displacement within a class (LAS: the least
// served first) is the ordering's own judgement: its victims' waits again are not billed. One
// run displaced for one job is the ordering's swap; a displacement that stops several runs
// for one puts several jobs back for one, and pays for what their stops waste, their lost work
// and restarts x (1 + p) (DisplacementBilled). The wait avoided is how long the preemptor would
// wait for enough of its devices to free up (backfill's shadow time, from the running jobs'
// estimated ends), at most as long as jobs of its class and size typically wait (TypicalWaits)
// when it stops runs of a lower class. Pure: the engine hands in the numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "common/quantity.h"

namespace tessera {

// How long a run is protected from preemption after it starts: its class's minRunTime, doubled
// for each time the job was preempted before, at most 8 times as long (kMaxProtectionDoublings):
// a job that restarts into a hole is not the next victim at once, again and again.
inline constexpr int32_t kMaxProtectionDoublings = 3;
Millis ProtectedFor(Millis min_run, int32_t preemptions);

// What stopping one run costs before it queues again.
struct StopCostInput {
  Millis since_checkpoint = 0;  // work it would lose
  Millis restart_cost = 0;      // what its restart costs before it makes progress again
  int32_t preemptions = 0;      // times it was preempted before
};

// Job-milliseconds lost by stopping the run now: (lost work + restart) x (1 + preemptions).
double StopCost(const StopCostInput& in);

// The same per device the run frees (`devices` milli): how victims are ranked, cheapest first.
// (Ranked by their whole cost, their waits again included, the room came from fewer but larger
// victims and lost more work: measured worse on the synthetic runs of docs/queueing.md.)
double StopCostPerDevice(const StopCostInput& in, Milli devices);

// 1 + (preemptor's priority - the highest victim's) / 100; a negative gap counts as 0.
double ClassWeight(int32_t priority_gap);

// The victims of one preemption, added up.
struct PreemptionBill {
  double lost = 0;      // their StopCosts together
  double requeues = 0;  // their (1 + preemptions) together: each waits again the wait avoided
  int32_t stops = 0;    // how many

  void Add(const StopCostInput& victim);
  // A stop whose wait again is not billed: only what it wastes.
  void AddWaste(const StopCostInput& victim);
};

// How many runs of its own class an ordering's displacement may stop for one job before it
// pays for their waste: one, a swap (docs/queueing.md#preemption-cost: billing every
// displacement's waste cost LAS up to 45% of its mean JCT on Gavel's traces; billing past the
// first made it better there and cut its displacements under overload).
inline constexpr int32_t kFreeDisplacements = 1;
bool DisplacementBilled(const PreemptionBill& displaced);

// The wait avoided beyond which the preemption pays (exclusive), or nullopt when no wait pays:
// the victims' own waits outweigh the preemptor's class.
std::optional<Millis> BreakEvenWait(const PreemptionBill& bill, int32_t priority_gap);

// Whether the preemption pays for a preemptor that would wait `wait_avoided` without it.
bool PreemptionPays(Millis wait_avoided, const PreemptionBill& bill, int32_t priority_gap);

// The wait taken for a preemptor when the running jobs' estimates do not say when room frees
// up (some run without a runtime): a day.
inline constexpr Millis kUnknownWait = 24 * 3600 * 1000;

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
// When the engine looks again for a job that may search again at `again` should nothing else
// happen first: at the next multiple of kSearchBackoff, so that the backoffs of many jobs share
// one cycle (a job searches at any cycle once its backoff is over; a tick for each expiry made
// the isolated enterprise week run half as many cycles again).
TimeMs SearchTick(TimeMs again);

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
