#include "store/faulty_store.h"

namespace tessera {

FaultyStore::FaultyStore(std::unique_ptr<DurableStore> inner) : inner_(std::move(inner)) {}

FaultyStore::~FaultyStore() {
  MutexLock lock(mu_);
  if (!kept_.empty()) {
    Tell(true, "store faulty: " + failing_ + "; shutting down, " + std::to_string(kept_.size()) +
                   " writes were not stored");
  }
}

void FaultyStore::Fail(const std::string& why) {
  bool was_failing;
  {
    MutexLock lock(mu_);
    was_failing = !failing_.empty();
    failing_ = why.empty() ? "failing" : why;
  }
  if (!was_failing) Tell(true, "store faulty: " + why);
}

void FaultyStore::Heal() {
  bool was_failing;
  {
    // Under mu_, so that a write that comes meanwhile waits and stays in order.
    MutexLock lock(mu_);
    was_failing = !failing_.empty();
    for (Write& w : kept_)
      w(*inner_);
    kept_.clear();
    failing_.clear();
  }
  if (was_failing) Tell(false, "");
}

bool FaultyStore::degraded() const {
  MutexLock lock(mu_);
  return !failing_.empty();
}

size_t FaultyStore::kept() const {
  MutexLock lock(mu_);
  return kept_.size();
}

void FaultyStore::SetHealthLog(std::function<void(bool, const std::string&)> log) {
  MutexLock lock(health_mu_);
  health_log_ = std::move(log);
}

void FaultyStore::Tell(bool degraded, const std::string& message) {
  MutexLock lock(health_mu_);
  if (health_log_) health_log_(degraded, message);
}

std::shared_future<Status> FaultyStore::Commit(
    const std::function<std::shared_future<Status>()>& write) {
  MutexLock lock(mu_);
  if (!failing_.empty()) return ReadyStatus(Unavailable("store faulty: " + failing_));
  return write();
}

void FaultyStore::Post(Write write) {
  MutexLock lock(mu_);
  if (failing_.empty() && kept_.empty()) {
    write(*inner_);
  } else {
    kept_.push_back(std::move(write));
  }
}

std::shared_future<Status> FaultyStore::InsertJob(StoredJob job) {
  return Commit([&] { return inner_->InsertJob(std::move(job)); });
}
void FaultyStore::UpdateJob(JobUpdate u) {
  Post([u = std::move(u)](DurableStore& s) { s.UpdateJob(u); });
}
std::shared_future<Status> FaultyStore::CommitJobUpdate(JobUpdate u) {
  return Commit([&] { return inner_->CommitJobUpdate(std::move(u)); });
}
void FaultyStore::AppendDecision(StoredDecision d) {
  Post([d = std::move(d)](DurableStore& s) { s.AppendDecision(d); });
}
void FaultyStore::AppendDecision(StoredDecision d, DecisionParts parts) {
  Post([d = std::move(d), parts = std::move(parts)](DurableStore& s) {
    s.AppendDecision(d, parts);
  });
}
void FaultyStore::AppendAudit(AuditEntry a) {
  Post([a = std::move(a)](DurableStore& s) { s.AppendAudit(a); });
}
std::shared_future<Status> FaultyStore::PutPrincipal(Principal p) {
  return Commit([&] { return inner_->PutPrincipal(std::move(p)); });
}
std::shared_future<Status> FaultyStore::PutToken(StoredToken t) {
  return Commit([&] { return inner_->PutToken(std::move(t)); });
}
std::shared_future<Status> FaultyStore::DeleteTokens(const std::string& principal) {
  return Commit([&] { return inner_->DeleteTokens(principal); });
}
std::shared_future<Status> FaultyStore::DeletePrincipal(const std::string& name) {
  return Commit([&] { return inner_->DeletePrincipal(name); });
}
std::shared_future<Status> FaultyStore::PutNodeFlags(NodeFlags f) {
  return Commit([&] { return inner_->PutNodeFlags(std::move(f)); });
}
std::shared_future<Status> FaultyStore::InsertService(StoredService v) {
  return Commit([&] { return inner_->InsertService(std::move(v)); });
}
std::shared_future<Status> FaultyStore::DeleteService(const std::string& name) {
  return Commit([&] { return inner_->DeleteService(name); });
}
void FaultyStore::InsertCost(CostRow c) {
  Post([c = std::move(c)](DurableStore& s) { s.InsertCost(c); });
}
void FaultyStore::ResumeRuns(ResumedRuns runs) {
  Post([r = std::move(runs)](DurableStore& s) { s.ResumeRuns(r); });
}
void FaultyStore::EndCost(int64_t id, TimeMs end) {
  Post([id, end](DurableStore& s) { s.EndCost(id, end); });
}
void FaultyStore::Alive(TimeMs now) {
  Post([now](DurableStore& s) { s.Alive(now); });
}
void FaultyStore::EndOpenCosts(TimeMs end) {
  Post([end](DurableStore& s) { s.EndOpenCosts(end); });
}
void FaultyStore::PutTaskLog(int64_t job, int64_t run, int64_t task, std::string tail) {
  Post([job, run, task, tail = std::move(tail)](DurableStore& s) {
    s.PutTaskLog(job, run, task, tail);
  });
}
std::shared_future<Status> FaultyStore::Flush() {
  return Commit([&] { return inner_->Flush(); });
}

}  // namespace tessera
