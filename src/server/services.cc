// Services through the daemon (docs/serve.md#services): submitted, listed, stopped and told
// their load through the API; their replicas are jobs the engine's service driver asks for.
#include <cmath>

#include "config/job_json.h"
#include "config/loader.h"
#include "server/daemon.h"

namespace tessera {

using json = nlohmann::ordered_json;

namespace {

// The service `name` as the caller may see it: another tenant's is missing (like its jobs),
// and so is one whose insert or delete is committing. With `change` ("delete services", ...)
// the caller must also be allowed to change the service's tenant.
template <typename Entries>
auto ServiceFor(Entries& services, const Caller& caller, const std::string& name,
                const char* change = nullptr) -> Result<decltype(&services.begin()->second)> {
  auto it = services.find(name);
  if (it == services.end() || !it->second.durable || !caller.MaySee(it->second.stored.tenant)) {
    return NotFound("no service \"" + name + "\"");
  }
  if (change != nullptr && !caller.MayChange(it->second.stored.tenant)) {
    return PermissionDenied("principal \"" + caller.name + "\" may not " + change +
                            " of tenant \"" + it->second.stored.tenant + "\"");
  }
  return &it->second;
}

}  // namespace

void Daemon::DriveServices() {
  const TimeMs now = clock_.Now();
  for (auto& [name, e] : services_) {
    if (!e.durable) continue;
    ServiceLoad parsed = LoadServiceText(*spec_, {"service " + name, e.stored.body});
    e.error = parsed.service ? "" : parsed.diagnostics.ToString();
    if (parsed.service) (void)core_->services->Add(*parsed.service, now);  // names are unique
  }
}

void Daemon::Rejoin(JobId id, std::vector<JobId>& orphans) {
  const Job& job = engine_->job(id).job;
  if (!job.labels.count(kServiceLabel)) return;
  if (!core_->services->Adopt(id, job)) orphans.push_back(id);
}

std::optional<JobId> Daemon::SubmitReplica(Job job, TimeMs now) {
  auto service = services_.find(job.labels[kServiceLabel]);
  if (service == services_.end()) return std::nullopt;
  StoredJob row;
  row.name = job.name;
  row.tenant = spec_->tenants[job.tenant.value()].path;
  row.resolved = ResolvedJobJson(*spec_, job).dump();
  row.body = row.resolved;  // made by the daemon, not submitted: its resolved form
  row.principal = service->second.stored.principal;
  row.job_class = std::string(WorkloadClassName(job.job_class));
  row.submitted = now;
  // Not waited for: the engine's thread must not block on the disk. A replica lost in a
  // crash before its commit is replaced by the next scaling step.
  (void)AddRow(row);
  return Enqueue(row.id, std::move(job), now);
}

ServiceView Daemon::ServiceViewOf(const ServiceEntry& e) const {
  const StoredService& stored = e.stored;
  ServiceView v;
  v.name = stored.name;
  v.tenant = stored.tenant;
  v.principal = stored.principal;
  v.created = stored.created;
  v.error = e.error;
  v.body = stored.body;
  for (const Service& s : core_->services->services()) {
    if (s.name != stored.name) continue;
    v.min_replicas = s.min_replicas;
    v.max_replicas = s.max_replicas;
    v.latency_slo = s.latency_slo;
  }
  if (std::optional<ServiceStatus> st = core_->services->Find(stored.name, *engine_)) {
    v.wanted = st->wanted;
    v.running = st->running;
    v.pending = st->pending;
    for (JobId id : st->replicas)
      if (book_.Knows(id)) v.replica_jobs.push_back(book_.IdOf(id));
    v.rps = st->rps;
    v.reported = st->reported;
    v.requests = st->requests;
    v.served = st->served;
  }
  return v;
}

Result<ServiceOutcome> Daemon::SubmitService(const Caller& caller, const std::string& body) {
  if (caller.role != Role::kAdmin && caller.role != Role::kMember) {
    return PermissionDenied("the " + std::string(RoleName(caller.role)) +
                            " role may not submit services");
  }
  std::shared_ptr<const Spec> spec = this->spec();
  ServiceLoad parsed = LoadServiceText(*spec, {"body", body});
  if (!parsed.service) {
    return InvalidArgument(parsed.diagnostics.ToString())
        .WithField(parsed.diagnostics.Sorted().front().path);
  }
  const std::string name = parsed.service->name;
  const std::string tenant = spec->tenants[parsed.service->tenant.value()].path;
  if (!caller.MayChange(tenant)) {
    return PermissionDenied("principal \"" + caller.name + "\" may not submit to tenant \"" +
                            tenant + "\"");
  }
  std::shared_future<Status> durable;
  {
    ViewLock lock(*this);
    auto it = services_.find(name);
    if (it != services_.end()) {
      // Another tenant's service of that name is not revealed beyond the conflict.
      if (it->second.durable && it->second.stored.body == body && caller.MaySee(tenant)) {
        return ServiceOutcome{ServiceViewOf(it->second), true};
      }
      return AlreadyExists("a service named \"" + name +
                           "\" exists; delete it first to replace it");
    }
    StoredService v{name, tenant, body, caller.name, clock_.Now()};
    services_[name] = {v, "", false};
    durable = store_->InsertService(std::move(v));
  }
  Status s = durable.get();
  ViewLock lock(*this);
  ServiceEntry& e = services_[name];
  if (!s.ok()) {
    services_.erase(name);
    return Unavailable("the store did not accept the service: " + s.message());
  }
  e.durable = true;
  // The engine's thread adds it to the driver and schedules at once.
  const bool ran =
      host_.Post(lock, [this, name, body, spec, service = *parsed.service]() REQUIRES(mu_) mutable {
        auto it = services_.find(name);
        if (it == services_.end()) return;  // deleted meanwhile
        if (spec != spec_) {
          // Reloaded meanwhile: the service's ids are the old configuration's.
          ServiceLoad again = LoadServiceText(*spec_, {"service " + name, body});
          it->second.error = again.service ? "" : again.diagnostics.ToString();
          if (!again.service) return;
          service = *again.service;
        }
        (void)core_->services->Add(service, clock_.Now());  // the name was reserved above
      });
  if (!ran) return Unavailable("the daemon is stopping");
  ApplyChanges();
  auto it = services_.find(name);
  if (it == services_.end()) return NotFound("service \"" + name + "\" was deleted meanwhile");
  return ServiceOutcome{ServiceViewOf(it->second), false};
}

std::vector<ServiceView> Daemon::ListServices(const Caller& caller) const {
  ViewLock lock(*this);
  std::vector<ServiceView> items;
  for (const auto& [name, e] : services_)
    if (e.durable && caller.MaySee(e.stored.tenant)) items.push_back(ServiceViewOf(e));
  return items;
}

Result<ServiceView> Daemon::GetService(const Caller& caller, const std::string& name) const {
  ViewLock lock(*this);
  auto e = ServiceFor(services_, caller, name);
  if (!e.ok()) return e.status();
  return ServiceViewOf(**e);
}

Result<ServiceView> Daemon::DeleteService(const Caller& caller, const std::string& name) {
  std::shared_future<Status> durable;
  {
    ViewLock lock(*this);
    auto e = ServiceFor(services_, caller, name, "delete services");
    if (!e.ok()) return e.status();
    (*e)->durable = false;  // hidden while the delete commits
    durable = store_->DeleteService(name);
  }
  Status s = durable.get();
  ViewLock lock(*this);
  auto it = services_.find(name);
  if (!s.ok()) {
    it->second.durable = true;
    return Unavailable("the store did not record the deletion: " + s.message());
  }
  ServiceView out = ServiceViewOf(it->second);
  services_.erase(it);
  // The engine's thread stops driving it (an invalid one is not driven) and cancels its
  // replicas at once.
  const bool ran = host_.Post(lock, [this, name]() REQUIRES(mu_) {
    (void)core_->services->Remove(name, replica_host(), clock_.Now());
  });
  if (!ran) return Unavailable("the daemon is stopping");
  out.deleted = true;
  return out;
}

Result<ServiceView> Daemon::ReportLoad(const Caller& caller, const std::string& name,
                                       const std::string& body) {
  json in = json::parse(body, nullptr, false);
  auto bad = [&](const std::string& f, const std::string& message) {
    return InvalidArgument(message).WithField(f);
  };
  if (!in.is_object()) return bad("", "the body must be a JSON object {\"rps\": number}");
  for (const auto& [key, value] : in.items())
    if (key != "rps") return bad(key, "unknown field \"" + key + "\"; expected rps");
  if (!in.contains("rps")) return bad("rps", "missing field \"rps\"");
  if (!in["rps"].is_number() || in["rps"].get<double>() < 0) {
    return bad("rps", "rps must be a number >= 0, got " + in["rps"].dump());
  }
  if (store_->degraded()) return StoreFails("the load is not taken");
  ViewLock lock(*this);
  auto e = ServiceFor(services_, caller, name, "report the load of services");
  if (!e.ok()) return e.status();
  if (!(*e)->error.empty()) {
    return FailedPrecondition("service \"" + name + "\" is not running: " + (*e)->error);
  }
  // The engine's thread takes the load and scales to it at once, not at the next interval.
  Status taken = Status::Ok();
  const bool ran =
      host_.Post(lock, [this, name, rps = in["rps"].get<double>(), &taken]() REQUIRES(mu_) {
        const TimeMs now = clock_.Now();
        taken = core_->services->ReportLoad(name, rps, now);
        if (taken.ok()) core_->services->Step(*engine_, replica_host(), now);
      });
  if (!ran) return Unavailable("the daemon is stopping");
  if (!taken.ok()) return taken;
  ApplyChanges();
  auto it = services_.find(name);
  if (it == services_.end()) return NotFound("service \"" + name + "\" was deleted meanwhile");
  ServiceView out = ServiceViewOf(it->second);
  lock.unlock();
  // Answered once the replicas it started or stopped are durable.
  if (Status s = store_->Flush().get(); !s.ok()) {
    return Unavailable(
        "the load is taken, but the store has not recorded its replicas yet (it "
        "retries): " +
        s.message());
  }
  return out;
}

}  // namespace tessera
