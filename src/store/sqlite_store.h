// The daemon's durable store: one SQLite file in WAL mode (DESIGN.md §3, Store).
//
// Writes are queued and committed by one writer thread in batches, one transaction and one
// sync per batch (group commit): a submission waits for the future of its insert, so it is
// acknowledged only once durable, while many concurrent submissions share a sync. Writes that
// nobody waits for (the engine's updates, decisions, cost rows) wait a little for company
// (StoreOptions), so that a sync carries more of them. Reads that
// the daemon does not keep in memory (audit, decision log) use a connection of their own; WAL
// lets them run beside the writer.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "store/rows.h"
#include "store/sqlite.h"
#include "store/store_lock.h"

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

struct StoreOptions {
  // Writes nobody waits for (the engine's updates, decisions, cost rows) wait up to this long
  // for company before they are committed; a write with a future (a submission) ends the wait.
  std::chrono::milliseconds background_delay{10};
  // How long a write waits for a lock another connection holds on the file before its batch
  // fails (and is retried: SqliteStore's writes).
  std::chrono::milliseconds busy_timeout{5000};
};

class SqliteStore {
 public:
  // Opens or creates the file and brings its schema up to date, holding it exclusively until
  // destroyed (StoreLock). FailedPrecondition, naming the file, when another process holds it,
  // when it exists but is not a Tessera store (empty, not SQLite, another program's tables),
  // when it is read-only, or when its schema is newer than this tessera's.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   StoreOptions options = {});
  ~SqliteStore();
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // Everything the daemon rebuilds itself from (the jobs' resolved forms aside: see
  // ReadActiveJobs).
  Result<StoreSnapshot> Load();
  // What a restart rebuilds the engine from, of the jobs with ids in [from, to] that have not
  // ended, in id order: id, state, resolved form and placement, as views valid during the call.
  // Each call reads on a connection of its own, so that several threads read (and parse) at
  // once, beside Load.
  Result<int64_t> LastJobId() const;  // 0: none
  using ActiveJobRow = std::function<void(int64_t id, std::string_view state,
                                          std::string_view resolved, std::string_view placement)>;
  Status ReadActiveJobs(int64_t from, int64_t to, const ActiveJobRow& row) const;

  // Queued writes. The futures resolve when the batch holding the write is committed, or fail
  // when the store does (a full disk, an I/O error: Unavailable) or when the write itself is
  // wrong (a constraint: Internal). Writes without a future (the engine's record) are kept
  // in order while the store fails and retried, backing off up to a second, until it takes
  // them; only a write wrong in itself, or what is still kept when the store is destroyed, is
  // dropped, and the health log says so.
  std::shared_future<Status> InsertJob(StoredJob job);
  void UpdateJob(JobUpdate update);
  // The same, waited for: a change a caller is answered about only once it is durable (cancel).
  std::shared_future<Status> CommitJobUpdate(JobUpdate update);
  void AppendDecision(StoredDecision d);
  // A decision whose detail ({"nodes": [...], "where": "..."}, each when not empty) the writer
  // formats: the engine's thread hands over the parts only.
  void AppendDecision(StoredDecision d, std::vector<std::string> nodes, std::string where);
  void AppendAudit(AuditEntry a);
  std::shared_future<Status> PutPrincipal(Principal p);
  std::shared_future<Status> PutToken(StoredToken t);
  std::shared_future<Status> DeleteTokens(const std::string& principal);
  // The principal and its tokens, in one transaction.
  std::shared_future<Status> DeletePrincipal(const std::string& name);
  std::shared_future<Status> PutNodeFlags(NodeFlags f);
  std::shared_future<Status> InsertService(StoredService s);
  std::shared_future<Status> DeleteService(const std::string& name);
  void InsertCost(CostRow c);
  // Of each run: the row's state, first start, run start and kept progress (its text is as
  // stored); of each run `decided`, a "start" decision ({"nodes": [...]}) and its cost rows
  // (the tenant the row's).
  void ResumeRuns(ResumedRuns runs);
  void EndCost(int64_t id, TimeMs end);
  // Records that the daemon is alive at `now` (read back as StoreSnapshot::last_seen).
  void Alive(TimeMs now);
  // Closes every open cost row at `end` (runs that ended with the previous process).
  void EndOpenCosts(TimeMs end);
  // The tail of an ended task's output (replaces what was kept of the same task).
  void PutTaskLog(int64_t job, int64_t run, int64_t task, std::string tail);
  // Resolves once everything queued before it is durable.
  std::shared_future<Status> Flush();

  Result<std::vector<AuditEntry>> QueryAudit(const AuditQuery& q);
  // The records QueryAudit's filters match (the cursor and the limit aside).
  Result<int64_t> CountAudit(const AuditQuery& q);
  Result<std::vector<StoredDecision>> QueryDecisions(int64_t job);
  // The decision log across jobs, in order.
  Result<std::vector<StoredDecision>> QueryDecisionLog(const DecisionQuery& dq);
  // The tail PutTaskLog kept of a task; nullopt when none.
  Result<std::optional<std::string>> QueryTaskLog(int64_t job, int64_t run, int64_t task);
  // Spending within [since, until), by (tenant, cluster, model); open rows run until `now`.
  Result<std::vector<CostTotal>> QueryCosts(TimeMs since, TimeMs until, TimeMs now);

  // Writes committed so far, and the batches they took.
  uint64_t committed_writes() const { return committed_writes_; }
  uint64_t batches() const { return batches_; }
  // Whether the last batch failed (a full disk, an I/O error): true from a failed commit until
  // the next one that succeeds.
  bool degraded() const { return degraded_; }
  // Called by the writer thread when writes start failing (degraded, "store PATH: " and the
  // failure's message, with the OS error where there is one), when they succeed again (not
  // degraded, ""), and at each loss of a write nobody waits for (degraded, the message and
  // what was lost): the daemon's log. Null = none.
  void SetHealthLog(std::function<void(bool degraded, const std::string& message)> log);

 private:
  struct Statements;
  using Write = std::function<Status(Statements&)>;
  struct Pending {
    Write write;
    std::optional<std::promise<Status>> done;  // set by the writer; none for Post
  };

  SqliteStore(StoreLock lock, std::unique_ptr<Sqlite> writer, std::unique_ptr<Sqlite> reader,
              std::unique_ptr<Statements> statements, StoreOptions options);
  std::shared_future<Status> Enqueue(Write w);
  // Enqueue without a future: the writes the engine's thread makes (no promise to allocate).
  void Post(Write w);
  // Under mu_: queues `p`; whether the writer must be woken (the queue was empty).
  bool Push(Pending p);
  // The writer: batches, and on a failure keeps the writes nobody waits for and retries them.
  void WriterLoop();
  // Tells the health log when the store starts failing and when it recovers.
  void ReportHealth(const Status& status);
  // Tells the health log that writes were lost (`what`), at every loss.
  void ReportLoss(const Status& status, const std::string& what);

  // The longest the writer waits before retrying a failed store.
  static constexpr std::chrono::milliseconds kMaxBackoff{1000};

  const StoreOptions options_;
  StoreLock lock_;
  std::unique_ptr<Sqlite> writer_db_;
  std::unique_ptr<Sqlite> reader_db_;
  std::unique_ptr<Statements> statements_;
  mutable std::mutex read_mu_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  size_t waiting_ = 0;      // writes in queue_ with a future
  bool lingering_ = false;  // the writer waits for company for a queue without futures
  bool stopping_ = false;
  std::atomic<uint64_t> committed_writes_{0};
  std::atomic<uint64_t> batches_{0};
  std::atomic<bool> degraded_{false};
  std::mutex health_mu_;
  std::function<void(bool, const std::string&)> health_log_;  // under health_mu_
  std::thread writer_;
};

}  // namespace tessera
