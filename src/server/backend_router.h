// The engine's Backend port in the daemon: each run goes to the backend of its cluster (the
// cluster of its first task; a run spans one cluster) — the node agents for `local` clusters,
// the controllers for `slurm` ones, the emulated timers for the rest — as an order the
// backends share (backends/run_order.h): the daemon's job id and the run's number, the
// command, each task's node, devices and host user.
//
// It owns the backends: the emulated timers, the agent hub (whose syncs the API's threads
// serve) and the Slurm clusters (whose poller is a thread of theirs).
//
// Thread-safety: Launch and Stop run on the engine's thread (under the daemon's mutex); the
// agent hub and the Slurm clusters are thread-safe themselves.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "backends/local/agent_hub.h"
#include "backends/slurm/slurm_clusters.h"
#include "engine/ports.h"
#include "model/spec.h"
#include "sched/cell_state.h"
#include "server/emulated_backend.h"

namespace tessera {

class BackendRouter final : public Backend {
 public:
  // A run as the backends know it: the daemon's id of its job and the run's number.
  struct RunKey {
    int64_t job = 0;
    int32_t run = 0;
  };
  using KeyOf = std::function<RunKey(const JobRecord&)>;

  // The run key of a job comes from `key_of`: the daemon's job book is the one place that
  // numbers runs (restarts before this engine included), so the router asks it rather than
  // keeping a copy that a reload or a restore would have to mend.
  BackendRouter(std::unique_ptr<AgentHub> agents, KeyOf key_of)
      : agents_(std::move(agents)), key_of_(std::move(key_of)) {}

  // The configuration and the engine's cell in force (set again on every reload).
  void Use(const Spec& spec, const CellState& cell) {
    spec_ = &spec;
    cell_ = &cell;
  }
  // Slurm's clusters, when the configuration has any; null stops and frees them.
  void UseSlurm(std::unique_ptr<SlurmClusters> slurm) { slurm_ = std::move(slurm); }

  EmulatedBackend& emulated() { return emulated_; }
  AgentHub& agents() { return *agents_; }
  const AgentHub& agents() const { return *agents_; }
  // Null without slurm clusters.
  SlurmClusters* slurm() const { return slurm_.get(); }

  void Launch(const JobRecord& job, TimeMs now) override;
  void Stop(const JobRecord& job, TimeMs now) override;
  void Resize(const JobRecord& job, TimeMs now) override;

  // The backend of the run's cluster (emulated for a run with no placement).
  BackendKind KindOf(const JobRecord& job) const;
  // The run as an order to a node agent or a Slurm controller.
  RunOrder OrderOf(const JobRecord& job) const;
  // Each task's CPU, memory and GPU count, for sbatch.
  static std::vector<SlurmTaskShape> ShapesOf(const JobRecord& job);

 private:
  EmulatedBackend emulated_;
  std::unique_ptr<AgentHub> agents_;
  KeyOf key_of_;
  std::unique_ptr<SlurmClusters> slurm_;
  const Spec* spec_ = nullptr;
  const CellState* cell_ = nullptr;
};

}  // namespace tessera
