// The agent protocol (docs/operations.md#the-agent-protocol-reference), version 1: what a node
// agent and the daemon say to each other over the daemon's HTTP API.
//
// One exchange, `POST /v1/agents/{node}/sync`, is the registration, the heartbeat and the
// report at once: the agent sends its host's inventory and telemetry and the state of every
// task it holds; the daemon answers with the tasks the node should run (the agent starts what
// it does not run yet and stops what it runs but is no longer asked to). The daemon holds the
// answer until the node's assignment changes or `wait_ms` passes, so a placement reaches an
// idle agent at once and a silent agent is a lost one.
//
// A task is named by its key "JOB.RUN.TASK": the job's id in the store, the run's number (the
// job's restarts before it: stable across daemon restarts, so an adopted run keeps its key) and
// the task's index in the job. An agent never starts a key twice.
//
// Thread-safety: pure functions and values.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backends/local/inventory.h"
#include "backends/run_order.h"
#include "common/clock.h"
#include "common/quantity.h"
#include "common/status.h"

namespace tessera {

inline constexpr int kAgentProtocol = 1;

// The host as the agent sees it. GPUs are those nvidia-smi lists, or the NPU devices npu-smi
// lists (empty without either).
struct AgentInventory {
  Milli cpu = 0;  // online CPUs, in milli
  MiB memory = 0;
  std::vector<GpuSample> gpus;
};

struct AgentTelemetry {
  Milli cpu_used = 0;  // busy CPUs over the last sample, in milli
  MiB memory_used = 0;
  std::vector<GpuSample> gpus;  // live utilization and memory per GPU
};

enum class TaskPhase : uint8_t { kRunning, kExited };

// What the agent knows of one task.
struct TaskReport {
  TaskKey key;
  TaskPhase phase = TaskPhase::kRunning;
  int64_t pid = 0;
  int exit_code = 0;     // kExited: the process's exit status, or 128 + signal
  bool stopped = false;  // kExited: the agent stopped it (asked to); not a failure of its own
  std::string error;     // kExited: why it could not start ("" when it ran)
  std::string log;       // the tail of its output, when it changed since the last report
};

struct SyncRequest {
  int protocol = kAgentProtocol;
  std::string agent;    // this agent process's id: a new one means the agent restarted
  std::string address;  // where the node's peers reach it (host name or IP)
  AgentInventory inventory;
  AgentTelemetry telemetry;
  std::vector<TaskReport> tasks;
  uint64_t known_version = 0;  // the assignment version the agent holds
  Millis wait_ms = 0;          // how long the daemon may hold the answer
};

// One task the node should run.
struct TaskAssignment {
  TaskKey key;
  std::string job_name;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;  // the job's own and TESSERA_* / *_VISIBLE_DEVICES
  // The host user (and group, "" = the user's primary) to run as; "" = none named.
  std::string run_as_user, run_as_group;
};

// A task the node should stop, with the time it has to exit after SIGTERM.
struct TaskStop {
  TaskKey key;
  Millis grace_ms = 0;
};

struct SyncAnswer {
  int protocol = kAgentProtocol;
  std::string epoch;  // the daemon process's id: a new one means the daemon restarted
  uint64_t version = 0;
  Millis heartbeat_ms = 0;  // how often the agent must sync at least
  std::vector<TaskAssignment> run;
  std::vector<TaskStop> stop;
  std::vector<TaskKey> acked;  // exits the daemon has recorded: the agent may forget them
};

// JSON forms. The readers reject unknown fields and wrong types; errors name the field.
nlohmann::json ToJson(const SyncRequest& r);
nlohmann::json ToJson(const SyncAnswer& a);
Result<SyncRequest> ReadSyncRequest(const std::string& body);
Result<SyncAnswer> ReadSyncAnswer(const std::string& body);

}  // namespace tessera
