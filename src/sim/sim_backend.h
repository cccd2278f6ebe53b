// The simulated backend: runs each job for its true work at the speed of the devices it got,
// slowed by the communication model when its gang spans a looser level of the network, and
// reports the finish through the engine's event sink. A stopped run keeps its progress up to
// its last checkpoint.
//
// The speed of a run is RunSpeed (engine/run_speed.h, with the communication model).
//
// Thread-safety: none; driven by the simulation's thread.
#pragma once

#include <vector>

#include "engine/event.h"
#include "engine/ports.h"
#include "engine/run_speed.h"
#include "model/spec.h"

namespace tessera {

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
  // The work done at the old pace is kept; the rest goes at the resized run's.
  void Resize(const JobRecord& job, TimeMs now) override;

  // The run's speed in milli (RunSpeed).
  double Rate(const JobRecord& job) const;
  double remaining(JobId id) const { return remaining_[id.value()]; }

 private:
  const Spec& spec_;
  const CellState* cell_;
  EventSink& sink_;
  std::vector<double> remaining_;   // ms of work at speed 1000
  std::vector<double> rate_;        // of the current run
  std::vector<TimeMs> since_;       // when the current run's pace began
  std::vector<Millis> idle_after_;  // 0: busy throughout
};

}  // namespace tessera
