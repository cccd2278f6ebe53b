// The node agent's processes: each task runs as a child process in a process group of its
// own (and, given a Containment, in a cgroup of its own or marked as the task's), with its
// assignment's environment, its output in a log file under the work directory, and death tied
// to the agent's (a task never outlives the agent that answers for it). A task is stopped with
// SIGTERM to all its processes, then SIGKILL once its grace period has passed; what a task
// leaves behind when it exits (a daemonized child) is killed too.
//
// The supervisor remembers every task it started (running, or exited with its status until
// the daemon has recorded the exit, then for a while to report again to a daemon that
// restarted, then by its key alone), so it never starts the same task key twice.
//
// Thread-safety: none; the agent serializes calls (agent.h). Start must be called from a
// thread that lives as long as the tasks (the death signal follows the forking thread).
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backends/local/containment.h"
#include "backends/local/protocol.h"

namespace tessera {

struct SupervisorOptions {
  std::string work_dir;          // logs/ and tasks/ go here
  std::string checkpoint_root;   // TESSERA_CHECKPOINT_DIR = checkpoint_root/JOB_ID
  size_t log_bytes = 16 * 1024;  // the tail reported of each task's output
  // How long an acknowledged exit is kept to report again to a daemon that restarted (the
  // daemon stores an exit as it acknowledges it; this covers the moment between the two).
  Millis keep_acknowledged = 10 * 60 * 1000;
  // A supervisor running as root runs a task that names no user (runAs) as root only when
  // this is set (`tessera agent --allow-root-tasks`); else the task fails with the reason.
  bool allow_root_tasks = false;
};

class Supervisor {
 public:
  // Without a containment a task's processes are its process group.
  explicit Supervisor(SupervisorOptions options, std::unique_ptr<Containment> containment = {});
  ~Supervisor();  // kills every task's group
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Whether the key was ever started here (running, or exited and remembered).
  bool Knows(const TaskKey& key) const;
  // Starts the task. A program that cannot be executed is recorded as exited with 127 and
  // the reason (reported like any exit).
  void Start(const TaskAssignment& task, TimeMs now);
  // SIGTERM to the task's group now, SIGKILL at now + grace if it still runs. Nothing when
  // the task is not running or already stopping.
  void Stop(const TaskKey& key, Millis grace, TimeMs now);
  // Reaps exited tasks and kills those past their grace; true when a task exited.
  bool Poll(TimeMs now);
  // Every running task, and every exit the daemon has not acknowledged, with the output's
  // tail where it changed since the last call (`all_logs`: whether unchanged).
  std::vector<TaskReport> Reports(bool all_logs = false);
  // The daemon recorded these exits, with their output's tail: they are no longer reported
  // (still never restarted). Exits acknowledged more than keep_acknowledged before `now` are
  // forgotten but for their keys.
  void Acknowledge(const std::vector<TaskKey>& keys, TimeMs now);
  // A daemon that restarted may not have seen the exits acknowledged lately: report them again
  // (without their tails, which the daemon stored as it acknowledged them).
  void Unacknowledge();
  // The running tasks' keys.
  std::vector<TaskKey> Running() const;
  // Stops every task (SIGTERM, then SIGKILL after `grace`), waiting for them to exit.
  void StopAll(Millis grace);

 private:
  struct Task {
    pid_t pid = 0;  // also the group id
    bool running = true;
    bool draining = false;  // exited: what it left is being killed, its cgroup removed
    bool stopping = false;
    TimeMs kill_at = 0;
    int exit_code = 0;
    std::string error;
    bool acked = false;
    bool tail_stored = false;  // acknowledged once: the daemon has the tail
    TimeMs acked_at = 0;
    std::string log_path;
    off_t log_sent = -1;  // the log's size when its tail was last reported
  };
  std::string Tail(Task& t, bool force);
  // `sig` to every process of the task (its group, or all its containment holds).
  void SignalTask(const TaskKey& key, const Task& t, int sig);
  // Kills what exited tasks left and removes their cgroups, once in a while.
  void Drain(TimeMs now);

  SupervisorOptions options_;
  std::unique_ptr<Containment> containment_;  // null: process groups alone
  TimeMs drained_at_ = 0;                     // the last Drain
  TimeMs reaped_at_ = 0;                      // the last look for orphans
  std::map<TaskKey, Task> tasks_;
  std::set<TaskKey> forgotten_;  // acknowledged long ago: never started again
};

}  // namespace tessera
