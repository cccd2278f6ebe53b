// What the Slurm backend writes for and reads from a Slurm controller's commands
// (docs/operations.md#slurm): the batch script of a run, the job states of `squeue --json`, the
// node states of `sinfo`. Text in, values out: tested and fuzzed without a cluster.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/run_order.h"
#include "common/status.h"

namespace tessera {

// A Slurm job as squeue reports it.
struct SlurmJob {
  int64_t id = 0;
  std::string name;   // "tessera-JOB-RUN" for Tessera's runs
  std::string state;  // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, NODE_FAIL, ...
  int exit_code = 0;  // the batch script's exit status, or 128 + signal
  std::string nodes;  // Slurm's host list, e.g. "east-[0-1]"
};

// `squeue --json --states=all`'s jobs. Errors say what is missing.
Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text);

// A node as sinfo reports it: its state ("idle", "mixed", "down*", "drained", ...) and what it
// has (-1 where sinfo did not say).
struct SlurmNode {
  std::string state;
  int cpus = -1;
  int64_t memory_mb = -1;
  int gpus = -1;  // the sum of its gpu GRES ("gpu:2", "gpu:a100:4(S:0-1)")
};

// The sinfo format the backend asks for, and its reader: NODE|STATE[|CPUS|MEMORY|GRES].
inline constexpr std::string_view kSinfoFormat = "%N|%T|%c|%m|%G";
Result<std::map<std::string, SlurmNode>> ParseSinfoNodes(std::string_view text);

// Whether a node in this sinfo state takes work: not down, drained, draining, failing, not
// responding (`*`) or powered off.
bool SlurmNodeUsable(std::string_view state);

// The name of run `run` of job `job` in Slurm, and back (nullopt when not Tessera's).
// An elastic run's task submitted alone is named for it too: tessera-JOB-RUN-tTASK.
struct SlurmRunName {
  int64_t job = 0;
  int32_t run = 0;
  std::optional<int32_t> task;
};
std::string SlurmJobName(int64_t job, int32_t run, std::optional<int32_t> task = std::nullopt);
std::optional<SlurmRunName> ParseSlurmJobName(std::string_view name);

// How a run's job ended, once squeue says it did; nullopt while it has not (or when it ended
// in a way that is not the job's doing: cancelled by Tessera, a node failure — the node's
// state says what happens next).
struct SlurmEnd {
  bool succeeded = false;
  std::string detail;  // why it failed
};
std::optional<SlurmEnd> SlurmOutcome(const SlurmJob& job);

// What one run asks of sbatch: one allocation over the nodes of its tasks.
struct SlurmSubmission {
  std::vector<std::string> args;  // sbatch's options
  std::string script;             // the batch script
};
// `order`'s tasks, each on its node: --nodelist, --ntasks-per-node (the most tasks on one
// node), --gres=gpu:N, --cpus-per-task and --mem per node, a time limit from the runtime. The
// script starts every task with srun; each task learns its Tessera index from its node and
// local rank, and gets TESSERA_* like an agent's task. `output_dir`: where each task's output
// goes (KEY.log).
struct SlurmTaskShape {
  Milli cpu = 0;
  MiB memory = 0;
  int gpus = 0;
};
// `alone`: the order is one task of an elastic run, submitted as its own job (named for it).
SlurmSubmission BuildSubmission(const RunOrder& order, const std::vector<SlurmTaskShape>& shapes,
                                const std::string& partition, const std::string& output_dir,
                                const std::string& checkpoint_root,
                                std::optional<Millis> time_limit, bool alone = false);

// `s` quoted for /bin/sh (single quotes).
std::string ShellQuote(std::string_view s);

}  // namespace tessera
