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
// An elastic gang's run (RunOrder::elastic) changes its tasks while it runs, and a Slurm job's
// allocation does not: each of its tasks is a Slurm job of its own (tessera-JOB-RUN-tTASK, a
// part), submitted when the task joins the run and cancelled when the run gives it up. The run
// has succeeded once a part of each of the job's tasks completed, failed once one failed.
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
  // An elastic run's tasks are now those of `order`: the parts of tasks it gave up are stopped
  // (as Stop does, with `grace`), tasks it took are submitted, the others go on.
  void Resize(const std::string& cluster, const RunOrder& order,
              const std::vector<SlurmTaskShape>& shapes, Millis grace);
  // What happened since the last call.
  std::vector<SlurmEvent> Take();
  // The tail of a task's output (16 KiB at most), when a Slurm cluster ran the task.
  std::optional<std::string> Log(const TaskKey& key) const;
  bool Manages(int64_t job, int32_t run) const;
  // A node as its controller last reported it (none before the first answer).
  std::optional<SlurmNode> NodeInfo(const std::string& node) const;

 private:
  // An elastic run's task as its own Slurm job.
  struct Part {
    int64_t slurm_id = 0;  // 0 until submitted
    TimeMs kill_at = 0;    // given up with a grace: scancel then
  };
  struct Track {
    std::string cluster;
    uint64_t generation = 0;
    int64_t slurm_id = 0;  // 0 until submitted
    bool stopped = false;  // Tessera stopped it: its end is not reported
    TimeMs kill_at = 0;    // stopped with a grace: scancel then
    bool ended = false;
    // An elastic run: its parts by task index, the parts given up that still get their
    // grace, the job's task count and the tasks whose part completed.
    bool elastic = false;
    std::map<int32_t, Part> parts;
    std::vector<Part> dying;
    int32_t tasks = 0;
    std::set<int32_t> done;
    std::set<int64_t> retired;  // Slurm jobs of parts given up: a task taken back is new
  };
  struct Pending {
    std::string cluster;
    RunOrder order;
    std::vector<SlurmTaskShape> shapes;
    std::optional<int32_t> task;  // an elastic run's part
  };
  struct PartStop {
    std::pair<int64_t, int32_t> run;
    Part part;
    Millis grace = 0;
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
  // Under mu_: a submitted job's id, the run's or its part's (`task`). False when the part
  // was given up meanwhile (its job is to be cancelled).
  bool Record(const std::pair<int64_t, int32_t>& id, std::optional<int32_t> task, int64_t slurm_id)
      REQUIRES(mu_);
  // Under mu_: the elastic run's task `i` of `order` as a submission of its own.
  void QueuePart(const std::string& cluster, const RunOrder& order,
                 const std::vector<SlurmTaskShape>& shapes, size_t i) REQUIRES(mu_);
  // Worker, under mu_: the scancel command (in `commands`, its cluster in `on_cluster`) that
  // stops a part with `grace`: SIGTERM first when it runs, the part then waits in `dying`.
  void StopPart(Track& t, Part part, Millis grace, TimeMs now, std::vector<std::string>& commands,
                std::vector<std::string>& on_cluster) REQUIRES(mu_);
  // Worker, under mu_: an elastic run's parts against the controller's jobs; the run's end
  // when it came (a failed part ends it: the other parts' Slurm jobs go to `cancel`).
  std::optional<RunOutcome> PollParts(const Cluster& c, const std::pair<int64_t, int32_t>& id,
                                      Track& t, std::vector<int64_t>& cancel) REQUIRES(mu_);
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
  std::vector<PartStop> part_stops_ GUARDED_BY(mu_);
  std::map<RunId, Track> runs_ GUARDED_BY(mu_);
  std::vector<SlurmEvent> events_ GUARDED_BY(mu_);
  std::map<std::string, SlurmNode> nodes_ GUARDED_BY(mu_);  // by node, as sinfo last said
  std::thread worker_;
};

}  // namespace tessera
