// What runs cost, kept as cost rows in the durable store: one row per (cluster, model) part
// of a run, opened at its start at the part's rate and closed at its end; and spending over a
// period, summed from those rows (a row still open counts until now).
//
// Not thread-safe: the daemon guards it with its mutex (daemon.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "model/spec.h"
#include "sched/cost.h"
#include "server/auth.h"
#include "server/views.h"
#include "store/durable_store.h"

namespace tessera {

class Accounting {
 public:
  explicit Accounting(DurableStore& store) : store_(store) {}

  // After a restart: the highest row id in the store (new rows are numbered after it).
  void Resume(int64_t last_row) { last_row_ = last_row; }
  // A run of job `job` (of tenant `tenant`) starts at `start` at `rate`: a row per part, open
  // until Close. What the job had open closes first (a run that restarts without stopping: a
  // migration).
  void Open(int64_t job, const std::string& tenant, TimeMs start, const RunRate& rate,
            const Spec& spec);
  // A run a restart adopted: its rows are numbered and open here, and written with the
  // restore's batch (`into`).
  void Reopen(int64_t job, const RunRate& rate, std::vector<ResumedRuns::Cost>& into);
  // The job's run ended at `end`: its open rows close.
  void Close(int64_t job, TimeMs end);
  // The rows job `job` has open.
  std::vector<int64_t> open(int64_t job) const;

  // Spending within [since, until) by "tenant" (organisation), "project" (tenant path),
  // "cluster" or "model", of the tenants the caller may see, from the rows in `store`; open
  // rows count until `now`. It reads the store only (no Accounting, nor its lock).
  static Result<SpendingReport> Spending(DurableStore& store, const Caller& caller,
                                         const std::string& by, TimeMs since, TimeMs until,
                                         TimeMs now, const std::string& currency);

 private:
  DurableStore& store_;
  int64_t last_row_ = 0;
  std::map<int64_t, std::vector<int64_t>> open_;  // job id -> its run's open rows
};

}  // namespace tessera
