// A durable store that fails on demand (tests): it wraps another and, between Fail and Heal,
// behaves as a store whose disk is full or whose database is gone — writes someone waits for
// fail (Unavailable) and change nothing, writes nobody waits for are kept in order and handed
// on when it heals, degraded() is true and the health log is told once each way. Reads go
// through: the inner store still answers what it holds.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include "common/mutex.h"
#include "store/durable_store.h"

namespace tessera {

class FaultyStore final : public DurableStore {
 public:
  explicit FaultyStore(std::unique_ptr<DurableStore> inner);
  // What is still kept is lost, and the health log says so.
  ~FaultyStore() override;

  // From now on writes fail with `why` (the message says "store faulty: " and it).
  void Fail(const std::string& why);
  // Hands on what was kept, in order; writes take again.
  void Heal();
  DurableStore& inner() { return *inner_; }

  Result<StoreSnapshot> Load() override { return inner_->Load(); }
  Result<int64_t> LastJobId() const override { return inner_->LastJobId(); }
  Result<std::unique_ptr<ActiveJobReader>> OpenActiveJobReader() const override {
    return inner_->OpenActiveJobReader();
  }
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

  Result<std::vector<AuditEntry>> QueryAudit(const AuditQuery& q) override {
    return inner_->QueryAudit(q);
  }
  Result<int64_t> CountAudit(const AuditQuery& q) override { return inner_->CountAudit(q); }
  Result<std::vector<StoredDecision>> QueryDecisions(int64_t job) override {
    return inner_->QueryDecisions(job);
  }
  Result<std::vector<StoredDecision>> QueryDecisionLog(const DecisionQuery& dq) override {
    return inner_->QueryDecisionLog(dq);
  }
  Result<std::optional<std::string>> QueryTaskLog(int64_t job, int64_t run, int64_t task) override {
    return inner_->QueryTaskLog(job, run, task);
  }
  Result<std::vector<CostTotal>> QueryCosts(TimeMs since, TimeMs until, TimeMs now) override {
    return inner_->QueryCosts(since, until, now);
  }

  uint64_t committed_writes() const override { return inner_->committed_writes(); }
  uint64_t batches() const override { return inner_->batches(); }
  bool degraded() const override;
  void SetHealthLog(std::function<void(bool degraded, const std::string& message)> log) override;
  // Writes kept while failing, not yet handed on.
  size_t kept() const;

 private:
  using Write = std::function<void(DurableStore&)>;
  // A write with a future: the inner store's, or a failure while failing.
  std::shared_future<Status> Commit(const std::function<std::shared_future<Status>()>& write);
  // A write nobody waits for: handed on, or kept while failing.
  void Post(Write write);
  void Tell(bool degraded, const std::string& message);

  std::unique_ptr<DurableStore> inner_;
  mutable Mutex mu_;
  std::string failing_ GUARDED_BY(mu_);  // why; "" = healthy
  std::deque<Write> kept_ GUARDED_BY(mu_);
  Mutex health_mu_;
  std::function<void(bool, const std::string&)> health_log_ GUARDED_BY(health_mu_);
};

}  // namespace tessera
