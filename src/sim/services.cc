#include "sim/services.h"

#include <cmath>

#include "sim/run_stats.h"

namespace tessera {
namespace {

constexpr Millis kForever = Millis{10} * 365 * 24 * 3600 * 1000;  // replicas run until cancelled

}  // namespace

std::optional<JobId> SimReplicas::SubmitReplica(Job job, TimeMs now) {
  JobId id = engine_.Submit(std::move(job), now);
  backend_.SetWork(id, kForever);
  return id;
}

nlohmann::ordered_json ServiceMetrics(const ServiceDriver& driver, const Engine& engine) {
  using json = nlohmann::ordered_json;
  json out = json::object();
  double requests = 0, served = 0;
  json per = json::object();
  const TimeMs last = driver.last_step();
  for (const ServiceStatus& t : driver.Statuses(engine)) {
    requests += t.requests;
    served += t.served;
    per[t.name] = {
        {"slo_attainment", t.requests > 0 ? json(Round3(t.served / t.requests)) : json(nullptr)},
        {"requests", Round3(t.requests)},
        {"served_within_slo", Round3(t.served)},
        {"replicas",
         {{"mean", last > 0 ? Round3(t.replica_ms / static_cast<double>(last)) : 0.0},
          {"max", t.max_replicas}}}};
  }
  out["slo_attainment"] =
      requests > 0 ? json(std::round(served / requests * 1e5) / 1e5) : json(nullptr);
  out["per_service"] = per;
  return out;
}

}  // namespace tessera
