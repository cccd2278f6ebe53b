// The FGD experiment (../shared/data/FGD-PROTOCOL.md): the 1,213 GPU nodes of Alibaba's
// openb trace, a pod list shuffled and resampled to `tune` x the cluster's GPU capacity,
// pods arriving one at a time and placed at once or failed, nothing departing. After each
// pod, the GPU allocation ratio, the fragmented GPUs and the fragmentation rate are recorded
// against the arrived demand, then reduced to curves over 0..130% as the paper's scripts do.
//
// Tessera keeps the protocol's order of random draws (discard one, shuffle, tune, skip ten,
// node permutation, then the policy's own) on its own seeded generator, so medians, not
// individual seeds, are comparable with the published results.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/spec.h"
#include "sched/cell_state.h"
#include "sched/fragmentation.h"
#include "sched/scorer.h"
#include "sim/openb_pods.h"
#include "sim/pod_mix.h"

namespace tessera {

inline constexpr int kFgdCurvePoints = 131;  // 0..130 % of capacity

struct FgdPodOutcome {
  uint32_t pod = 0;              // index into FgdExperiment::pods()
  std::optional<uint32_t> node;  // CellState node index; nullopt = failed
  std::vector<DeviceUse> devices;
};

struct FgdRun {
  std::string policy;
  uint64_t seed = 0;
  // Indexed 0..130; NaN where no record falls near that arrived demand.
  std::vector<double> allo, frag, frag_ratio;
  std::vector<FgdPodOutcome> outcomes;  // in arrival order
  size_t failed = 0;
};

class FgdExperiment {
 public:
  // With `mix`, the pod list is resampled (sim/pod_mix.h) with `mix_seed` before anything else.
  static Result<FgdExperiment> Load(const std::string& node_csv, const std::string& pod_csv,
                                    const PodMix* mix = nullptr, uint64_t mix_seed = 1);
  static Result<FgdExperiment> FromData(Spec fleet, std::vector<TracePod> pods);

  const Spec& fleet() const { return fleet_; }
  const std::vector<TracePod>& pods() const { return pods_; }
  const TargetWorkload& workload() const { return workload_; }
  const CellState& cell() const { return cell_; }
  int64_t total_gpus() const { return total_gpus_; }

  // One run of `scorer` (created from the registry with this experiment's workload).
  FgdRun Run(Scorer& scorer, uint64_t seed, double tune) const;

  // The arrival order of one seed (indices into pods()), and the node ranks; exposed for
  // tests.
  std::vector<uint32_t> ArrivalOrder(Rng& rng, double tune) const;

 private:
  FgdExperiment() = default;
  TaskShape ShapeOf(const TracePod& p) const;

  Spec fleet_;
  std::vector<TracePod> pods_;  // sorted by name
  std::vector<TaskShape> shapes_;
  TargetWorkload workload_;
  CellState cell_;
  int64_t total_gpus_ = 0;
};

// The typical pods of a trace (protocol §3): the most popular shapes covering 95% of pods.
TargetWorkload TypicalWorkload(const std::vector<TaskShape>& shapes);

// Python's round(x, digits) (correctly rounded, ties to even on exact ties).
double PyRound(double x, int digits);
// numpy's pairwise sum divided by the count (pandas' mean).
double PandasMean(const std::vector<double>& v);
// Reduces per-record (arrived %, value) to the 0..130 curve (protocol §8).
std::vector<double> DiscreteCurve(const std::vector<double>& arrive_ratio,
                                  const std::vector<double>& value, bool round_mean);

}  // namespace tessera
