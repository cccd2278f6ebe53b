// The engine's narrow ports (docs/architecture.md §4): Store keeps durable state and the decision
// log, Backend runs what was placed. Clock and Rng come from common/.
//
// Thread-safety: implementations are called from the engine's thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/job_record.h"

namespace tessera {

enum class DecisionKind : uint8_t {
  kStart,
  kPreempt,
  kRequeue,
  kMigrate,  // a running job moved to a faster device model (restarts from its checkpoint)
  kFinish,
  kFail,
  kCancel,
  kIdle,   // an idle-reclaim rule's notice: the run's devices idle past the rule's threshold
  kGrow,   // an elastic gang's run took more of its tasks (`nodes`: the new tasks' nodes)
  kShrink  // an elastic gang's run gave tasks up to a preemptor, down to its minimum
};
std::string_view DecisionKindName(DecisionKind k);

// One line of the decision log: what the engine did to a job, when, and why.
struct Decision {
  TimeMs time = 0;
  DecisionKind kind = DecisionKind::kStart;
  JobId job;
  std::string reason;  // e.g. "backfill", "preempted-by:job-17 priority", "node-lost:n3"
  TopologyLevel level = TopologyLevel::kAny;
  std::vector<uint32_t> nodes;  // distinct CellState nodes of the run (kStart), new tasks' (kGrow)
  std::string where;            // kStart on several clusters: why this cluster (JobRecord::where)
  std::vector<std::pair<uint16_t, Milli>> devices;  // kStart: milli-devices of the run by model
};

class Store {
 public:
  virtual ~Store() = default;
  // Records the job's current state (called on every transition).
  virtual void PutJob(const JobRecord& job) = 0;
  // The decision is the store's to keep (the engine moves it in).
  virtual void AppendDecision(Decision d) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // Launches the job's current run (job.placements, job.generation); its processes start at
  // job.last_start (later than now when the run waits for preempted jobs to exit). Completion
  // is reported through the engine's EventSink as kFinish or kFail with that generation.
  virtual void Launch(const JobRecord& job, TimeMs now) = 0;
  // Stops the current run (preempted, cancelled, node lost), giving it job.stop_grace to
  // checkpoint and exit. No event follows.
  virtual void Stop(const JobRecord& job, TimeMs now) = 0;
  // An elastic gang's run changed its tasks: they are now job.placements. Tasks it did not
  // have start now, tasks it no longer has stop (given job.stop_grace), the others go on. The
  // run's generation is new (its completion is reported with it; it now progresses at the
  // pace of the tasks it has).
  virtual void Resize(const JobRecord& job, TimeMs now) = 0;
};

// The in-memory store: what tests and the simulator use.
class MemoryStore final : public Store {
 public:
  void PutJob(const JobRecord& job) override;
  void AppendDecision(Decision d) override { decisions_.push_back(std::move(d)); }
  const std::vector<Decision>& decisions() const { return decisions_; }
  // The last recorded state of each job, by id (value); gaps are never-seen ids.
  const std::vector<JobState>& states() const { return states_; }
  uint64_t writes() const { return writes_; }

 private:
  std::vector<Decision> decisions_;
  std::vector<JobState> states_;
  uint64_t writes_ = 0;
};

}  // namespace tessera
