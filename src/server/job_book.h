// The daemon's jobs as the API sees them: every row by id, the indexes by name and by
// Idempotency-Key, the pages the API lists, and for each row its job in the engine in force.
//
// Ids are dense from 1, as the store hands them out. A row nobody sees is a submission the
// store refused (reason "store"): on a live daemon the failed insert, after a restart the gap
// it left. Such a row keeps its id taken, is found by no reference, listed on no page and
// counted as no job.
//
// Not thread-safe: the daemon guards it with its mutex (daemon.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "server/auth.h"
#include "store/durable_store.h"

namespace tessera {

// Whether a stored job state is an end (succeeded, failed or cancelled).
inline bool Terminal(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled";
}

struct JobFilter {
  std::string tenant;  // a subtree; "" = all the caller may see
  std::string state;   // "" = any; "active" = not finished
  std::string job_class;
  std::string name;
  int64_t after = 0;  // the cursor: only jobs with lower ids (the last id of the previous page)
  int limit = 100;    // clamped to 1..1000
};

class JobBook {
 public:
  // A page of row ids, newest first.
  struct Page {
    std::vector<int64_t> ids;
    int64_t next = 0;  // the `after` of the next (older) page; 0 = none
    size_t total = 0;  // the rows the filter matches, on every page
  };
  static constexpr uint64_t kNoPlacement = ~uint64_t{0};

  // Rows, the hidden ones included.
  size_t size() const { return rows_.size(); }
  // Rows that are jobs (not hidden).
  size_t jobs() const { return rows_.size() - hidden_; }
  bool contains(int64_t id) const { return id >= 1 && static_cast<size_t>(id) <= rows_.size(); }
  StoredJob& row(int64_t id) { return rows_[static_cast<size_t>(id - 1)]; }
  const StoredJob& row(int64_t id) const { return rows_[static_cast<size_t>(id - 1)]; }
  StableVector<StoredJob>& rows() { return rows_; }
  const StableVector<StoredJob>& rows() const { return rows_; }
  static bool Hidden(const StoredJob& row) { return row.reason == "store"; }

  // A new submission's row: its id is the next one, it is pending ("new") and indexed. The
  // book keeps it without its resolved form (the store's only: read on restart).
  void Add(StoredJob& row);
  // The store did not take row `id`'s insert: it fails for "store" (`why`), hidden, and its
  // Idempotency-Key is free again.
  void Refuse(int64_t id, const std::string& why);
  // The row an earlier submission of `principal` with Idempotency-Key `key` made.
  const StoredJob* Keyed(const std::string& principal, const std::string& key) const;
  // A job of `tenant` named `name` that has not ended.
  const StoredJob* ActiveNamed(const std::string& name, const std::string& tenant) const;

  // The row a reference (an id, or a name; `tenant` narrows a name several tenants use) names
  // for the caller. A row the caller may not see is "not found", never "forbidden".
  Result<int64_t> Resolve(const Caller& caller, const std::string& ref,
                          const std::string& tenant) const;
  // The rows the filter matches that the caller may see, newest first.
  Page Find(const Caller& caller, const JobFilter& filter) const;

  // Restore: the store's rows, in id order (a gap becomes a hidden row). The indexes are built
  // by IndexNames, which reads only the rows' names, ids, principals and keys: it may run on
  // another thread while the caller changes any other field of the rows.
  void Load(StableVector<StoredJob> rows);
  void IndexNames();

  // The engine's side. Each row's job in the engine in force (none: ended before it, or not
  // yet taken), and back: the row of an engine job (0 while its Submit is still registering
  // it, and for every job before a reload binds it again).
  void Bind(int64_t id, JobId job);
  const std::optional<JobId>& engine_id(int64_t id) const { return engine_id_[Index(id)]; }
  void Unbind(int64_t id) { engine_id_[Index(id)].reset(); }
  bool Knows(JobId job) const { return job.value() < by_engine_.size(); }
  int64_t IdOf(JobId job) const { return by_engine_[job.value()]; }
  // A new engine (a reload): no engine job has a row until bound again, and every run's
  // placement is formatted again.
  void ForgetEngine();
  void ReserveEngine(size_t jobs) { by_engine_.reserve(jobs); }
  // The restarts a row's job had before the engine in force (an earlier process, an engine a
  // reload replaced): the job's run number is this plus the engine's count.
  int32_t& restart_base(int64_t id) { return restart_base_[Index(id)]; }
  int32_t restart_base(int64_t id) const { return restart_base_[Index(id)]; }
  // The run generation whose placements were last handed over to be formatted into the row
  // (kNoPlacement: none).
  uint64_t& placed_generation(int64_t id) { return placed_generation_[Index(id)]; }

 private:
  static size_t Index(int64_t id) { return static_cast<size_t>(id - 1); }
  void Push(StoredJob row);

  // By id - 1; growing never moves a row (a std::vector's doubling at 65,536 rows stalled
  // every submission ~100 ms).
  StableVector<StoredJob> rows_;
  size_t hidden_ = 0;
  std::unordered_map<std::string, std::vector<int64_t>> by_name_;
  std::unordered_map<std::string, int64_t> by_key_;  // IdempotencyKey(principal, key)
  std::vector<std::optional<JobId>> engine_id_;      // by id - 1
  std::vector<int64_t> by_engine_;                   // engine JobId -> id
  std::vector<int32_t> restart_base_;                // by id - 1
  std::vector<uint64_t> placed_generation_;          // by id - 1
};

}  // namespace tessera
