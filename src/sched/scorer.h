// Scorers: the named placement policies. Each scores a feasible node for a task (higher
// wins; ties go to the lower node rank) and chooses the devices on it.
//
// Contract: Score and PickDevices may depend only on what CellState's equivalence classes
// compare (the node's static type, free CPU and memory, per-device free shares and health,
// kinds of tasks placed) and on the shape, so one evaluation per class serves every member.
//
// Plug-ins are registered by name in a ScorerRegistry filled by the composition root
// (RegisterBuiltinScorers is called by the CLI and the server, never by the scheduler core).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/rng.h"
#include "common/status.h"
#include "model/scheduler.h"
#include "sched/cell_state.h"
#include "sched/task_shape.h"

namespace tessera {

class TargetWorkload;

class Scorer {
 public:
  virtual ~Scorer() = default;
  virtual std::string_view name() const = 0;

  // Scores a node that passed the filters and writes the devices it would use to `pick`
  // (empty for CPU-only tasks).
  virtual double Score(const CellState& cell, uint32_t node, const TaskShape& shape,
                       std::vector<DeviceUse>* pick) const = 0;

  // True for policies that choose uniformly among the feasible nodes (Random): the placer
  // then draws the node and asks PickRandomDevices for the devices.
  virtual bool uniform() const { return false; }
  virtual void PickRandomDevices(const CellState& cell, uint32_t node, const TaskShape& shape,
                                 Rng& rng, std::vector<DeviceUse>* pick) const;

  // For a score that depends on the cell as a whole as well as on the node (tessera's model
  // pressure): that cell-wide state, quantised, as a number that changes when it does. The
  // score must read only the quantised state, so that a cached score stays exact; the placer
  // drops its cached scores when the epoch changes. Default: scores depend on the node only.
  virtual uint64_t Epoch(const CellState& cell) const {
    (void)cell;
    return 0;
  }

  // Called after a placement chosen by this scorer is committed (stateful policies).
  virtual void OnCommit(const CellState& cell, const Placement& p) { (void)cell, (void)p; }

  // The parts of a score, for "why here" explanations. Default: the score itself.
  virtual std::vector<std::pair<std::string, double>> Explain(const CellState& cell, uint32_t node,
                                                              const TaskShape& shape) const;
};

// What a scorer may need from its composition root.
struct ScorerContext {
  const TargetWorkload* workload = nullptr;  // FGD's target workload; null = none known
};

using ScorerFactory = std::function<Result<std::unique_ptr<Scorer>>(const ScorerContext&)>;

class ScorerRegistry {
 public:
  void Register(std::string name, ScorerFactory factory);
  Result<std::unique_ptr<Scorer>> Create(std::string_view name, const ScorerContext& ctx) const;
  std::vector<std::string> Names() const;
  bool Has(std::string_view name) const { return factories_.count(std::string(name)) > 0; }

 private:
  std::map<std::string, ScorerFactory> factories_;
};

// The placement policies shipped with Tessera: random, first-fit, best-fit, dot-product,
// gpu-packing, gpu-clustering, fgd, and tessera (the default).
// (BuiltinScorerNames, model/scheduler.h, names them for the configuration's checks.)
void RegisterBuiltinScorers(ScorerRegistry& registry);

// Device choice helpers shared by the policies.
bool DeviceEligible(const CellState& cell, const DeviceSlot& d, const TaskShape& shape);
// The first `count` eligible whole free devices in index order.
void PickWholeDevices(const CellState& cell, uint32_t node, const TaskShape& shape,
                      std::vector<DeviceUse>* pick);
// For a share: the eligible device with the least free share that still fits, lowest index
// on ties ("best"); for whole devices, PickWholeDevices.
void PickBestDevices(const CellState& cell, uint32_t node, const TaskShape& shape,
                     std::vector<DeviceUse>* pick);
// The cell's largest node CPU and device capacity (milli), for normalised scores; O(1), kept
// by CellState.
struct CellScale {
  Milli max_cpu = 1;
  Milli max_device_milli = 1;
};
CellScale ComputeCellScale(const CellState& cell);

}  // namespace tessera
