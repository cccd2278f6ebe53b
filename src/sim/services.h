// Services (inference) in the simulator (docs/simulation.md#services): each service's replicas
// are jobs of the engine, scaled every interval to the load of a request curve per user
// region, and measured against the latency SLO.
//
// Load. A service's requests per second follow its curve: `diurnal` is
//     peakRps x (0.3 + 0.7 x (1 - cos(2 pi (hour - 4) / 24)) / 2)
// (a trough of 30% at 04:00, the peak at 16:00, hours of the simulation clock), `flat` is
// peakRps. Each user region sends its weight's share.
//
// Scaling. Every interval (5 minutes) each (service, user region) group wants
// ceil(max(rps now, rps at the next step) / rpsPerReplica) replicas — at least its weight's share
// of replicas.min, together at most replicas.max (largest weights first). New replicas are
// submitted (priority and tenant of the service, not preemptible, one task of `replica`,
// restricted to clusters whose network round trip from the users fits the SLO less the
// service time); surplus ones are cancelled, pending ones first, then the newest. Scale-up
// may preempt batch work as the preemption rules allow; scale-down returns the devices.
//
// SLO attainment. Over each interval a group's requests are served within the SLO up to the
// capacity of its running replicas that meet it: rpsPerReplica x the replica's speed on its
// device, where round trip + serviceTime / speed <= latencySLO. Attainment = requests served
// within the SLO / requests, over every group and interval.
//
// Thread-safety: none; driven by the simulation's thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "sched/fleet_view.h"
#include "sim/sim_backend.h"

namespace tessera {

class ServiceDriver {
 public:
  // Drives the spec's services from time 0 until `horizon`, when every replica is cancelled.
  ServiceDriver(const Spec& spec, TimeMs horizon, Millis interval = 5 * 60 * 1000);

  bool active() const { return !groups_.empty() && next_ != kNever; }
  TimeMs next_time() const { return next_; }
  // Accounts the interval just past and scales every group to its load at `now`.
  void Step(Engine& engine, SimBackend& backend, TimeMs now);

  // services.{slo_attainment, per_service.NAME.{slo_attainment, requests, served_within_slo,
  // replicas.{mean, max}}}
  nlohmann::ordered_json Metrics() const;

 private:
  struct Group {
    size_t service = 0;
    std::optional<RegionId> users;
    double weight = 1;            // share of the service's requests
    std::vector<JobId> replicas;  // submission order
  };
  struct Totals {
    double requests = 0, served = 0;
    double replica_ms = 0;  // running replicas x time
    size_t max_replicas = 0;
  };
  double Rps(const Service& s, TimeMs t) const;
  // Whether a running replica meets its group's SLO, and its capacity (rps) if so.
  double Capacity(const Engine& engine, const SimBackend& backend, const Group& g,
                  const JobRecord& r) const;
  void Scale(Engine& engine, SimBackend& backend, size_t service, TimeMs now);

  const Spec& spec_;
  TimeMs horizon_;
  Millis interval_;
  TimeMs next_ = 0, last_ = 0;
  RegionPaths paths_;
  std::vector<Group> groups_;
  std::vector<Totals> totals_;  // by service
  int64_t submitted_ = 0;
};

}  // namespace tessera
