// What the daemon hands a backend to run, and what a backend hands back when a run ended on
// its own: the forms the local (agents) and the Slurm backend share, so that neither includes
// the other.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/quantity.h"

namespace tessera {

// One task of one run of a job: "JOB.RUN.TASK" in the agents' protocol, logs and markers.
struct TaskKey {
  int64_t job = 0;
  int32_t run = 0;
  int32_t task = 0;
  auto operator<=>(const TaskKey&) const = default;
  std::string ToString() const;
  static std::optional<TaskKey> Parse(std::string_view s);
};

// One run the engine placed on a cluster's nodes.
struct RunOrder {
  int64_t job = 0;
  int32_t run = 0;
  uint64_t generation = 0;  // the engine's, handed back in the run's outcome
  std::string job_name;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;  // the job's own
  struct Task {
    int32_t index = 0;
    std::string node;
    std::vector<int> devices;  // device indices on the node
    // CUDA_VISIBLE_DEVICES, ASCEND_RT_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES ("" = no device)
    std::string visible_variable;
    Milli milli_each = 1000;                // a fractional share of one device when below 1000
    std::string run_as_user, run_as_group;  // the host user to run as ("" = none named)
  };
  std::vector<Task> tasks;
  // The job's tasks: an elastic gang's run may hold fewer than all of them (tasks grow later),
  // and it has ended only when every one of them exited 0. 0 = tasks.size().
  int32_t task_count = 0;
  // An elastic gang's run: its tasks may change while it runs (a backend whose runs are one
  // allocation runs each task alone).
  bool elastic = false;
};

// A run that ended on its own, as its tasks reported.
struct RunOutcome {
  int64_t job = 0;
  int32_t run = 0;
  uint64_t generation = 0;
  bool succeeded = false;
  std::string detail;  // e.g. "task 1 exited with 3"
};

}  // namespace tessera
