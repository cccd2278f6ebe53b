#include "sim/services.h"

#include <algorithm>
#include <cmath>

#include "sched/policy_match.h"
#include "sim/run_stats.h"

namespace tessera {
namespace {

constexpr double kDayMs = 24.0 * 3600.0 * 1000.0;
constexpr Millis kForever = Millis{10} * 365 * 24 * 3600 * 1000;  // replicas run until cancelled

}  // namespace

ServiceDriver::ServiceDriver(const Spec& spec, TimeMs horizon, Millis interval)
    : spec_(spec), horizon_(horizon), interval_(interval), paths_(ComputeRegionPaths(spec)) {
  totals_.resize(spec.services.size());
  for (size_t s = 0; s < spec.services.size(); ++s) {
    const Service& svc = spec.services[s];
    if (svc.user_regions.empty()) {
      groups_.push_back({s, std::nullopt, 1.0, {}});
      continue;
    }
    double sum = 0;
    for (const UserRegion& u : svc.user_regions)
      sum += static_cast<double>(u.weight);
    for (const UserRegion& u : svc.user_regions)
      groups_.push_back({s, u.region, sum > 0 ? static_cast<double>(u.weight) / sum : 0, {}});
  }
}

double ServiceDriver::Rps(const Service& s, TimeMs t) const {
  const double peak = static_cast<double>(s.load.peak_rps) / kMilliPerUnit;
  if (s.load.curve != "diurnal") return peak;
  const double hour = std::fmod(static_cast<double>(t), kDayMs) / 3.6e6;
  return peak * (0.3 + 0.7 * (1 - std::cos(2 * M_PI * (hour - 4) / 24)) / 2);
}

double ServiceDriver::Capacity(const Engine& engine, const SimBackend& backend, const Group& g,
                               const JobRecord& r) const {
  if (!r.running() || r.placements.empty()) return 0;
  const Service& s = spec_.services[g.service];
  const double speed = backend.Rate(r) / kMilliPerUnit;
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

void ServiceDriver::Step(Engine& engine, SimBackend& backend, TimeMs now) {
  // The interval just past: demand at its start, capacity of the replicas that ran in it.
  if (now > last_) {
    const double dt = static_cast<double>(now - last_);
    std::vector<size_t> running(spec_.services.size(), 0);
    for (const Group& g : groups_) {
      const Service& s = spec_.services[g.service];
      const double demand = Rps(s, last_) * g.weight;
      double capacity = 0;
      for (JobId id : g.replicas) {
        const JobRecord& r = engine.job(id);
        running[g.service] += r.running();
        capacity += Capacity(engine, backend, g, r);
      }
      Totals& t = totals_[g.service];
      t.requests += demand * dt / 1000.0;
      t.served += std::min(demand, capacity) * dt / 1000.0;
    }
    for (size_t s = 0; s < running.size(); ++s) {
      totals_[s].replica_ms += static_cast<double>(running[s]) * dt;
      totals_[s].max_replicas = std::max(totals_[s].max_replicas, running[s]);
    }
  }
  last_ = now;
  for (size_t s = 0; s < spec_.services.size(); ++s)
    Scale(engine, backend, s, now);
  next_ = now < horizon_ ? std::min(now + interval_, horizon_) : kNever;
}

void ServiceDriver::Scale(Engine& engine, SimBackend& backend, size_t service, TimeMs now) {
  const Service& s = spec_.services[service];
  std::vector<Group*> groups;
  for (Group& g : groups_)
    if (g.service == service) groups.push_back(&g);
  // Wanted replicas per group; none once the horizon is reached.
  std::vector<int32_t> want(groups.size(), 0);
  if (now < horizon_) {
    const double rpr = std::max(1e-9, static_cast<double>(s.load.rps_per_replica) / kMilliPerUnit);
    const double rps = std::max(Rps(s, now), Rps(s, now + interval_));
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
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    Group& g = *groups[i];
    // Drop replicas that ended (cancelled earlier, or failed).
    std::erase_if(g.replicas, [&](JobId id) { return IsTerminal(engine.job(id).state); });
    while (static_cast<int32_t>(g.replicas.size()) < want[i]) {
      Job job = ServiceAsJob(s);
      job.name = s.name + "/r" + std::to_string(submitted_++);
      job.task_groups.front().count = 1;
      job.gang = {};
      job.preemptible = false;
      job.labels[kServiceLabel] = s.name;
      if (g.users) {
        job.users_region = g.users;
        job.max_round_trip = std::max<Millis>(0, s.latency_slo - s.service_time);
      }
      JobId id = engine.Submit(job, now);
      backend.SetWork(id, kForever);
      g.replicas.push_back(id);
    }
    // Surplus: pending replicas first, then the newest running ones.
    size_t surplus = g.replicas.size() - static_cast<size_t>(want[i]);
    for (size_t k = g.replicas.size(); surplus > 0 && k-- > 0;) {
      if (engine.job(g.replicas[k]).running()) continue;
      engine.Cancel(g.replicas[k], now);
      g.replicas.erase(g.replicas.begin() + static_cast<std::ptrdiff_t>(k));
      --surplus;
    }
    while (surplus > 0) {
      engine.Cancel(g.replicas.back(), now);
      g.replicas.pop_back();
      --surplus;
    }
  }
}

nlohmann::ordered_json ServiceDriver::Metrics() const {
  using json = nlohmann::ordered_json;
  json out = json::object();
  double requests = 0, served = 0;
  json per = json::object();
  for (size_t s = 0; s < spec_.services.size(); ++s) {
    const Totals& t = totals_[s];
    requests += t.requests;
    served += t.served;
    per[spec_.services[s].name] = {
        {"slo_attainment", t.requests > 0 ? json(Round3(t.served / t.requests)) : json(nullptr)},
        {"requests", Round3(t.requests)},
        {"served_within_slo", Round3(t.served)},
        {"replicas",
         {{"mean", last_ > 0 ? Round3(t.replica_ms / static_cast<double>(last_)) : 0.0},
          {"max", t.max_replicas}}}};
  }
  out["slo_attainment"] =
      requests > 0 ? json(std::round(served / requests * 1e5) / 1e5) : json(nullptr);
  out["per_service"] = per;
  return out;
}

}  // namespace tessera
