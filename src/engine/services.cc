#include "engine/services.h"

#include <algorithm>
#include <cmath>

#include "engine/run_speed.h"
#include "sched/policy_match.h"

namespace tessera {
namespace {

constexpr double kDayMs = 24.0 * 3600.0 * 1000.0;

}  // namespace

ServiceDriver::ServiceDriver(const Spec& spec, TimeMs start, TimeMs horizon, Millis interval,
                             std::string separator)
    : spec_(spec),
      horizon_(horizon),
      interval_(interval),
      separator_(std::move(separator)),
      next_(start),
      last_(start),
      paths_(ComputeRegionPaths(spec)) {}

std::optional<size_t> ServiceDriver::Index(const std::string& name) const {
  for (size_t s = 0; s < services_.size(); ++s)
    if (!state_[s].removed && services_[s].name == name) return s;
  return std::nullopt;
}

bool ServiceDriver::active() const {
  if (next_ == kNever) return false;
  return std::any_of(state_.begin(), state_.end(), [](const State& s) { return !s.removed; });
}

Status ServiceDriver::Add(const Service& svc, TimeMs now) {
  if (Index(svc.name)) return AlreadyExists("service \"" + svc.name + "\" is already driven");
  const size_t s = services_.size();
  services_.push_back(svc);
  State& st = state_.emplace_back();
  st.since = now;
  if (svc.user_regions.empty()) {
    groups_.push_back({s, std::nullopt, 1.0, {}});
  } else {
    double sum = 0;
    for (const UserRegion& u : svc.user_regions)
      sum += static_cast<double>(u.weight);
    for (const UserRegion& u : svc.user_regions)
      groups_.push_back({s, u.region, sum > 0 ? static_cast<double>(u.weight) / sum : 0, {}});
  }
  // Scaled at once rather than at the next interval.
  if (next_ != kNever) next_ = std::min(next_, std::max(now, last_));
  return Status::Ok();
}

Status ServiceDriver::Remove(const std::string& name, ReplicaHost& host, TimeMs now) {
  std::optional<size_t> s = Index(name);
  if (!s) return NotFound("no service \"" + name + "\"");
  for (Group& g : groups_) {
    if (g.service != *s) continue;
    for (JobId id : g.replicas)
      host.CancelReplica(id, now);
    g.replicas.clear();
  }
  std::erase_if(groups_, [&](const Group& g) { return g.service == *s; });
  state_[*s].removed = true;
  return Status::Ok();
}

bool ServiceDriver::Adopt(JobId id, const Job& job) {
  auto label = job.labels.find(kServiceLabel);
  if (label == job.labels.end()) return false;
  std::optional<size_t> s = Index(label->second);
  if (!s) return false;
  for (Group& g : groups_) {
    if (g.service != *s || g.users != job.users_region) continue;
    g.replicas.push_back(id);
    // Numbers go on after the highest one in use.
    const std::string prefix = services_[*s].name + separator_;
    if (job.name.rfind(prefix, 0) == 0) {
      const std::string digits = job.name.substr(prefix.size());
      if (!digits.empty() && digits.size() < 18 &&
          std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        state_[*s].submitted = std::max<int64_t>(state_[*s].submitted, std::stoll(digits) + 1);
      }
    }
    return true;
  }
  return false;
}

Status ServiceDriver::ReportLoad(const std::string& name, double rps, TimeMs now) {
  std::optional<size_t> s = Index(name);
  if (!s) return NotFound("no service \"" + name + "\"");
  if (!(rps >= 0) || !std::isfinite(rps)) return InvalidArgument("rps must be a number >= 0");
  state_[*s].reported_rps = rps;
  state_[*s].reported_at = now;
  return Status::Ok();
}

double ServiceDriver::Rps(size_t service, TimeMs t, bool* reported) const {
  const State& st = state_[service];
  const bool fresh = st.reported_rps && t - st.reported_at <= 3 * interval_;
  if (reported != nullptr) *reported = fresh;
  if (fresh) return *st.reported_rps;
  const Service& s = services_[service];
  const double peak = static_cast<double>(s.load.peak_rps) / kMilliPerUnit;
  if (s.load.curve != "diurnal") return peak;
  const double hour = std::fmod(static_cast<double>(t), kDayMs) / 3.6e6;
  return peak * (0.3 + 0.7 * (1 - std::cos(2 * M_PI * (hour - 4) / 24)) / 2);
}

double ServiceDriver::Capacity(const Engine& engine, const Group& g, const JobRecord& r) const {
  if (!r.running() || r.placements.empty()) return 0;
  const Service& s = services_[g.service];
  const double speed = RunSpeed(spec_, engine.cell(), r) / kMilliPerUnit;
  if (speed <= 0) return 0;
  double round_trip = 0;
  if (g.users) {
    const RegionId at =
        spec_.clusters[engine.cell().node(r.placements.front().node).cluster].region;
    const std::optional<Millis> one_way = paths_.latency[g.users->value()][at.value()];
    if (!one_way) return 0;
    round_trip = 2.0 * static_cast<double>(*one_way);
  }
  if (round_trip + static_cast<double>(s.service_time) / speed > static_cast<double>(s.latency_slo))
    return 0;
  return static_cast<double>(s.load.rps_per_replica) / kMilliPerUnit * speed;
}

void ServiceDriver::Step(Engine& engine, ReplicaHost& host, TimeMs now) {
  // The interval just past (since each service was taken on): demand at its start, capacity
  // of the replicas that ran in it.
  if (now > last_) {
    std::vector<size_t> running(services_.size(), 0);
    for (const Group& g : groups_) {
      const TimeMs from = std::max(last_, state_[g.service].since);
      if (now <= from) continue;
      const double dt = static_cast<double>(now - from);
      const double demand = Rps(g.service, from) * g.weight;
      double capacity = 0;
      for (JobId id : g.replicas) {
        const JobRecord& r = engine.job(id);
        running[g.service] += r.running();
        capacity += Capacity(engine, g, r);
      }
      State& st = state_[g.service];
      st.requests += demand * dt / 1000.0;
      st.served += std::min(demand, capacity) * dt / 1000.0;
    }
    for (size_t s = 0; s < running.size(); ++s) {
      const TimeMs from = std::max(last_, state_[s].since);
      if (state_[s].removed || now <= from) continue;
      state_[s].replica_ms += static_cast<double>(running[s]) * static_cast<double>(now - from);
      state_[s].max_replicas = std::max(state_[s].max_replicas, running[s]);
    }
  }
  last_ = now;
  for (size_t s = 0; s < services_.size(); ++s)
    if (!state_[s].removed) Scale(engine, host, s, now);
  next_ = now < horizon_ ? std::min(now + interval_, horizon_) : kNever;
}

void ServiceDriver::Scale(Engine& engine, ReplicaHost& host, size_t service, TimeMs now) {
  const Service& s = services_[service];
  State& st = state_[service];
  std::vector<Group*> groups;
  for (Group& g : groups_)
    if (g.service == service) groups.push_back(&g);
  // Wanted replicas per group; none once the horizon is reached.
  std::vector<int32_t> want(groups.size(), 0);
  st.rps = Rps(service, now, &st.reported);
  st.wanted = 0;
  if (now < horizon_) {
    const double rpr = std::max(1e-9, static_cast<double>(s.load.rps_per_replica) / kMilliPerUnit);
    const double rps = st.reported ? st.rps : std::max(st.rps, Rps(service, now + interval_));
    int32_t total = 0;
    for (size_t i = 0; i < groups.size(); ++i) {
      const double share = groups[i]->weight;
      const int32_t floor = static_cast<int32_t>(std::ceil(s.min_replicas * share - 1e-9));
      want[i] = std::max(floor, static_cast<int32_t>(std::ceil(rps * share / rpr - 1e-9)));
      total += want[i];
    }
    // Over the maximum: take from the smallest weights first.
    std::vector<size_t> order(groups.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return groups[a]->weight < groups[b]->weight; });
    for (size_t i = 0; total > s.max_replicas && i < order.size(); ++i) {
      const int32_t cut = std::min(want[order[i]], total - s.max_replicas);
      want[order[i]] -= cut;
      total -= cut;
    }
    st.wanted = total;
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    Group& g = *groups[i];
    // Drop replicas that ended (cancelled earlier, or failed).
    std::erase_if(g.replicas, [&](JobId id) { return IsTerminal(engine.job(id).state); });
    while (static_cast<int32_t>(g.replicas.size()) < want[i]) {
      Job job = ServiceAsJob(s);
      job.name = s.name + separator_ + std::to_string(st.submitted++);
      job.task_groups.front().count = 1;
      job.gang = {};
      job.preemptible = false;
      job.labels[kServiceLabel] = s.name;
      if (g.users) {
        job.users_region = g.users;
        job.max_round_trip = std::max<Millis>(0, s.latency_slo - s.service_time);
      }
      std::optional<JobId> id = host.SubmitReplica(std::move(job), now);
      if (!id) break;
      g.replicas.push_back(*id);
    }
    // Surplus: pending replicas first, then the newest running ones.
    size_t surplus = g.replicas.size() - std::min(g.replicas.size(), static_cast<size_t>(want[i]));
    for (size_t k = g.replicas.size(); surplus > 0 && k-- > 0;) {
      if (engine.job(g.replicas[k]).running()) continue;
      host.CancelReplica(g.replicas[k], now);
      g.replicas.erase(g.replicas.begin() + static_cast<std::ptrdiff_t>(k));
      --surplus;
    }
    while (surplus > 0) {
      host.CancelReplica(g.replicas.back(), now);
      g.replicas.pop_back();
      --surplus;
    }
  }
}

std::optional<ServiceStatus> ServiceDriver::Find(const std::string& name,
                                                 const Engine& engine) const {
  std::optional<size_t> s = Index(name);
  if (!s) return std::nullopt;
  const State& st = state_[*s];
  ServiceStatus out;
  out.name = name;
  out.rps = st.rps;
  out.reported = st.reported;
  out.wanted = st.wanted;
  for (const Group& g : groups_) {
    if (g.service != *s) continue;
    for (JobId id : g.replicas) {
      const JobRecord& r = engine.job(id);
      if (IsTerminal(r.state)) continue;
      out.replicas.push_back(id);
      (r.running() ? out.running : out.pending) += 1;
    }
  }
  std::sort(out.replicas.begin(), out.replicas.end());
  out.requests = st.requests;
  out.served = st.served;
  out.replica_ms = st.replica_ms;
  out.max_replicas = st.max_replicas;
  out.since = st.since;
  return out;
}

std::vector<ServiceStatus> ServiceDriver::Statuses(const Engine& engine) const {
  std::vector<ServiceStatus> out;
  for (size_t s = 0; s < services_.size(); ++s)
    if (!state_[s].removed) out.push_back(*Find(services_[s].name, engine));
  return out;
}

}  // namespace tessera
