// best-fit: the node whose free CPU and device capacity would be smallest after placing the
// task, weighting both dimensions equally after normalising by the cell's largest node (FGD
// paper's BestFit). Scores are truncated to integers as in the original, which makes ties
// (broken by rank) part of the policy's behaviour.
#include "sched/policy/builtin.h"

namespace tessera::policy {
namespace {

class BestFitScorer final : public Scorer {
 public:
  std::string_view name() const override { return "best-fit"; }
  double Score(const CellState& cell, uint32_t node, const TaskShape& shape,
               std::vector<DeviceUse>* pick) const override {
    PickBestDevices(cell, node, shape, pick);
    const CellScale scale = ComputeCellScale(cell);
    const NodeState& n = cell.node(node);
    int64_t gpu_left = 0;
    for (const DeviceSlot& d : cell.devices(node))
      gpu_left += d.free;
    double s = 0.0 +
               (static_cast<double>(n.cpu_free - shape.cpu_for_score) /
                static_cast<double>(scale.max_cpu)) *
                   0.5 +
               (static_cast<double>(gpu_left - shape.total_milli()) /
                static_cast<double>(scale.max_device_milli)) *
                   0.5;
    return static_cast<double>(static_cast<int64_t>((1 - s) * 100));
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeBestFit() {
  return std::make_unique<BestFitScorer>();
}

}  // namespace tessera::policy
