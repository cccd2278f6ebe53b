// The engine's Backend port in the daemon: each run goes to the backend of its cluster (the
// cluster of its first task; a run spans one cluster) — the node agents for `local` clusters,
// the controllers for `slurm` ones, the emulated timers for the rest — as an order the
// backends share (backends/run_order.h): the daemon's job id and the run's number, the
// command, each task's node, devices and host user.
//
// Thread-safety: none; the engine's thread calls it (under the daemon's mutex).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "backends/local/agent_hub.h"
#include "backends/slurm/slurm_clusters.h"
#include "engine/ports.h"
#include "model/spec.h"
#include "sched/cell_state.h"

namespace tessera {

class BackendRouter final : public Backend {
 public:
  // A run as the backends know it: the daemon's id of its job and the run's number.
  struct RunKey {
    int64_t job = 0;
    int32_t run = 0;
  };
  using KeyOf = std::function<RunKey(const JobRecord&)>;

  BackendRouter(AgentHub& agents, Backend& emulated, KeyOf key_of)
      : agents_(agents), emulated_(emulated), key_of_(std::move(key_of)) {}

  // The configuration and the engine's cell in force (set again on every reload).
  void Use(const Spec& spec, const CellState& cell) {
    spec_ = &spec;
    cell_ = &cell;
  }
  // Slurm's clusters, when the configuration has any.
  void UseSlurm(SlurmClusters* slurm) { slurm_ = slurm; }

  void Launch(const JobRecord& job, TimeMs now) override;
  void Stop(const JobRecord& job, TimeMs now) override;

  // The backend of the run's cluster (emulated for a run with no placement).
  BackendKind KindOf(const JobRecord& job) const;
  // The run as an order to a node agent or a Slurm controller.
  RunOrder OrderOf(const JobRecord& job) const;
  // Each task's CPU, memory and GPU count, for sbatch.
  static std::vector<SlurmTaskShape> ShapesOf(const JobRecord& job);

 private:
  AgentHub& agents_;
  Backend& emulated_;
  KeyOf key_of_;
  SlurmClusters* slurm_ = nullptr;
  const Spec* spec_ = nullptr;
  const CellState* cell_ = nullptr;
};

}  // namespace tessera
