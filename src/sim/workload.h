// A workload for the simulator: jobs with their arrival time and their true amount of work,
// which only the simulated backend knows (the engine sees the declared runtime estimate).
//
// Importers read the public trace formats of ../shared/data and Tessera's native JSONL; each
// reports malformed rows with their line numbers (up to a cap, all in one error).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/rng.h"
#include "common/status.h"
#include "model/spec.h"

namespace tessera {

struct TraceJob {
  Job job;          // job.submit_time is the arrival
  Millis work = 0;  // run time on speed-1000 devices, placed tightly
  // > 0: each run's devices go idle (utilization 0) this long after it starts — a notebook
  // left open; idle-reclaim rules act on it.
  Millis idle_after = 0;
};

struct Workload {
  std::vector<TraceJob> jobs;      // sorted by arrival, stable
  std::vector<std::string> notes;  // what the importer assumed or skipped
};

enum class TraceFormat { kOpenb, kGavel, kSia, kPai2020, kPhilly, kJsonl, kSynthetic };
std::optional<TraceFormat> ParseTraceFormat(std::string_view s);
std::string_view TraceFormatName(TraceFormat f);

// The most jobs the synthetic generator draws (--jobs, or what --days implies).
inline constexpr int64_t kMaxSyntheticJobs = 100000000;

struct ImportOptions {
  // Gavel: the per-model throughputs (isolated_throughputs_v100_p100_k80.csv); empty = look
  // beside the trace and up to three folders above it.
  std::string throughputs;
  Millis default_checkpoint = 300 * 1000;  // for trace jobs that declare none
  // Philly: replay only this virtual cluster (e.g. "6c71a0"); empty = every one.
  std::string philly_cluster;
  // Synthetic generator.
  int64_t jobs = 1000;
  double load = 0.8;  // offered device demand / fleet capacity
  // > 0: arrivals span this many days and the job count follows from `load` (jobs are drawn
  // until their device-time reaches load x devices x window); `jobs` is then ignored.
  double days = 0;
  uint64_t seed = 1;
};

// Reads `path` in `format` against the fleet of `spec` (device model names, tenants,
// priority classes). The synthetic format ignores `path`.
Result<Workload> ImportWorkload(const Spec& spec, TraceFormat format, const std::string& path,
                                const ImportOptions& options);

// The individual importers, on text already read (for tests and fuzzing).
Result<Workload> ParseGavelTrace(const Spec& spec, const std::string& name, std::string_view text,
                                 std::string_view throughputs_csv, const ImportOptions& options);
Result<Workload> ParseSiaWorkload(const Spec& spec, const std::string& name, std::string_view text,
                                  const ImportOptions& options);
Result<Workload> ParsePaiTasks(const Spec& spec, const std::string& name, std::string_view text,
                               const ImportOptions& options);
Result<Workload> ParsePhillyJobs(const Spec& spec, const std::string& name, std::string_view text,
                                 const ImportOptions& options);
Result<Workload> ParseJsonlJobs(const Spec& spec, const std::string& name, std::string_view text,
                                const ImportOptions& options);
Result<Workload> OpenbWorkload(const Spec& spec, const std::string& path,
                               const ImportOptions& options);
Workload SyntheticWorkload(const Spec& spec, const ImportOptions& options);

// Helpers shared by the importers.

// The lines of a text file, numbered from 1, without their "\n" or a trailing "\r"; blank
// lines (only spaces, tabs, "\r") are skipped but counted.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  // The next non-blank line; false at the end of the text.
  bool Next(std::string_view* line);
  int line_no() const { return line_no_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_no_ = 0;
};

TenantId DefaultTenant(const Spec& spec);
// What a job of a public trace becomes: a preemptible training job of normal priority, a gang
// within one cluster that prefers one node, checkpointing every options.default_checkpoint.
Job TraceTrainingJob(std::string name, TenantId tenant, const ImportOptions& options);
void SortByArrival(Workload& w);
// A device model of the fleet by name, ignoring case ("v100" finds V100).
std::optional<DeviceModelId> FindModelNoCase(const Spec& spec, std::string_view name);

}  // namespace tessera
