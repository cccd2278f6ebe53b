// The simulated backend: runs each job for its true work at the speed of the devices it got,
// slowed by the communication model when its gang spans a looser level of the network, and
// reports the finish through the engine's event sink. A stopped run keeps its progress up to
// its last checkpoint.
//
// Communication model (docs/simulation.md). A gang's step is compute plus communication; on a
// leaf switch the communication takes `share` of the step (training 0.30, finetune 0.20, other
// classes 0: they do not synchronise). At another level it scales with the leaf bandwidth over
// that level's bandwidth (Interconnect of the cluster). The work of a job is defined on a
// placement inside one node, so the speed factor at level L is
//     ((1 - share) + share * leaf/bw(node)) / ((1 - share) + share * leaf/bw(L)).
// A cluster that declares no bandwidths has factor 1 everywhere; single-task jobs too.
//
// Thread-safety: none; driven by the simulation's thread.
#pragma once

#include <vector>

#include "engine/event.h"
#include "engine/ports.h"
#include "model/spec.h"

namespace tessera {

// The speed factor (1 = as fast as inside one node) of a gang of `tasks` spanning `level`.
double CommunicationFactor(const Interconnect& ic, TopologyLevel level, WorkloadClass c,
                           int32_t tasks);

class SimBackend final : public Backend {
 public:
  SimBackend(const Spec& spec, const CellState& cell, EventSink& sink)
      : spec_(spec), cell_(&cell), sink_(sink) {}
  // The cell the engine places into (the engine owns its copy).
  void SetCell(const CellState* cell) { cell_ = cell; }

  // The true work of job `id` (ms on speed-1000 devices, placed inside one node).
  void SetWork(JobId id, Millis work);
  // Each run of job `id` reports its devices idle (utilization 0) `after` ms in.
  void SetIdleAfter(JobId id, Millis after);
  void Launch(const JobRecord& job, TimeMs now) override;
  void Stop(const JobRecord& job, TimeMs now) override;

  // The run's speed in milli: the slowest task's device speed times the communication factor.
  double Rate(const JobRecord& job) const;
  double remaining(JobId id) const { return remaining_[id.value()]; }

 private:
  const Spec& spec_;
  const CellState* cell_;
  EventSink& sink_;
  std::vector<double> remaining_;   // ms of work at speed 1000
  std::vector<double> rate_;        // of the current run
  std::vector<Millis> idle_after_;  // 0: busy throughout
};

}  // namespace tessera
