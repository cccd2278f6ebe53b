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
    ViewLock lock(*this);
    if (const StoredJob* earlier =
            idempotency_key.empty() ? nullptr : book_.Keyed(caller.name, idempotency_key)) {
      if (!SameRequestBody(earlier->body, body)) {
        return FailedPrecondition("Idempotency-Key \"" + idempotency_key +
                                  "\" was used for a different request (job " +
                                  std::to_string(earlier->id) + ")");
      }
      return SubmitOutcome{*earlier, true};
    }
    if (const StoredJob* other = book_.ActiveNamed(parsed.job->name, tenant)) {
      return AlreadyExists("tenant \"" + tenant + "\" already has an active job named \"" +
                           other->name + "\" (id " + std::to_string(other->id) + ")");
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
  ViewLock lock(*this);
  if (!s.ok()) {
    // Not durable, so not accepted: the row stays as a failed submission nobody sees again.
    book_.Refuse(row.id, s.message());
    return Unavailable("the store did not accept the job: " + s.message());
  }
  if (spec != spec_) {
    // The configuration was reloaded meanwhile: the job's ids are the old one's.
    Result<Job> again = ResolvedJobReader(*spec_).Read(resolved);
    if (!again.ok()) {
      StoredJob& failed = book_.row(row.id);
      failed.state = "failed";
      failed.reason = "invalid";
      failed.detail = "no longer valid after a reload: " + again.status().message();
      failed.finished = clock_.Now();
      store_->UpdateJob(JobUpdate::Of(failed));
      return SubmitOutcome{failed, false};
    }
    parsed.job = std::move(*again);
  }
  host_.Submit(row.id, std::move(*parsed.job));
  return SubmitOutcome{View(row.id), false};
}

std::shared_future<Status> Daemon::AddRow(StoredJob& row) {
  book_.Add(row);
  return store_->InsertJob(row);
}

JobId Daemon::Enqueue(int64_t id, Job job, TimeMs at) {
  JobId eid = engine_->Submit(std::move(job), at);
  book_.Bind(id, eid);
  return eid;
}

Result<StoredJob> Daemon::GetJob(const Caller& caller, const std::string& ref,
                                 const std::string& tenant) const {
  ViewLock lock(*this);
  auto id = book_.Resolve(caller, ref, tenant);
  if (!id.ok()) return id.status();
  return View(*id);
}

StoredJob Daemon::View(int64_t id) const {
  StoredJob row = book_.row(id);
  const std::optional<JobId>& eid = book_.engine_id(id);
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
  ViewLock lock(*this);
  JobBook::Page found = book_.Find(caller, f);
  JobPage page;
  page.next = found.next;
  page.total = found.total;
  page.jobs.reserve(found.ids.size());
  for (int64_t id : found.ids)
    page.jobs.push_back(View(id));
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
    ViewLock lock(*this);
    auto found = book_.Resolve(caller, ref, tenant);
    if (!found.ok()) return found.status();
    id = *found;
    const StoredJob& row = book_.row(id);
    if (!caller.MayChange(row.tenant)) {
      return PermissionDenied("principal \"" + caller.name + "\" may not cancel jobs of tenant \"" +
                              row.tenant + "\"");
    }
    if (Terminal(row.state)) return AlreadyEnded(row);
    if (!book_.engine_id(id) && !host_.Inboxed(id)) {
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
  ViewLock lock(*this);
  if (!s.ok()) return Unavailable("the store did not record the cancel: " + s.message());
  if (const StoredJob& row = book_.row(id); Terminal(row.state)) {
    // It ended while the cancel was written: the store is told how, again, after it.
    store_->UpdateJob(JobUpdate::Of(row));
    return AlreadyEnded(row);
  }
  // The engine's thread takes it (after the submission, when that still waited in the inbox)
  // and schedules at once; the answer shows what that changed.
  const bool ran = host_.Post(lock, [this, id]() REQUIRES(mu_) {
    if (const auto& eid = book_.engine_id(id)) engine_->Cancel(*eid, clock_.Now());
  });
  if (!ran) return Unavailable("the daemon is stopping");
  ApplyChanges();
  return book_.row(id);
}

Result<JobExplanation> Daemon::Explain(const Caller& caller, const std::string& ref,
                                       const std::string& tenant) {
  JobExplanation out;
  {
    ViewLock lock(*this);
    auto id = book_.Resolve(caller, ref, tenant);
    if (!id.ok()) return id.status();
    out.job = View(*id);
    if (const auto& eid = book_.engine_id(*id)) out.deadline = engine_->Outlook(*eid, clock_.Now());
    out.policy = core_->choice.policy;
    out.placement = core_->choice.placement;
  }
  // Decisions are written behind the engine: read after everything queued so far.
  if (Status s = store_->Flush().get(); !s.ok()) return s;
  auto log = store_->QueryDecisions(out.job.id);
  if (!log.ok()) return log.status();
  out.decisions = std::move(*log);
  return out;
}

Result<DecisionPage> Daemon::Decisions(const Caller& caller, DecisionQuery q) const {
  const int want = std::clamp(q.limit, 1, 1000);
  q.limit = 1000;
  // Decisions are written behind the engine: read after everything queued so far.
  if (Status s = store_->Flush().get(); !s.ok()) return s;
  DecisionPage page;
  // Reads on until the page is full: rows of jobs the caller may not see are skipped.
  for (int reads = 0; reads < 20; ++reads) {
    auto rows = store_->QueryDecisionLog(q);
    if (!rows.ok()) return rows.status();
    ViewLock lock(*this);
    for (StoredDecision& d : *rows) {
      q.after = d.seq;
      if (!book_.contains(d.job)) continue;
      const StoredJob& j = book_.row(d.job);
      if (!caller.MaySee(j.tenant)) continue;
      page.items.push_back({std::move(d), {j.id, j.name, j.tenant}});
      if (static_cast<int>(page.items.size()) == want) {
        page.next = q.after;
        return page;
      }
    }
    if (static_cast<int>(rows->size()) < q.limit) return page;
  }
  page.next = q.after;
  return page;
}

}  // namespace tessera
