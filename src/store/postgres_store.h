// The daemon's durable store on PostgreSQL (DESIGN.md §3, Store): the same rows, schema
// versions and contract as SqliteStore, for a control plane of several daemons on one
// database.
//
// Writes are committed by one writer thread in batches, one transaction each (GroupCommit);
// PostgreSQL acknowledges a commit once its WAL is flushed (synchronous_commit), and so the
// store acknowledges a write. Reads use a connection of their own; a restart's reads of the
// active jobs each open one, so that several run at once.
//
// The lease. One daemon leads the database at a time: it holds the lease row (table
// tessera_lease) with a term, a number that grows with every new leader, and renews it every
// third of the lease on a connection of its own. Every batch first locks the lease row and
// checks that the term is still its own (the fencing token): a daemon deposed while it could
// not reach the database finds, when it reaches it again, that its late writes are refused by
// the database itself (FailedPrecondition, "deposed"), never mixed into the new leader's. Lease
// times are the database's clock, never the daemons'. Open takes the lease or says who holds
// it; the daemons that wait as standbys are the HA control plane's (docs/operations.md).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "store/durable_store.h"
#include "store/group_commit.h"
#include "store/postgres.h"
#include "store/rows.h"

namespace tessera {

// Who holds a database's lease, and until when (the database's clock, ms since the epoch).
struct LeaseHolder {
  std::string holder;
  std::string address;  // where it answers (Advertise); "" until it says
  int64_t term = 0;
  int64_t expires_ms = 0;
  bool expired = false;
};

struct PostgresOptions {
  // As StoreOptions's: how long writes nobody waits for wait for company.
  std::chrono::milliseconds background_delay{10};
  // How long the lease lasts unrenewed; it is renewed every third of it.
  std::chrono::milliseconds lease{3000};
  // Who this daemon is, as the lease row and pg_stat_activity name it ("" = "tessera pid N on
  // HOST").
  std::string holder;
  // Null: Open fails when another daemon holds the lease. Else Open waits as a standby until
  // the lease is free (its holder stopped, or stopped renewing it), trying every sixth of the
  // lease, and calls this with the holder at each try (an empty one while the database cannot
  // be reached: a standby waits for it too); false ends the wait.
  std::function<bool(const LeaseHolder& holder)> standby;
};

class PostgresStore final : public DurableStore {
 public:
  // Connects to `url`, brings the schema up to date and takes the lease. Unavailable, naming
  // the database, when it cannot be reached; FailedPrecondition when another daemon holds the
  // lease (named, with when it expires), when the database holds another program's tables, or
  // when its schema is newer than this tessera's; InvalidArgument for a malformed URL.
  static Result<std::unique_ptr<PostgresStore>> Open(const std::string& url,
                                                     PostgresOptions options = {});
  ~PostgresStore() override;
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  // The lease's holder now, read on a connection of its own; nullopt when nobody ever led.
  static Result<std::optional<LeaseHolder>> ReadLease(const std::string& url);

  // This daemon's term, and whether it still holds the lease: renewed within the lease's
  // length (by the steady clock here) and not taken by another daemon.
  int64_t term() const { return term_; }
  bool leading() const;
  // Whether another daemon took the lease: this one's term is over for good.
  bool deposed() const { return deposed_; }
  // Writes where this daemon answers (its API's URL) into the lease row, for the standbys to
  // name to clients.
  Status Advertise(const std::string& address);

  // DurableStore.
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

  uint64_t committed_writes() const override { return commits_.committed_writes(); }
  uint64_t batches() const override { return commits_.batches(); }
  bool degraded() const override { return commits_.degraded(); }
  void SetHealthLog(std::function<void(bool degraded, const std::string& message)> log) override;

 private:
  struct Batch;
  using Write = std::function<Status(Postgres&)>;

  PostgresStore(std::string url, PostgresOptions options, int64_t term,
                std::unique_ptr<Postgres> writer, std::unique_ptr<Postgres> reader,
                std::unique_ptr<Postgres> lease);
  // `first`: GroupCommit::EnqueueFirst (a new job's insert).
  std::shared_future<Status> Enqueue(Write w, bool first = false);
  void Post(Write w);
  // The writer's transaction, one pipeline a batch: Begin reconnects a lost connection, then
  // sends BEGIN, the fence (the term) and the batch's mark (its number in tessera_commit);
  // WriteAt sends a write, tagged with its index in the batch; Commit sends COMMIT and reads
  // every answer, naming the write that failed. CommittedAnyway, after a commit that lost its
  // connection: whether the mark is the batch's (nullopt: the database cannot be reached).
  Status Begin();
  Status WriteAt(const Write& w);
  Status Commit(size_t& failed_at);
  void Rollback();
  std::optional<bool> CommittedAnyway();
  // The lease's thread: renews it every third of its length until stopped or deposed.
  void RenewLoop();
  void Tell(bool degraded, const std::string& message);

  const std::string url_;
  const PostgresOptions options_;
  const int64_t term_;
  std::unique_ptr<Postgres> writer_db_;  // the writer thread's (commits_)
  std::unique_ptr<Postgres> reader_db_;  // under read_mu_
  std::unique_ptr<Postgres> lease_db_;   // the renewing thread's
  mutable Mutex read_mu_;
  int batch_write_ = -1;      // the writer thread's: the index of the write being sent
  int64_t batch_ = 0;         // the writer thread's: the number of the batch begun last
  bool commit_sent_ = false;  // the writer thread's: its COMMIT went out

  Mutex lease_mu_;
  CondVar lease_cv_;
  bool stopping_ GUARDED_BY(lease_mu_) = false;
  std::atomic<int64_t> renewed_ns_{0};  // steady clock: when the last good renewal was sent
  std::atomic<bool> deposed_{false};
  Mutex health_mu_;
  std::function<void(bool, const std::string&)> health_log_ GUARDED_BY(health_mu_);

  GroupCommit commits_;  // its writer stops before the connections close
  std::thread renewer_;  // last: started once everything above is
};

}  // namespace tessera
