// How the node agent holds together every process a task starts, so that stopping the task
// stops them all: a double-forked, setsid'd child of a task is still the task's
// (docs/operations.md#task-containment).
//
// * cgroup v2 (preferred): each task runs in a cgroup of its own, under a subtree of the
//   agent's (`tessera-AGENT_ID` in the agent's own cgroup, or in --cgroup-root): the task's
//   child joins it before exec, and stopping the task signals every process in it; killing it
//   writes cgroup.kill. A task's cgroup is removed once empty.
// * process groups (where no cgroup v2 subtree is writable): each task leads a process group,
//   the agent is the child subreaper (PR_SET_CHILD_SUBREAPER), so that orphaned descendants
//   become its children, and every task's processes carry TESSERA_AGENT_ID and
//   TESSERA_TASK_KEY in their environment: stopping a task signals its group and every
//   process that carries its key. A process that leaves its group and clears its
//   environment escapes; cgroups have no such hole.
//
// Either way a restarted agent first kills what the previous one left (its tasks ended with it:
// their runs are the daemon's to requeue) before it reports to the daemon.
//
// Thread-safety: none; the supervisor serializes calls.
#pragma once

#include <sys/types.h>

#include <memory>
#include <set>
#include <string>

#include "common/status.h"

namespace tessera {

enum class ContainmentKind { kAuto, kCgroup, kProcessGroup };

// "auto", "cgroup" or "process-group"; InvalidArgument naming --containment otherwise.
Result<ContainmentKind> ParseContainmentKind(std::string_view name);

struct ContainmentOptions {
  ContainmentKind kind = ContainmentKind::kAuto;
  // Unique among the agents of a host and the same across restarts of one agent: what its
  // tasks' cgroups and environment are marked with (AgentIdentity).
  std::string identity;
  // The cgroup v2 directory the agent's subtree goes in; "" = the agent's own cgroup.
  std::string cgroup_root;
};

// "NODE-XXXXXXXX": the node and a hash of the work directory (two agents of one host never
// share a work directory; a restarted agent uses its own again).
std::string AgentIdentity(const std::string& node, const std::string& work_dir);

// Whether the process exists and has not exited (a zombie has).
bool ProcessAlive(pid_t pid);

// The cgroup v2 directory a process is in: the cgroup2 mount (from /proc/self/mountinfo) joined
// with the "0::PATH" line of /proc/PID/cgroup; "" (and `why`, when given) when there is none.
std::string CgroupDirOf(pid_t pid, std::string* why = nullptr);

class Containment {
 public:
  // kAuto: cgroups when the agent can make its subtree, else process groups. kCgroup: an error
  // naming the directory when it cannot.
  static Result<std::unique_ptr<Containment>> Make(const ContainmentOptions& options);
  ~Containment();  // removes the agent's cgroup subtree when no task's cgroup is left in it
  Containment(const Containment&) = delete;
  Containment& operator=(const Containment&) = delete;

  // One line for the agent's log: which containment, where, and (process groups) why.
  const std::string& description() const { return description_; }
  bool cgroups() const { return !subtree_.empty(); }
  const std::string& identity() const { return identity_; }
  // The task's cgroup directory ("" with process groups).
  std::string CgroupOf(const std::string& key) const;

  // Before the task's fork: its cgroup made, and a descriptor of its cgroup.procs the child
  // writes "0" to (joining it) before exec; -1 with process groups, or when the cgroup cannot
  // be made (`error` says why: the task is then not started).
  int Prepare(const std::string& key, std::string* error);
  // Sends `sig` to every process of the task: its group `pgid`, and every process in its
  // cgroup (or, with process groups, that carries its key).
  void Signal(const std::string& key, pid_t pgid, int sig);
  // Whether no process of the task is left.
  bool Gone(const std::string& key, pid_t pgid) const;
  // The task's cgroup removed (when empty); true when nothing of it is left to remove.
  bool Release(const std::string& key);
  // Kills what an earlier run of this agent left (every cgroup in its subtree, or every
  // process that carries its identity), waiting up to a second for them to go: how many
  // processes were killed.
  int KillLeftovers();
  // Process groups: reaps the orphaned descendants of tasks that became the agent's children
  // (they are waited for by pid, never as any child, which would take another's exit status);
  // `tasks`: the running tasks' own pids, which the supervisor waits for.
  void ReapOrphans(const std::set<pid_t>& tasks);

 private:
  Containment() = default;
  // The pids of the processes that carry the identity (and `key`, unless empty).
  std::set<pid_t> Marked(const std::string& key) const;

  std::string identity_;
  std::string subtree_;  // the agent's cgroup directory; "" = process groups
  std::string description_;
  std::set<pid_t> orphans_;  // process groups: orphans reparented to the agent
};

}  // namespace tessera
