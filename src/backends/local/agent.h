// `tessera agent` (docs/operations.md#agents): one per node of a `local` cluster. It syncs
// with the daemon (protocol.h) — registering its host, heartbeating with telemetry, reporting
// every task's state — and runs what the daemon assigns to its node as child processes
// (supervisor.h), stopping what is no longer assigned.
//
// Two loops: one holds a long-poll sync open (the heartbeat, and how assignments arrive at
// once); the other reaps exited tasks and reports them at once. A daemon that cannot be
// reached is retried every half second while the tasks go on; a daemon that restarted (a new
// epoch) hears every exit it may have missed again.
//
// Thread-safety: Run blocks; `stop` may be set from any thread (a signal handler).
#pragma once

#include <atomic>
#include <iosfwd>
#include <string>
#include <vector>

#include "backends/local/containment.h"
#include "backends/local/host.h"
#include "common/clock.h"
#include "common/status.h"

namespace tessera {

struct AgentOptions {
  std::string server;  // http://HOST:PORT or https://
  std::string token;   // an agent-role token
  std::string ca_cert;
  std::string node;     // the node's name in the fleet
  std::string address;  // where peers reach this host; "" = the host name
  std::string work_dir;
  std::string checkpoint_root;  // "" = work_dir/checkpoints
  // The host GPUs that are the node's devices 0, 1, ... (device_map.h); empty = the host's
  // indices are the node's.
  std::vector<int> devices;
  // Where the devices' inventory and telemetry come from (host.h).
  DeviceTool device_tool = DeviceTool::kAuto;
  // How a task's processes are held together (containment.h); the cgroup v2 directory for
  // their cgroups ("" = the agent's own).
  ContainmentKind containment = ContainmentKind::kAuto;
  std::string cgroup_root;
  // An agent running as root runs a task that names no runAs user as root only when set.
  bool allow_root_tasks = false;
  Millis default_grace = 10000;  // for a task stopped without a grace period
  size_t log_bytes = 16 * 1024;
};

// Runs the agent until `stop` is set; then stops its tasks (SIGTERM, default_grace, SIGKILL).
// Progress and connection problems go to `log`, one line each.
Status RunAgent(const AgentOptions& options, const std::atomic<bool>& stop, std::ostream& log);

}  // namespace tessera
