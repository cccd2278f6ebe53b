// The engine's record of one submitted job: its declaration, where it is in the state
// machine, where it runs, and the accounting the metrics need.
//
//   pending -> admitted -> placed -> running -> succeeded | failed | cancelled
//                 ^                      |
//                 +---- preempted / lost +   (back to pending, restarts + 1)
//
// Admitted means the quota allows it; placed means its placements are committed to the cell;
// running means the backend has launched it. Today admission is decided together with the
// placement (no job rests in `admitted`), and the backends launch synchronously, so a job
// passes through placed within one step; a daemon with asynchronous backends will hold jobs
// there until the launch is confirmed. The decision log records each transition that matters
// (start, preempt, migrate, requeue, finish).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "model/job.h"
#include "sched/cell_state.h"

namespace tessera {

enum class JobState : uint8_t {
  kPending,
  kAdmitted,
  kPlaced,
  kRunning,
  kSucceeded,
  kFailed,
  kCancelled,
};

std::string_view JobStateName(JobState s);
inline bool IsTerminal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kCancelled;
}

// Why a job is not running, in a stable code and a sentence.
enum class PendingReason : uint8_t {
  kNone,
  kNew,            // submitted, not yet considered
  kQuota,          // its tenant's quota (limit, or guarantee without borrowing) forbids it
  kResources,      // no placement fits now
  kInfeasible,     // no placement would fit even on an empty fleet
  kReservation,    // fits, but would delay the head job's reservation (backfill rule)
  kBackfillDepth,  // not considered this cycle: too deep in the queue
  kPreempted,      // requeued after preemption
  kNodeLost,       // requeued after a node failure
  kBudget,         // its tenant's (or its burst rule's) budget for today would be exceeded
  kIdle,           // requeued: its devices idled past an idle-reclaim rule's threshold
};
std::string_view PendingReasonCode(PendingReason r);

struct JobRecord {
  JobId id;
  Job job;
  uint64_t key = 0;  // stable tie-breaker: submission sequence
  JobState state = JobState::kPending;
  PendingReason reason = PendingReason::kNew;
  std::string detail;  // the placement explanation when pending for resources

  int32_t priority = 0;  // the priority class's value
  bool preemptible = false;
  Millis min_run = 0;  // its class's minRunTime: no preemption of a run younger than this
  int32_t task_count = 0;
  Milli device_milli = 0;  // device share of one run, all tasks together
  // Device share of the current run: device_milli, or less while an elastic gang's run has
  // only some of its tasks (placements.size() < task_count).
  Milli run_milli = 0;

  TimeMs submitted = 0;
  // Its place in first-come order: the submission, or when an idle reclaim sent it to the back.
  TimeMs arrival_order = 0;
  std::optional<TimeMs> first_start;
  // When the current run's processes start: the decision's time, or later by the grace period
  // of the jobs it preempted (they checkpoint and exit first).
  TimeMs last_start = 0;
  // A run that resumes from a checkpoint first reloads it (scheduler.restartCost): no progress
  // for its first run_overhead ms, and its checkpoints count from the end of that.
  Millis run_overhead = 0;
  TimeMs progress_start() const { return last_start + run_overhead; }
  std::optional<TimeMs> finished;

  int32_t restarts = 0;           // times it went back to pending after running
  int32_t preemptions = 0;        // of those, by preemption
  double attained_device_ms = 0;  // device-milliseconds of service so far (LAS)
  // Of that, the service starvation promotion forgave (LAS: the job counts as unserved again).
  double forgiven_device_ms = 0;
  Millis last_run_ms = 0;     // the length of its last run (ended)
  Millis run_ms = 0;          // time spent running, all runs together
  double lost_device_ms = 0;  // work thrown away by restarts from a checkpoint
  Millis kept_ms = 0;         // running time not thrown away (progress, in wall time)
  TimeMs estimated_end = 0;   // of the current run, from the runtime estimate

  // The current run: one placement per task it has (every task, or an elastic gang's first
  // ones, in task order), the level the gang spans, the run's generation (events of an older
  // run are ignored; an elastic gang's growth starts a new one).
  std::vector<Placement> placements;
  TopologyLevel level = TopologyLevel::kAny;
  uint64_t generation = 0;
  // Since when the current run's devices have been idle by its idle-reclaim rule (reported
  // utilization below the rule's threshold); whether the owner was notified of it.
  std::optional<TimeMs> idle_since;
  bool idle_noticed = false;
  bool borrowing = false;  // the run uses capacity beyond its tenant's guarantee
  // When it arrived, its tenant's guarantee of a model it accepts still covered it: it is owed
  // its devices, by reclaim if need be (metrics.json queue_s_within_guarantee).
  bool asked_within_guarantee = false;
  // Set for the backend's Stop of a preempted run: the time it has to checkpoint and exit
  // (its preemption rule's gracePeriod; 0 = stop at once, losing the work since the last
  // checkpoint).
  Millis stop_grace = 0;
  // On a fleet of several clusters: why the current run's cluster was chosen (its score, the
  // other candidates, the clusters passed over and why). Set while the run starts; the store
  // sees it with the record's transition to running, then it moves into the start's decision
  // (the record keeps no copy).
  std::string where;
  TimeMs queued_since = 0;  // when it last entered the queue
  // As a preemptor: its searches for victims that failed in a row since it last started, and
  // the time before which it does not search again (sched/preemption_cost.h SearchBackoff; or
  // the victims' checkpoints its preemption waits for).
  int32_t searches_failed = 0;
  TimeMs search_again_at = 0;

  bool running() const { return state == JobState::kRunning; }
};

// The share of the job's work a run of `members` of its `tasks` tasks does per unit of time:
// an elastic gang short of tasks progresses at members / tasks of its whole pace (its data
// parallelism, or its array's tasks, split among fewer workers). 1 without a run (no members).
inline double MembersShare(size_t members, int32_t tasks) {
  return members == 0 || tasks <= 0 || members >= static_cast<size_t>(tasks)
             ? 1.0
             : static_cast<double>(members) / static_cast<double>(tasks);
}

// The device share of `placements`, all together.
inline Milli MilliOf(const std::vector<Placement>& placements) {
  Milli sum = 0;
  for (const Placement& p : placements)
    for (const DeviceUse& u : p.devices)
      sum += u.milli;
  return sum;
}

// The distinct nodes of `placements`, in index order.
inline std::vector<uint32_t> DistinctNodes(const std::vector<Placement>& placements) {
  std::vector<uint32_t> nodes;
  for (const Placement& p : placements)
    nodes.push_back(p.node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

// Work a run loses when stopped at `now` without a final checkpoint: everything since the
// last periodic checkpoint, or since the start when the job never checkpoints.
Millis LostSinceCheckpoint(TimeMs start, TimeMs now, Millis checkpoint_interval);

}  // namespace tessera
