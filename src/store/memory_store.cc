#include "store/memory_store.h"

#include <algorithm>

namespace tessera {
namespace {

// A write that breaks one of the store's rules (SQLite's constraints): its own fault.
Status Refused(const std::string& what) {
  return Status(StatusCode::kInternal, "store memory: " + what);
}

bool Ended(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled";
}

void ApplyUpdate(const JobUpdate& u, StoredJob& j) {
  j.state = u.state;
  j.reason = u.reason;
  j.detail = u.detail;
  j.first_start = u.first_start;
  j.finished = u.finished;
  j.restarts = u.restarts;
  j.placement = u.placement;
  j.run_start = u.run_start;
  j.kept_ms = u.kept_ms;
}

}  // namespace

template <typename Write>
Status InMemoryStore::Apply(Write&& write) {
  MutexLock lock(mu_);
  Status s = write();
  if (s.ok()) ++writes_;
  return s;
}

template <typename Write>
void InMemoryStore::Post(Write&& write) {
  Status s = Apply(std::forward<Write>(write));
  if (s.ok()) return;
  MutexLock lock(health_mu_);
  if (health_log_) health_log_(true, s.message() + "; a write was dropped");
}

uint64_t InMemoryStore::committed_writes() const {
  MutexLock lock(mu_);
  return writes_;
}

void InMemoryStore::SetHealthLog(std::function<void(bool, const std::string&)> log) {
  MutexLock lock(health_mu_);
  health_log_ = std::move(log);
}

std::shared_future<Status> InMemoryStore::InsertJob(StoredJob job) {
  return Commit([&]() REQUIRES(mu_) {
    if (jobs_.count(job.id) != 0) return Refused("job " + std::to_string(job.id) + " exists");
    if (!job.idempotency_key.empty() &&
        !idempotency_.insert({job.principal, job.idempotency_key}).second) {
      return Refused("idempotency key " + job.idempotency_key + " of " + job.principal +
                     " is taken");
    }
    const int64_t id = job.id;
    jobs_.emplace(id, std::move(job));
    return Status::Ok();
  });
}

void InMemoryStore::UpdateJob(JobUpdate update) {
  Post([&]() REQUIRES(mu_) {
    if (auto it = jobs_.find(update.id); it != jobs_.end()) ApplyUpdate(update, it->second);
    return Status::Ok();  // as an UPDATE of no row: nothing changes
  });
}

std::shared_future<Status> InMemoryStore::CommitJobUpdate(JobUpdate update) {
  return Commit([&]() REQUIRES(mu_) {
    if (auto it = jobs_.find(update.id); it != jobs_.end()) ApplyUpdate(update, it->second);
    return Status::Ok();
  });
}

void InMemoryStore::AddDecision(StoredDecision d) {
  d.seq = static_cast<int64_t>(decisions_.size()) + 1;
  decisions_.push_back(std::move(d));
}

void InMemoryStore::AppendDecision(StoredDecision d) {
  Post([&]() REQUIRES(mu_) {
    AddDecision(std::move(d));
    return Status::Ok();
  });
}

void InMemoryStore::AppendDecision(StoredDecision d, DecisionParts parts) {
  d.detail = DecisionDetail(parts);
  AppendDecision(std::move(d));
}

void InMemoryStore::AppendAudit(AuditEntry a) {
  Post([&]() REQUIRES(mu_) {
    a.seq = static_cast<int64_t>(audit_.size()) + 1;
    audit_.push_back(std::move(a));
    return Status::Ok();
  });
}

std::shared_future<Status> InMemoryStore::PutPrincipal(Principal p) {
  return Commit([&]() REQUIRES(mu_) {
    auto [it, fresh] = principals_.try_emplace(p.name, p);
    if (!fresh) {
      it->second.role = p.role;
      it->second.tenant = p.tenant;
      it->second.node = p.node;
    }
    return Status::Ok();
  });
}

std::shared_future<Status> InMemoryStore::PutToken(StoredToken t) {
  return Commit([&]() REQUIRES(mu_) {
    if (principals_.count(t.principal) == 0)
      return Refused("token of " + t.principal + ", who is no principal");
    if (tokens_.count(t.hash) != 0) return Refused("token hash exists");
    const std::string hash = t.hash;
    tokens_.emplace(hash, std::move(t));
    return Status::Ok();
  });
}

std::shared_future<Status> InMemoryStore::DeleteTokens(const std::string& principal) {
  return Commit([&]() REQUIRES(mu_) {
    std::erase_if(tokens_, [&](const auto& kv) { return kv.second.principal == principal; });
    return Status::Ok();
  });
}

std::shared_future<Status> InMemoryStore::DeletePrincipal(const std::string& name) {
  return Commit([&]() REQUIRES(mu_) {
    std::erase_if(tokens_, [&](const auto& kv) { return kv.second.principal == name; });
    principals_.erase(name);
    return Status::Ok();
  });
}

std::shared_future<Status> InMemoryStore::PutNodeFlags(NodeFlags f) {
  return Commit([&]() REQUIRES(mu_) {
    nodes_[f.node] = f;
    return Status::Ok();
  });
}

std::shared_future<Status> InMemoryStore::InsertService(StoredService v) {
  return Commit([&]() REQUIRES(mu_) {
    if (services_.count(v.name) != 0) return Refused("service " + v.name + " exists");
    const std::string name = v.name;
    services_.emplace(name, std::move(v));
    return Status::Ok();
  });
}

std::shared_future<Status> InMemoryStore::DeleteService(const std::string& name) {
  return Commit([&]() REQUIRES(mu_) {
    services_.erase(name);
    return Status::Ok();
  });
}

void InMemoryStore::InsertCost(CostRow c) {
  Post([&]() REQUIRES(mu_) {
    if (costs_.count(c.id) != 0) return Refused("cost row " + std::to_string(c.id) + " exists");
    const int64_t id = c.id;
    c.end.reset();  // a new row is open until EndCost
    costs_.emplace(id, std::move(c));
    return Status::Ok();
  });
}

void InMemoryStore::ResumeRuns(ResumedRuns r) {
  if (r.runs.empty()) return;
  Post([&]() REQUIRES(mu_) {
    // Checked whole first: the batch is one transaction, taken or refused as one.
    for (const ResumedRuns::Run& run : r.runs) {
      for (const ResumedRuns::Cost& c : run.costs) {
        if (run.decided && jobs_.count(run.job) != 0 && costs_.count(c.id) != 0)
          return Refused("cost row " + std::to_string(c.id) + " exists");
      }
    }
    for (const ResumedRuns::Run& run : r.runs) {
      auto job = jobs_.find(run.job);
      if (job != jobs_.end()) {
        StoredJob& j = job->second;
        j.state = "running";
        j.reason.clear();
        j.first_start = run.first_start;
        j.finished.reset();
        j.run_start = run.time;
        j.kept_ms = run.kept_ms;
      }
      if (!run.decided) continue;
      std::vector<std::string> nodes;
      for (uint32_t n : run.nodes)
        nodes.push_back(r.node_names.at(n));
      AddDecision({0, run.time, "start", run.job, run.reason, DecisionDetail({nodes, "", "", ""})});
      if (job == jobs_.end()) continue;  // the cost rows take the row's tenant
      for (const ResumedRuns::Cost& c : run.costs) {
        std::string model = c.model < 0 ? "cpu" : r.models.at(static_cast<size_t>(c.model));
        costs_.emplace(c.id, CostRow{c.id, run.job, job->second.tenant, r.clusters.at(c.cluster),
                                     std::move(model), run.time, std::nullopt, c.per_hour});
      }
    }
    return Status::Ok();
  });
}

void InMemoryStore::EndCost(int64_t id, TimeMs end) {
  Post([&]() REQUIRES(mu_) {
    if (auto it = costs_.find(id); it != costs_.end()) it->second.end = end;
    return Status::Ok();
  });
}

void InMemoryStore::Alive(TimeMs now) {
  Post([&]() REQUIRES(mu_) {
    alive_ = now;
    return Status::Ok();
  });
}

void InMemoryStore::EndOpenCosts(TimeMs end) {
  Post([&]() REQUIRES(mu_) {
    for (auto& [id, c] : costs_) {
      if (!c.end) c.end = std::max(c.start, end);
    }
    return Status::Ok();
  });
}

void InMemoryStore::PutTaskLog(int64_t job, int64_t run, int64_t task, std::string tail) {
  Post([&]() REQUIRES(mu_) {
    task_logs_[{job, run, task}] = std::move(tail);
    return Status::Ok();
  });
}

std::shared_future<Status> InMemoryStore::Flush() {
  return ReadyStatus(Status::Ok());
}

Result<StoreSnapshot> InMemoryStore::Load() {
  MutexLock lock(mu_);
  StoreSnapshot snap;
  snap.jobs.reserve(jobs_.size());
  TimeMs last_seen = alive_;
  for (const auto& [id, j] : jobs_) {
    StoredJob& copy = snap.jobs.emplace_back(j);
    copy.resolved.clear();  // an ActiveJobReader reads it
    last_seen = std::max(last_seen, j.submitted);
  }
  for (const auto& [name, p] : principals_)
    snap.principals.push_back(p);
  for (const auto& [hash, t] : tokens_)
    snap.tokens.push_back(t);
  for (const auto& [node, f] : nodes_)
    snap.nodes.push_back(f);
  for (const auto& [name, v] : services_)
    snap.services.push_back(v);
  snap.last_cost = costs_.empty() ? 0 : costs_.rbegin()->first;
  for (const StoredDecision& d : decisions_)
    last_seen = std::max(last_seen, d.time);
  for (const AuditEntry& a : audit_)
    last_seen = std::max(last_seen, a.time);
  snap.last_seen = last_seen;
  return snap;
}

Result<int64_t> InMemoryStore::LastJobId() const {
  MutexLock lock(mu_);
  return jobs_.empty() ? int64_t{0} : jobs_.rbegin()->first;
}

// Reads the store's own map, under its lock.
class InMemoryStore::Reader final : public ActiveJobReader {
 public:
  explicit Reader(const InMemoryStore& store) : store_(store) {}
  Status Read(int64_t from, int64_t to, const ActiveJobRow& row) override {
    MutexLock lock(store_.mu_);
    for (auto it = store_.jobs_.lower_bound(from); it != store_.jobs_.end() && it->first <= to;
         ++it) {
      const StoredJob& j = it->second;
      if (!Ended(j.state)) row(j.id, j.state, j.resolved, j.placement);
    }
    return Status::Ok();
  }

 private:
  const InMemoryStore& store_;
};

Result<std::unique_ptr<DurableStore::ActiveJobReader>> InMemoryStore::OpenActiveJobReader() const {
  return std::unique_ptr<ActiveJobReader>(std::make_unique<Reader>(*this));
}

Result<std::vector<AuditEntry>> InMemoryStore::QueryAudit(const AuditQuery& q) {
  MutexLock lock(mu_);
  std::vector<AuditEntry> out;
  for (auto it = audit_.rbegin(); it != audit_.rend() && std::ssize(out) < q.limit; ++it) {
    if (q.after != 0 && it->seq >= q.after) continue;
    if (it->time < q.since.value_or(0)) continue;
    if (!q.principal.empty() && it->principal != q.principal) continue;
    out.push_back(*it);
  }
  return out;
}

Result<int64_t> InMemoryStore::CountAudit(const AuditQuery& q) {
  MutexLock lock(mu_);
  return static_cast<int64_t>(std::count_if(audit_.begin(), audit_.end(), [&](const auto& a) {
    return a.time >= q.since.value_or(0) && (q.principal.empty() || a.principal == q.principal);
  }));
}

Result<std::vector<StoredDecision>> InMemoryStore::QueryDecisions(int64_t job) {
  MutexLock lock(mu_);
  std::vector<StoredDecision> out;
  for (const StoredDecision& d : decisions_) {
    if (d.job == job) out.push_back(d);
  }
  return out;
}

Result<std::vector<StoredDecision>> InMemoryStore::QueryDecisionLog(const DecisionQuery& q) {
  MutexLock lock(mu_);
  std::vector<StoredDecision> out;
  for (const StoredDecision& d : decisions_) {
    if (std::ssize(out) >= q.limit) break;
    if (d.seq <= q.after || d.time < q.since.value_or(0)) continue;
    if (!q.kind.empty() && d.kind != q.kind) continue;
    out.push_back(d);
  }
  return out;
}

Result<std::optional<std::string>> InMemoryStore::QueryTaskLog(int64_t job, int64_t run,
                                                               int64_t task) {
  MutexLock lock(mu_);
  auto it = task_logs_.find({job, run, task});
  if (it == task_logs_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Result<std::vector<CostTotal>> InMemoryStore::QueryCosts(TimeMs since, TimeMs until, TimeMs now) {
  MutexLock lock(mu_);
  std::map<std::tuple<std::string, std::string, std::string>, Micro> totals;
  for (const auto& [id, c] : costs_) {
    const TimeMs end = c.end.value_or(now);
    if (c.start >= until || end <= since) continue;
    const TimeMs span = std::min(end, until) - std::max(c.start, since);
    totals[{c.tenant, c.cluster, c.model}] += CostOver(c.per_hour, span);
  }
  std::vector<CostTotal> out;
  for (const auto& [key, amount] : totals)
    out.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), amount});
  return out;
}

}  // namespace tessera
