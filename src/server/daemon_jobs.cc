// The jobs' side of the API: submission (idempotent), names and references, the job view and
// its pages, cancellation, explanations and the decision log.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "config/job_json.h"
#include "config/loader.h"
#include "server/daemon.h"
#include "server/daemon_internal.h"
#include "server/placement_view.h"

namespace tessera {

using json = nlohmann::ordered_json;

namespace {

bool IsNumber(const std::string& s) {
  return !s.empty() && s.size() < 19 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether a retried submission is the same request as the first: the same document (a JSON
// body re-indented, or with its keys in another order, is the same), else the same bytes.
bool SameRequestBody(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto x = nlohmann::json::parse(a, nullptr, false);
  auto y = nlohmann::json::parse(b, nullptr, false);
  return !x.is_discarded() && !y.is_discarded() && x == y;
}

}  // namespace

Result<SubmitOutcome> Daemon::Submit(const Caller& caller, const std::string& body,
                                     const std::string& idempotency_key) {
  if (caller.role != Role::kAdmin && caller.role != Role::kMember) {
    return PermissionDenied("the " + std::string(RoleName(caller.role)) +
                            " role may not submit jobs");
  }
  // Parsed outside the lock against the configuration in force; a reload before the job
  // reaches the engine is handled there.
  std::shared_ptr<const Spec> spec = this->spec();
  JobLoad parsed = LoadJobText(*spec, {"body", body});
  if (!parsed.job) {
    return InvalidArgument(parsed.diagnostics.ToString())
        .WithField(parsed.diagnostics.Sorted().front().path);
  }
  const std::string tenant = spec->tenants[parsed.job->tenant.value()].path;
  const std::string resolved = ResolvedJobJson(*spec, *parsed.job).dump();
  if (!caller.MayChange(tenant)) {
    return PermissionDenied("principal \"" + caller.name + "\" may not submit to tenant \"" +
                            tenant + "\"");
  }
  std::shared_future<Status> durable;
  StoredJob row;
  {
    auto lock = LockView();
    if (!idempotency_key.empty()) {
      auto it = by_idempotency_.find(IdempotencyKey(caller.name, idempotency_key));
      if (it != by_idempotency_.end()) {
        const StoredJob& earlier = jobs_[it->second - 1];
        if (!SameRequestBody(earlier.body, body)) {
          return FailedPrecondition("Idempotency-Key \"" + idempotency_key +
                                    "\" was used for a different request (job " +
                                    std::to_string(earlier.id) + ")");
        }
        return SubmitOutcome{earlier, true};
      }
    }
    auto same = by_name_.find(parsed.job->name);
    if (same != by_name_.end()) {
      for (int64_t id : same->second) {
        const StoredJob& other = jobs_[id - 1];
        if (other.tenant == tenant && !Terminal(other.state)) {
          return AlreadyExists("tenant \"" + tenant + "\" already has an active job named \"" +
                               other.name + "\" (id " + std::to_string(id) + ")");
        }
      }
    }
    row.name = parsed.job->name;
    row.tenant = tenant;
    row.body = body;
    row.idempotency_key = idempotency_key;
    row.principal = caller.name;
    row.job_class = std::string(WorkloadClassName(parsed.job->job_class));
    row.resolved = resolved;
    row.submitted = clock_.Now();
    durable = AddRow(row);
  }
  Status s = durable.get();
  auto lock = LockView();
  if (!s.ok()) {
    // Not durable, so not accepted: the row stays as a failed submission nobody sees again.
    StoredJob& failed = jobs_[row.id - 1];
    failed.state = "failed";
    failed.reason = "store";
    failed.detail = s.message();
    ++hidden_rows_;
    if (!idempotency_key.empty())
      by_idempotency_.erase(IdempotencyKey(caller.name, idempotency_key));
    return Unavailable("the store did not accept the job: " + s.message());
  }
  if (spec != spec_) {
    // The configuration was reloaded meanwhile: the job's ids are the old one's.
    Result<Job> again = ResolvedJobReader(*spec_).Read(resolved);
    if (!again.ok()) {
      StoredJob& failed = jobs_[row.id - 1];
      failed.state = "failed";
      failed.reason = "invalid";
      failed.detail = "no longer valid after a reload: " + again.status().message();
      failed.finished = clock_.Now();
      store_->UpdateJob(JobUpdate::Of(failed));
      return SubmitOutcome{failed, false};
    }
    parsed.job = std::move(*again);
  }
  inbox_.push_back({row.id, std::move(*parsed.job)});
  Poke();
  return SubmitOutcome{View(row.id), false};
}

std::shared_future<Status> Daemon::AddRow(StoredJob& row) {
  row.id = static_cast<int64_t>(jobs_.size()) + 1;
  row.state = "pending";
  row.reason = std::string(PendingReasonCode(PendingReason::kNew));
  jobs_.push_back(row);
  jobs_.back().resolved = std::string();  // in the store only: read on restart
  engine_id_.emplace_back();
  restart_base_.push_back(0);
  placed_generation_.push_back(kNoPlacement);
  by_name_[row.name].push_back(row.id);
  if (!row.idempotency_key.empty()) {
    by_idempotency_[IdempotencyKey(row.principal, row.idempotency_key)] = row.id;
  }
  return store_->InsertJob(row);
}

JobId Daemon::Enqueue(int64_t id, Job job, TimeMs at) {
  JobId eid = engine_->Submit(std::move(job), at);
  if (by_engine_.size() <= eid.value()) by_engine_.resize(eid.value() + 1, 0);
  by_engine_[eid.value()] = id;
  engine_id_[id - 1] = eid;
  return eid;
}

Result<int64_t> Daemon::Resolve(const Caller& caller, const std::string& ref,
                                const std::string& tenant) const {
  auto hidden = [&] { return NotFound("no job \"" + ref + "\""); };
  if (IsNumber(ref)) {
    int64_t id = std::stoll(ref);
    if (id < 1 || id > static_cast<int64_t>(jobs_.size())) return hidden();
    const StoredJob& j = jobs_[id - 1];
    // Another tenant's job is reported as missing, not forbidden: its existence is theirs.
    if (!caller.MaySee(j.tenant) || j.reason == "store") return hidden();
    return id;
  }
  auto it = by_name_.find(ref);
  if (it == by_name_.end()) return hidden();
  int64_t found = 0;
  std::string found_tenant;
  for (auto id = it->second.rbegin(); id != it->second.rend(); ++id) {
    const StoredJob& j = jobs_[*id - 1];
    if (!caller.MaySee(j.tenant) || j.reason == "store") continue;
    if (!tenant.empty() && j.tenant != tenant) continue;
    if (found == 0) {
      found = *id;
      found_tenant = j.tenant;
    } else if (j.tenant != found_tenant) {
      return FailedPrecondition("job name \"" + ref + "\" is used by tenants \"" + found_tenant +
                                "\" and \"" + j.tenant + "\"; give the tenant or the id");
    }
  }
  if (found == 0) return hidden();
  return found;
}

Result<StoredJob> Daemon::GetJob(const Caller& caller, const std::string& ref,
                                 const std::string& tenant) const {
  auto lock = LockView();
  auto id = Resolve(caller, ref, tenant);
  if (!id.ok()) return id.status();
  return View(*id);
}

StoredJob Daemon::View(int64_t id) const {
  StoredJob row = jobs_[id - 1];
  const std::optional<JobId>& eid = engine_id_[id - 1];
  if (!eid) return row;
  // Why a job waits changes every cycle without a transition: read it from the engine.
  const JobRecord& rec = engine_->job(*eid);
  if (rec.state == JobState::kPending || rec.state == JobState::kAdmitted) {
    row.reason = std::string(PendingReasonCode(rec.reason));
    row.detail = rec.detail;
  }
  return row;
}

JobPage Daemon::ListJobs(const Caller& caller, const JobFilter& f) const {
  auto lock = LockView();
  JobPage page;
  int limit = std::clamp(f.limit, 1, 1000);
  // Newest first: the page holds the newest matches below the cursor (an id; 0 = from the
  // newest); every match counts in the total, so that a client can say "N of M shown".
  for (size_t i = jobs_.size(); i-- > 0;) {
    const StoredJob& j = jobs_[i];
    if (j.reason == "store" || !caller.MaySee(j.tenant)) continue;
    if (!f.tenant.empty() && !WithinTenant(j.tenant, f.tenant)) continue;
    if (!f.name.empty() && j.name != f.name) continue;
    if (f.state == "active" ? Terminal(j.state) : !f.state.empty() && j.state != f.state) continue;
    if (!f.job_class.empty() && j.job_class != f.job_class) continue;
    ++page.total;
    if (f.after > 0 && j.id >= f.after) continue;
    if (static_cast<int>(page.jobs.size()) == limit) {
      page.next = page.jobs.back().id;
      continue;
    }
    page.jobs.push_back(View(j.id));
  }
  return page;
}

namespace {

Status AlreadyEnded(const StoredJob& row) {
  return FailedPrecondition("job " + std::to_string(row.id) + " has already ended (" + row.state +
                            ")");
}

}  // namespace

Result<StoredJob> Daemon::Cancel(const Caller& caller, const std::string& ref,
                                 const std::string& tenant) {
  int64_t id = 0;
  std::shared_future<Status> durable;
  {
    auto lock = LockView();
    auto found = Resolve(caller, ref, tenant);
    if (!found.ok()) return found.status();
    id = *found;
    const StoredJob& row = jobs_[id - 1];
    if (!caller.MayChange(row.tenant)) {
      return PermissionDenied("principal \"" + caller.name + "\" may not cancel jobs of tenant \"" +
                              row.tenant + "\"");
    }
    if (Terminal(row.state)) return AlreadyEnded(row);
    if (!engine_id_[id - 1] && !Inboxed(id)) {
      return Unavailable("job " + std::to_string(id) + " is still being stored");
    }
    // Durable before it is done or answered: a store that fails leaves the job as it was (503),
    // and a restart after the answer finds it cancelled. The engine's record follows.
    StoredJob cancelled = row;
    cancelled.state = "cancelled";
    cancelled.reason.clear();
    cancelled.finished = clock_.Now();
    cancelled.run_start.reset();
    durable = store_->CommitJobUpdate(JobUpdate::Of(cancelled));
  }
  Status s = durable.get();
  auto lock = LockView();
  if (!s.ok()) return Unavailable("the store did not record the cancel: " + s.message());
  if (const StoredJob& row = jobs_[id - 1]; Terminal(row.state)) {
    // It ended while the cancel was written: the store is told how, again, after it.
    store_->UpdateJob(JobUpdate::Of(row));
    return AlreadyEnded(row);
  }
  // The engine's thread takes it (after the submission, when that still waited in the inbox)
  // and schedules at once; the answer shows what that changed.
  const bool ran = OnEngineThread(lock, [this, id] {
    if (engine_id_[id - 1]) engine_->Cancel(*engine_id_[id - 1], clock_.Now());
  });
  if (!ran) return Unavailable("the daemon is stopping");
  ApplyChanges();
  return jobs_[id - 1];
}

Result<json> Daemon::Explain(const Caller& caller, const std::string& ref,
                             const std::string& tenant) {
  StoredJob row;
  {
    auto lock = LockView();
    auto id = Resolve(caller, ref, tenant);
    if (!id.ok()) return id.status();
    row = View(*id);
  }
  json out = {{"id", row.id}, {"name", row.name}, {"tenant", row.tenant}, {"state", row.state}};
  if (row.state == "pending" || row.state == "admitted") {
    out["why_pending"] = {{"code", row.reason}, {"detail", row.detail}};
  } else if (row.state == "running" || row.state == "placed") {
    out["why_here"] = row.detail;
    out["placement"] = PlacementView(row.placement);
  }
  // Decisions are written behind the engine: read after everything queued so far.
  if (Status s = store_->Flush().get(); !s.ok()) return s;
  auto log = store_->QueryDecisions(row.id);
  if (!log.ok()) return log.status();
  json decisions = json::array();
  for (const StoredDecision& d : *log) {
    json line = {{"time_ms", d.time}, {"kind", d.kind}, {"reason", d.reason}};
    auto detail = json::parse(d.detail, nullptr, false);
    if (!detail.is_discarded() && !detail.empty()) line["detail"] = detail;
    decisions.push_back(line);
  }
  out["decisions"] = decisions;
  return out;
}

Result<json> Daemon::Decisions(const Caller& caller, DecisionQuery q) const {
  const int want = std::clamp(q.limit, 1, 1000);
  q.limit = 1000;
  // Decisions are written behind the engine: read after everything queued so far.
  if (Status s = store_->Flush().get(); !s.ok()) return s;
  json items = json::array();
  // Reads on until the page is full: rows of jobs the caller may not see are skipped.
  for (int reads = 0; reads < 20; ++reads) {
    auto rows = store_->QueryDecisionLog(q);
    if (!rows.ok()) return rows.status();
    auto lock = LockView();
    for (const StoredDecision& d : *rows) {
      q.after = d.seq;
      if (d.job < 1 || d.job > static_cast<int64_t>(jobs_.size())) continue;
      const StoredJob& j = jobs_[d.job - 1];
      if (!caller.MaySee(j.tenant)) continue;
      json line = {{"seq", d.seq},
                   {"time_ms", d.time},
                   {"kind", d.kind},
                   {"job", {{"id", j.id}, {"name", j.name}, {"tenant", j.tenant}}},
                   {"reason", d.reason}};
      auto detail = json::parse(d.detail, nullptr, false);
      if (!detail.is_discarded() && !detail.empty()) line["detail"] = detail;
      items.push_back(std::move(line));
      if (static_cast<int>(items.size()) == want) return json{{"items", items}, {"next", d.seq}};
    }
    if (static_cast<int>(rows->size()) < q.limit) return json{{"items", items}};
  }
  return json{{"items", items}, {"next", q.after}};
}

}  // namespace tessera
