// A durable store that keeps everything in memory (DESIGN.md §3: the store tests use): every
// write is applied at once, under one mutex, and every future is resolved before it is
// returned. It keeps the SQLite store's rules — a taken id, idempotency key, token hash or
// service name is refused (Internal), a token needs its principal, a principal keeps its
// creation time — so that the conformance tests hold it and SqliteStore to one contract, and
// the daemon's parts run on it without a file. Nothing survives the object.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>

#include "common/mutex.h"
#include "store/durable_store.h"

namespace tessera {

class InMemoryStore final : public DurableStore {
 public:
  InMemoryStore() = default;
  InMemoryStore(const InMemoryStore&) = delete;
  InMemoryStore& operator=(const InMemoryStore&) = delete;

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

  // Each write is a batch of its own; the store never fails.
  uint64_t committed_writes() const override;
  uint64_t batches() const override { return committed_writes(); }
  bool degraded() const override { return false; }
  void SetHealthLog(std::function<void(bool degraded, const std::string& message)> log) override;

 private:
  class Reader;
  // Applies one write under mu_, counting it when it takes.
  template <typename Write>
  Status Apply(Write&& write);
  // A write with a future: resolved at once.
  template <typename Write>
  std::shared_future<Status> Commit(Write&& write) {
    return ReadyStatus(Apply(std::forward<Write>(write)));
  }
  // A write nobody waits for: when it is wrong in itself it is lost, and the health log says so.
  template <typename Write>
  void Post(Write&& write);
  void AddDecision(StoredDecision d) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<int64_t, StoredJob> jobs_ GUARDED_BY(mu_);
  std::set<std::pair<std::string, std::string>> idempotency_ GUARDED_BY(mu_);  // (principal, key)
  std::vector<StoredDecision> decisions_ GUARDED_BY(mu_);                      // seq = index + 1
  std::vector<AuditEntry> audit_ GUARDED_BY(mu_);                              // seq = index + 1
  std::map<std::string, Principal> principals_ GUARDED_BY(mu_);
  std::map<std::string, StoredToken> tokens_ GUARDED_BY(mu_);  // by hash
  std::map<std::string, NodeFlags> nodes_ GUARDED_BY(mu_);
  std::map<std::string, StoredService> services_ GUARDED_BY(mu_);
  std::map<int64_t, CostRow> costs_ GUARDED_BY(mu_);
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::string> task_logs_ GUARDED_BY(mu_);
  TimeMs alive_ GUARDED_BY(mu_) = 0;
  uint64_t writes_ GUARDED_BY(mu_) = 0;
  Mutex health_mu_;
  std::function<void(bool, const std::string&)> health_log_ GUARDED_BY(health_mu_);
};

}  // namespace tessera
