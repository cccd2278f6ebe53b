// Reloading the configuration while the daemon runs (POST /v1/policies/validate and /reload):
// the files are read again and checked; a valid configuration replaces the one in force, the
// engine is rebuilt on it, waiting jobs are queued again in submission order and running jobs
// go on where they are. Services are taken on again on the new configuration and their
// replicas rejoin them (their load history and reported load start afresh).
#include <algorithm>
#include <iterator>
#include <set>

#include "config/job_json.h"
#include "config/loader.h"
#include "server/daemon.h"

namespace tessera {

using json = nlohmann::ordered_json;

namespace {

// The names in `after` and not in `before` (added), and the other way round (removed).
template <typename T, typename Key>
ReloadReport::Change Diff(std::string section, const std::vector<T>& before,
                          const std::vector<T>& after, Key key) {
  std::set<std::string> a, b;
  for (const T& x : before)
    a.insert(key(x));
  for (const T& x : after)
    b.insert(key(x));
  ReloadReport::Change out{std::move(section), {}, {}};
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(out.added));
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out.removed));
  return out;
}

}  // namespace

Result<ReloadReport::Jobs> Daemon::SwapEngine(std::shared_ptr<const Spec> spec) {
  TakeArrivals();  // into the engine they were parsed for; moved below with the rest
  auto core = MakeCore(spec);
  if (!core.ok()) return core.status();
  std::unique_ptr<Core> old = std::move(core_);
  const Engine& was = *old->engine;
  const Spec& was_spec = *old->spec;
  Install(std::move(*core));
  ApplyFlags();
  DriveServices();
  const ResolvedJobReader reader(*spec);
  const TimeMs now = clock_.Now();
  book_.ForgetEngine();
  ReloadReport::Jobs counts;
  std::vector<JobId> orphans;
  for (StoredJob& row : book_.rows()) {
    const std::optional<JobId> eid = book_.engine_id(row.id);
    if (!eid) continue;
    const JobRecord& rec = was.job(*eid);
    book_.Unbind(row.id);
    if (IsTerminal(rec.state)) continue;
    book_.restart_base(row.id) += rec.restarts;  // the new engine counts from 0
    Result<Job> job = reader.Read(ResolvedJobJson(was_spec, rec.job).dump());
    if (!job.ok()) {
      row.state = "failed";
      row.reason = "invalid";
      row.detail = "no longer valid after the reload: " + job.status().message();
      row.finished = now;
      accounting_.Close(row.id, now);
      store_->UpdateJob(JobUpdate::Of(row));
      ++counts.failed;
      continue;
    }
    JobId id = Enqueue(row.id, std::move(*job), now);
    Rejoin(id, orphans);
    if (!rec.running()) {
      ++counts.queued;
      continue;
    }
    // The run goes on where it is, with the progress it has made until now.
    Status adopted = Status::Ok();
    std::vector<Placement> placements;
    for (const Placement& p : rec.placements) {
      auto node = core_->node_index.find(was.cell().node_name(p.node));
      if (node == core_->node_index.end()) {
        adopted = NotFound("node " + was.cell().node_name(p.node) + " left the fleet");
        break;
      }
      Placement q = p;
      q.node = node->second;
      placements.push_back(q);
    }
    if (adopted.ok()) {
      // An elastic gang short of tasks progressed at its members' share of the pace.
      const double share = MembersShare(rec.placements.size(), rec.task_count);
      Millis kept =
          rec.kept_ms + static_cast<Millis>(
                            static_cast<double>(std::max<Millis>(0, now - rec.last_start)) * share);
      adopted = engine_->Adopt(id, std::move(placements), rec.first_start.value_or(now), kept);
    }
    if (adopted.ok()) {
      ++counts.resumed;
    } else {
      backends_->agents().Stop(row.id, book_.restart_base(row.id),
                               0);  // an agent's task of the old run
      ++book_.restart_base(row.id);
      accounting_.Close(row.id, now);
      json note = {{"note", "the run could not go on where it was: " + adopted.message()}};
      store_->AppendDecision({0, now, "requeue", row.id, "reload", note.dump()});
      ++counts.requeued;
    }
  }
  ApplyAgents();
  for (JobId id : orphans)
    engine_->Cancel(id, now);  // replicas of a service the new configuration does not admit
  // The old engine, then the configuration it was built on, go when the drive of the old
  // engine has ended (this runs within one of its passes).
  retired_ = std::move(old);
  return counts;
}

Result<ReloadReport> Daemon::Reload(const Caller& caller, bool apply) {
  if (!caller.MayAdministerFleet()) {
    return PermissionDenied("only admins and operators validate or reload the configuration");
  }
  LoadResult loaded = LoadSpecFiles(options_.config_paths);
  ReloadReport out;
  out.ok = loaded.spec.has_value();
  if (!out.ok) {
    out.errors = std::move(loaded.diagnostics);
    return out;
  }
  std::shared_ptr<const Spec> before = spec();
  const Spec& next = *loaded.spec;
  auto name = [](const auto& x) { return x.name; };
  out.changes = {
      Diff("policies", before->policies, next.policies, name),
      Diff("priorityClasses", before->priority_classes, next.priority_classes, name),
      Diff("tenants", before->tenants, next.tenants, [](const Tenant& t) { return t.path; }),
      Diff("clusters", before->clusters, next.clusters, name),
      Diff("nodes", before->nodes, next.nodes, name)};
  if (!apply) return out;
  // What the reload changes is written by the engine behind it: on a store that fails now, the
  // reload waits (nothing is changed) rather than be applied and not recorded.
  if (store_->degraded()) return StoreFails("the reload is not applied");

  auto spec = std::make_shared<const Spec>(std::move(*loaded.spec));
  ViewLock lock(*this);
  // The engine's thread builds the new engine, moves every job onto it and drives it from its
  // next pass, which schedules at once.
  std::optional<Result<ReloadReport::Jobs>> swapped;
  if (!host_.Post(lock, [&]() REQUIRES(mu_) { swapped = SwapEngine(spec); })) {
    return Unavailable("the daemon is stopping");
  }
  if (!swapped->ok()) return swapped->status();
  out.jobs = **swapped;
  lock.unlock();
  // Answered once what it changed is durable (the store keeps and retries it if not).
  if (Status s = store_->Flush().get(); !s.ok()) {
    return Unavailable(
        "the reload is applied, but the store has not recorded it yet (it retries): " +
        s.message());
  }
  out.applied = true;
  return out;
}

}  // namespace tessera
