// dot-product (Tetris, SIGCOMM'14, as in the FGD paper's DotProd): the node whose free
// (CPU, device) vector has the smallest dot product with the task's demand, both normalised
// by the cell's largest node — it prefers nodes whose free capacity is "orthogonal" to the
// task, keeping complementary capacity together. Integer-truncated like the original.
#include "sched/policy/builtin.h"

namespace tessera::policy {
namespace {

class DotProductScorer final : public Scorer {
 public:
  std::string_view name() const override { return "dot-product"; }
  double Score(const CellState& cell, uint32_t node, const TaskShape& shape,
               std::vector<DeviceUse>* pick) const override {
    PickBestDevices(cell, node, shape, pick);
    const CellScale scale = ComputeCellScale(cell);
    const NodeState& n = cell.node(node);
    if (n.cpu_free < shape.cpu_for_score) return 0;
    int64_t gpu_left = 0;
    for (const DeviceSlot& d : cell.devices(node))
      gpu_left += d.free;
    const double cpu_scale = static_cast<double>(scale.max_cpu);
    const double dev_scale = static_cast<double>(scale.max_device_milli);
    double n0 = static_cast<double>(n.cpu_free) / cpu_scale;
    double n1 = static_cast<double>(gpu_left) / dev_scale;
    double p0 = static_cast<double>(shape.cpu_for_score) / cpu_scale;
    double p1 = static_cast<double>(shape.total_milli()) / dev_scale;
    return static_cast<double>(static_cast<int64_t>(100 * (1 - (n0 * p0 + n1 * p1) / 2)));
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeDotProduct() {
  return std::make_unique<DotProductScorer>();
}

}  // namespace tessera::policy
