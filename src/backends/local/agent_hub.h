// The daemon's side of the local backend (docs/operations.md#agents): which node runs which
// task, what each node's agent last said, and when an agent went silent. The daemon hands it
// the runs the engine places on `local` clusters and takes back what ended; the agents' sync
// requests (protocol.h) read their nodes' assignments here, waiting for a change.
//
// A run ends on its own when every task exited 0 (finished) or one task failed (the run
// failed; the other tasks are stopped). A run the daemon stops (preemption, cancellation,
// a lost node) is the engine's business: its tasks are only told to stop.
//
// Thread-safety: every method may be called from any thread; Wait blocks (without the
// caller's locks) until the node's assignment changes, the wait ends or Shutdown.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/local/protocol.h"
#include "backends/run_order.h"
#include "common/mutex.h"

namespace tessera {

// What one agent's report changed.
struct ReportResult {
  std::vector<RunOutcome> ended;
  bool joined = false;    // the node came (back) into service
  bool replaced = false;  // a new agent process took over a node that had tasks: they are gone
};

struct AgentHubOptions {
  Millis heartbeat = 2000;       // how often agents sync at least
  Millis lost_after = 10000;     // silence after which an agent's node is lost
  size_t log_bytes = 16 * 1024;  // kept of each task's output
  size_t log_tasks = 4096;       // tasks whose output is kept (the oldest go first)
};

// A node's agent as the fleet view shows it: who answers for the node, when it last synced,
// what its host has and uses now.
struct AgentNodeStatus {
  std::string agent;  // the agent's id
  std::string address;
  bool live = false;
  TimeMs last_seen = 0;
  Milli cpu = 0;  // the host's online CPUs
  MiB memory = 0;
  Milli cpu_used = 0;
  MiB memory_used = 0;
  std::vector<GpuSample> gpus;  // live utilization and memory per GPU
  size_t tasks = 0;             // tasks it runs
};

class AgentHub {
 public:
  AgentHub(AgentHubOptions options, std::string epoch);

  const AgentHubOptions& options() const { return options_; }
  // A node of a `local` cluster: its agent may sync. Others are refused.
  void AddNode(const std::string& node);
  bool HasNode(const std::string& node) const;

  // The engine placed `run` (a launch, or an adoption after a restart: an agent that runs the
  // run's tasks already goes on with them).
  void Assign(const RunOrder& run);
  // An elastic gang's run changed its tasks: they are now those of `run`. Its tasks the
  // order lacks are told to stop (with `grace`), those it adds start (unless one ran to its
  // end already in this run), the others go on; the run's generation is the order's.
  void Resize(const RunOrder& run, Millis grace);
  // The engine stopped the run: its tasks get SIGTERM and `grace` to exit.
  void Stop(int64_t job, int32_t run, Millis grace);

  // An agent's sync request from `node`, at `now`. Refused for an unknown node.
  Result<ReportResult> Report(const std::string& node, const SyncRequest& request, TimeMs now);
  // The node's assignment, once its version differs from `known` or `wait` passed.
  SyncAnswer Wait(const std::string& node, uint64_t known, Millis wait);
  // The nodes whose agents went silent for longer than lost_after, each reported once (their
  // tasks are forgotten; the engine requeues the runs).
  std::vector<std::string> Expired(TimeMs now);
  // Counts a node as seen at `now` without a report: a daemon that restarts with runs on the
  // node gives its agent lost_after to come back.
  void Expect(const std::string& node, TimeMs now);
  // Whether the node's agent is in touch.
  bool Live(const std::string& node) const;
  // The tail of a task's output ("" when none was reported), whether known.
  std::optional<std::string> Log(const TaskKey& key) const;
  // The node's agent as the fleet view shows it (nullopt when none ever synced).
  std::optional<AgentNodeStatus> NodeStatus(const std::string& node) const;
  // Wakes every waiting sync.
  void Shutdown();

 private:
  struct Node {
    std::string agent;
    std::string address;
    TimeMs last_seen = 0;
    bool live = false;
    AgentInventory inventory;
    AgentTelemetry telemetry;
    uint64_t version = 1;
    std::map<TaskKey, TaskAssignment> run;
    std::map<TaskKey, TaskStop> stop;
    std::vector<TaskKey> acked;  // to tell the agent in the next answer
  };
  struct Run {
    uint64_t generation = 0;
    std::map<int32_t, std::string> nodes;  // task index -> node, of tasks still running
    int32_t tasks = 0;                     // the job's tasks (an elastic run's too)
    std::set<int32_t> finished;            // task indices that exited 0
  };
  // Under mu_: the tasks of `order` the run has not on a node and has not finished go to their
  // nodes' agents as tasks of `run`.
  void AssignLocked(const RunOrder& order, Run& run) REQUIRES(mu_);
  using RunId = std::pair<int64_t, int32_t>;

  // Under mu_: the run's remaining tasks are told to stop; the run is forgotten.
  void StopLocked(const RunId& id, Millis grace) REQUIRES(mu_);
  void Touch(Node& n) REQUIRES(mu_);
  void KeepLog(const TaskKey& key, const std::string& text) REQUIRES(mu_);

  const AgentHubOptions options_;
  const std::string epoch_;
  mutable Mutex mu_;
  CondVar cv_;
  bool shutdown_ GUARDED_BY(mu_) = false;
  std::map<std::string, Node> nodes_ GUARDED_BY(mu_);
  std::map<RunId, Run> runs_ GUARDED_BY(mu_);
  std::map<TaskKey, std::string> logs_ GUARDED_BY(mu_);
  std::deque<TaskKey> log_order_ GUARDED_BY(mu_);  // oldest first
};

// The environment one task of `run` gets, with its peers' addresses by task index.
std::map<std::string, std::string> TaskEnvironment(const RunOrder& run, size_t task,
                                                   const std::vector<std::string>& peers);

}  // namespace tessera
