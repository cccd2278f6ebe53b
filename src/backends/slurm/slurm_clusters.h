// The daemon's Slurm backend (docs/operations.md#slurm): real Slurm clusters execute the runs
// Tessera placed on them. A worker thread submits each run as one sbatch allocation on the
// chosen nodes, cancels (SIGTERM to every step, then the job after the grace), and polls each
// controller (`squeue --json`, `sinfo`) for the runs' ends and the nodes' health. The daemon
// takes the events from its loop.
//
// A run's Slurm job is named tessera-JOB-RUN, so a daemon that restarts finds its runs again:
// an adopted run whose job still runs is tracked, not submitted again; one that ended while
// the daemon was down is reported as ended.
//
// Thread-safety: every public method may be called from any thread.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/slurm/slurm_text.h"
#include "common/mutex.h"

namespace tessera {

struct SlurmClusterConfig {
  std::string name;                // the cluster in Tessera's fleet
  std::string slurm_conf;          // its controller's slurm.conf
  std::string partition;           // "" = the default partition
  std::string work_dir;            // batch scripts and task output (shared with the nodes)
  std::vector<std::string> nodes;  // the fleet's nodes of the cluster = Slurm's node names
};

struct SlurmEvent {
  enum class Kind { kRunEnded, kNodeDown, kNodeUp, kUnreachable, kReachable };
  Kind kind = Kind::kRunEnded;
  std::string cluster;
  std::string node;    // kNodeDown, kNodeUp
  RunOutcome outcome;  // kRunEnded
  std::string detail;  // why (a node's state, the controller's error)
};

class SlurmClusters {
 public:
  // `wake` is called (from the worker) when events are ready.
  SlurmClusters(std::vector<SlurmClusterConfig> clusters, std::function<void()> wake,
                Millis poll_interval = 250);
  ~SlurmClusters();
  SlurmClusters(const SlurmClusters&) = delete;
  SlurmClusters& operator=(const SlurmClusters&) = delete;

  // Runs `order` on `cluster` (submitted by the worker; never twice under one name).
  void Submit(const std::string& cluster, RunOrder order, std::vector<SlurmTaskShape> shapes);
  // Stops the run: SIGTERM to its steps, the job cancelled after `grace`.
  void Stop(int64_t job, int32_t run, Millis grace);
  // What happened since the last call.
  std::vector<SlurmEvent> Take();
  // The tail of a task's output (16 KiB at most), when a Slurm cluster ran the task.
  std::optional<std::string> Log(const TaskKey& key) const;
  bool Manages(int64_t job, int32_t run) const;
  // A node as its controller last reported it (none before the first answer).
  std::optional<SlurmNode> NodeInfo(const std::string& node) const;

 private:
  struct Track {
    std::string cluster;
    uint64_t generation = 0;
    int64_t slurm_id = 0;  // 0 until submitted
    bool stopped = false;  // Tessera stopped it: its end is not reported
    TimeMs kill_at = 0;    // stopped with a grace: scancel then
    bool ended = false;
  };
  struct Pending {
    std::string cluster;
    RunOrder order;
    std::vector<SlurmTaskShape> shapes;
  };
  struct Cluster {
    SlurmClusterConfig config;
    bool polled = false;
    bool reachable = true;
    std::map<std::string, int64_t> jobs_by_name;  // the last squeue: tessera-* jobs
    std::map<int64_t, SlurmJob> jobs;
    std::map<std::string, bool> usable;  // node -> takes work, as last reported
  };
  using RunId = std::pair<int64_t, int32_t>;

  void Loop();
  // Worker: one controller's jobs and nodes; events for what changed.
  void Poll(Cluster& c, TimeMs now);
  void SubmitNow(Pending p, TimeMs now);
  // Runs a Slurm command against `c`'s controller; false when it failed (output in *out).
  bool Command(const Cluster& c, const std::string& args, std::string* out,
               const std::string& input_file = "", int timeout_s = 10) const;
  void Emit(SlurmEvent e);

  Millis poll_interval_;
  std::function<void()> wake_;
  mutable Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  bool kicked_ GUARDED_BY(mu_) = false;      // a submission or stop arrived
  std::map<std::string, Cluster> clusters_;  // worker's; config read by others
  std::vector<Pending> pending_ GUARDED_BY(mu_);
  std::vector<std::pair<RunId, Millis>> stops_ GUARDED_BY(mu_);
  std::map<RunId, Track> runs_ GUARDED_BY(mu_);
  std::vector<SlurmEvent> events_ GUARDED_BY(mu_);
  std::map<std::string, SlurmNode> nodes_ GUARDED_BY(mu_);  // by node, as sinfo last said
  std::thread worker_;
};

}  // namespace tessera
