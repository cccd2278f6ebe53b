// The daemon's durable store: one SQLite file in WAL mode (DESIGN.md §3, Store).
//
// Writes are committed by one writer thread in batches, one transaction and one sync per batch
// (GroupCommit): a submission is acknowledged only once durable, while many concurrent
// submissions share a sync. Reads that
// the daemon does not keep in memory (audit, decision log) use a connection of their own; WAL
// lets them run beside the writer.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>

#include "common/mutex.h"
#include "store/durable_store.h"
#include "store/group_commit.h"
#include "store/rows.h"
#include "store/sqlite.h"
#include "store/store_lock.h"

namespace tessera {

struct StoreOptions {
  // Writes nobody waits for (the engine's updates, decisions, cost rows) wait up to this long
  // for company before they are committed; a write with a future (a submission) ends the wait.
  std::chrono::milliseconds background_delay{10};
  // How long a write waits for a lock another connection holds on the file before its batch
  // fails (and is retried: SqliteStore's writes).
  std::chrono::milliseconds busy_timeout{5000};
};

class SqliteStore final : public DurableStore {
 public:
  // Opens or creates the file and brings its schema up to date, holding it exclusively until
  // destroyed (StoreLock). FailedPrecondition, naming the file, when another process holds it,
  // when it exists but is not a Tessera store (empty, not SQLite, another program's tables),
  // when it is read-only, or when its schema is newer than this tessera's.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   StoreOptions options = {});
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // DurableStore. Each ActiveJobReader reads on a connection of its own, so that several
  // threads read (and parse) at once, beside Load.
  Result<StoreSnapshot> Load() override;
  Result<int64_t> LastJobId() const override;
  Result<std::unique_ptr<ActiveJobReader>> OpenActiveJobReader() const override;
  std::shared_future<Status> InsertJob(StoredJob job) override;
  void UpdateJob(JobUpdate update) override;
  std::shared_future<Status> CommitJobUpdate(JobUpdate update) override;
  void AppendDecision(StoredDecision d) override;
  void AppendDecision(StoredDecision d, DecisionParts parts) override;
  void AppendAudit(AuditEntry a) override;
  std::shared_future<Status> PutPrincipal(Principal p) override;
  std::shared_future<Status> PutToken(StoredToken t) override;
  std::shared_future<Status> DeleteTokens(const std::string& principal) override;
  std::shared_future<Status> DeletePrincipal(const std::string& name) override;
  std::shared_future<Status> PutNodeFlags(NodeFlags f) override;
  std::shared_future<Status> InsertService(StoredService s) override;
  std::shared_future<Status> DeleteService(const std::string& name) override;
  void InsertCost(CostRow c) override;
  void ResumeRuns(ResumedRuns runs) override;
  void EndCost(int64_t id, TimeMs end) override;
  void Alive(TimeMs now) override;
  void EndOpenCosts(TimeMs end) override;
  void PutTaskLog(int64_t job, int64_t run, int64_t task, std::string tail) override;
  std::shared_future<Status> Flush() override;

  Result<std::vector<AuditEntry>> QueryAudit(const AuditQuery& q) override;
  Result<int64_t> CountAudit(const AuditQuery& q) override;
  Result<std::vector<StoredDecision>> QueryDecisions(int64_t job) override;
  Result<std::vector<StoredDecision>> QueryDecisionLog(const DecisionQuery& dq) override;
  Result<std::optional<std::string>> QueryTaskLog(int64_t job, int64_t run, int64_t task) override;
  Result<std::vector<CostTotal>> QueryCosts(TimeMs since, TimeMs until, TimeMs now) override;

  // Writes are committed by one writer thread in batches: one transaction and one sync each.
  uint64_t committed_writes() const override { return commits_.committed_writes(); }
  uint64_t batches() const override { return commits_.batches(); }
  bool degraded() const override { return commits_.degraded(); }
  void SetHealthLog(std::function<void(bool degraded, const std::string& message)> log) override;

 private:
  struct Statements;
  using Write = std::function<Status(Statements&)>;

  SqliteStore(StoreLock lock, std::unique_ptr<Sqlite> writer, std::unique_ptr<Sqlite> reader,
              std::unique_ptr<Statements> statements, StoreOptions options);
  // A write the caller waits for, and one nobody waits for (the engine's thread's).
  // `first`: GroupCommit::EnqueueFirst (a new job's insert).
  std::shared_future<Status> Enqueue(Write w, bool first = false);
  void Post(Write w);

  StoreLock lock_;
  std::unique_ptr<Sqlite> writer_db_;  // the writer thread's (commits_)
  std::unique_ptr<Sqlite> reader_db_;  // its statements under read_mu_
  std::unique_ptr<Statements> statements_;
  mutable Mutex read_mu_;
  GroupCommit commits_;  // last: its writer stops before the connections close
};

}  // namespace tessera
