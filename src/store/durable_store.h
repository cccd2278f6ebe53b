// The daemon's durable store port (DESIGN.md §3, Store): what the daemon keeps so that a
// restart, or another daemon, rebuilds it — jobs, principals and tokens, node flags, services,
// the decision and audit logs, costs and task output. SqliteStore (the embedded default) and
// InMemoryStore (tests) implement it, and FaultyStore wraps either to make it fail on demand;
// the store conformance tests (tests/store/) hold every implementation to the same contract.
//
// Writes are of two kinds. Those with a future are acknowledged: the future resolves when the
// write is durable, or fails when the store does (Unavailable: a full disk, an I/O error, a
// lost database) or when the write itself is wrong (Internal: a duplicate key, a token of no
// principal). Those without one (the engine's record: updates, decisions, costs) are kept in
// order while the store fails and retried until it takes them; only a write wrong in itself,
// or what is still kept when the store is destroyed, is lost, and the health log says so.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/rows.h"

namespace tessera {

// The audit log is read newest first.
struct AuditQuery {
  std::optional<TimeMs> since;
  std::string principal;  // "" = everyone
  int64_t after = 0;      // seq: the cursor; only older records (0 = from the newest)
  int limit = 100;
};

struct DecisionQuery {
  std::optional<TimeMs> since;
  std::string kind;   // "" = every kind
  int64_t after = 0;  // seq: for paging
  int limit = 100;
};

class DurableStore {
 public:
  virtual ~DurableStore() = default;

  // Everything the daemon rebuilds itself from (the jobs' resolved forms aside: see
  // OpenActiveJobReader).
  virtual Result<StoreSnapshot> Load() = 0;
  // The highest job id; 0: none.
  virtual Result<int64_t> LastJobId() const = 0;
  // What a restart rebuilds the engine from, read on a connection of its own (one reader per
  // thread: several threads read at once, beside Load; each reads chunk after chunk).
  using ActiveJobRow = std::function<void(int64_t id, std::string_view state,
                                          std::string_view resolved, std::string_view placement)>;
  class ActiveJobReader {
   public:
    virtual ~ActiveJobReader() = default;
    // Of the jobs with ids in [from, to] that have not ended, in id order: id, state, resolved
    // form and placement, as views valid during the call.
    virtual Status Read(int64_t from, int64_t to, const ActiveJobRow& row) = 0;
  };
  virtual Result<std::unique_ptr<ActiveJobReader>> OpenActiveJobReader() const = 0;

  // A new job: Internal when its id, or its principal's idempotency key, is taken.
  virtual std::shared_future<Status> InsertJob(StoredJob job) = 0;
  virtual void UpdateJob(JobUpdate update) = 0;
  // The same, waited for: a change a caller is answered about only once it is durable (cancel).
  virtual std::shared_future<Status> CommitJobUpdate(JobUpdate update) = 0;
  virtual void AppendDecision(StoredDecision d) = 0;
  // A decision whose detail (DecisionDetail) the store formats: the engine's thread hands over
  // the parts only.
  virtual void AppendDecision(StoredDecision d, DecisionParts parts) = 0;
  virtual void AppendAudit(AuditEntry a) = 0;
  // Creates a principal, or replaces its role, tenant and node (its creation time stays).
  virtual std::shared_future<Status> PutPrincipal(Principal p) = 0;
  // Internal when the hash is taken or the principal does not exist.
  virtual std::shared_future<Status> PutToken(StoredToken t) = 0;
  virtual std::shared_future<Status> DeleteTokens(const std::string& principal) = 0;
  // The principal and its tokens, at once.
  virtual std::shared_future<Status> DeletePrincipal(const std::string& name) = 0;
  virtual std::shared_future<Status> PutNodeFlags(NodeFlags f) = 0;
  // Internal when the name is taken.
  virtual std::shared_future<Status> InsertService(StoredService s) = 0;
  virtual std::shared_future<Status> DeleteService(const std::string& name) = 0;
  // A new cost row, open (its `end` is not read) until EndCost or EndOpenCosts closes it.
  virtual void InsertCost(CostRow c) = 0;
  // Of each run: the row's state, first start, run start and kept progress (its text is as
  // stored); of each run `decided`, a "start" decision ({"nodes": [...]}) and its cost rows
  // (the tenant the row's); all at once.
  virtual void ResumeRuns(ResumedRuns runs) = 0;
  virtual void EndCost(int64_t id, TimeMs end) = 0;
  // Records that the daemon is alive at `now` (read back as StoreSnapshot::last_seen).
  virtual void Alive(TimeMs now) = 0;
  // Closes every open cost row at `end` (runs that ended with the previous process), or at
  // its start when that is later.
  virtual void EndOpenCosts(TimeMs end) = 0;
  // The tail of an ended task's output (replaces what was kept of the same task).
  virtual void PutTaskLog(int64_t job, int64_t run, int64_t task, std::string tail) = 0;
  // Resolves once everything queued before it is durable.
  virtual std::shared_future<Status> Flush() = 0;

  virtual Result<std::vector<AuditEntry>> QueryAudit(const AuditQuery& q) = 0;
  // The records QueryAudit's filters match (the cursor and the limit aside).
  virtual Result<int64_t> CountAudit(const AuditQuery& q) = 0;
  // One job's decisions, in order.
  virtual Result<std::vector<StoredDecision>> QueryDecisions(int64_t job) = 0;
  // The decision log across jobs, in order.
  virtual Result<std::vector<StoredDecision>> QueryDecisionLog(const DecisionQuery& dq) = 0;
  // The tail PutTaskLog kept of a task; nullopt when none.
  virtual Result<std::optional<std::string>> QueryTaskLog(int64_t job, int64_t run,
                                                          int64_t task) = 0;
  // Spending within [since, until), by (tenant, cluster, model) in that order; open rows run
  // until `now`.
  virtual Result<std::vector<CostTotal>> QueryCosts(TimeMs since, TimeMs until, TimeMs now) = 0;

  // Writes committed so far, and the batches (transactions) they took.
  virtual uint64_t committed_writes() const = 0;
  virtual uint64_t batches() const = 0;
  // Whether the store fails: true from a failed commit until the next one that succeeds.
  virtual bool degraded() const = 0;
  // Called when writes start failing (degraded, "store NAME: " and the failure's message),
  // when they succeed again (not degraded, ""), and at each loss of a write nobody waits for
  // (degraded, the message and what was lost): the daemon's log. Null = none. Called from the
  // store's own thread or the writer's.
  virtual void SetHealthLog(std::function<void(bool degraded, const std::string& message)> log) = 0;
};

// A future that is already resolved with `s`: what a store that writes at once returns.
std::shared_future<Status> ReadyStatus(Status s);

// Adds a cost row's part of a period to `totals`, which QueryCosts orders by (tenant, cluster,
// model): to the last total when the row is of the same three, else as a new total.
void AddCostRow(std::vector<CostTotal>& totals, std::string_view tenant, std::string_view cluster,
                std::string_view model, Micro amount);

// A decision's detail as stored: {"nodes": [...], "where": "...", "policy": "...",
// "placement": "..."}, each when not empty.
std::string DecisionDetail(const DecisionParts& parts);

}  // namespace tessera
