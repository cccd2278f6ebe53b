// Services in the simulator (docs/simulation.md#services): the engine's ServiceDriver
// (engine/services.h) with replicas submitted straight to the engine and run by the simulated
// backend until cancelled, and the run's service metrics.
//
// Thread-safety: none; driven by the simulation's thread.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/services.h"
#include "sim/sim_backend.h"

namespace tessera {

class SimReplicas final : public ReplicaHost {
 public:
  SimReplicas(Engine& engine, SimBackend& backend) : engine_(engine), backend_(backend) {}
  std::optional<JobId> SubmitReplica(Job job, TimeMs now) override;
  void CancelReplica(JobId id, TimeMs now) override { engine_.Cancel(id, now); }

 private:
  Engine& engine_;
  SimBackend& backend_;
};

// services.{slo_attainment, per_service.NAME.{slo_attainment, requests, served_within_slo,
// replicas.{mean, max}}}; the mean is over the time from 0 to the driver's last step.
nlohmann::ordered_json ServiceMetrics(const ServiceDriver& driver, const Engine& engine);

}  // namespace tessera
