// gpu-clustering (FGD paper's GpuClustering): put tasks of the same kind together — shares
// with shares, k-device tasks with k-device tasks — so that each node's free capacity keeps a
// shape that its kind of task can use; within that, fuller nodes first. CPU-only tasks score
// 0 everywhere.
#include "sched/policy/builtin.h"

namespace tessera::policy {
namespace {

class GpuClusteringScorer final : public Scorer {
 public:
  std::string_view name() const override { return "gpu-clustering"; }
  double Score(const CellState& cell, uint32_t node, const TaskShape& shape,
               std::vector<DeviceUse>* pick) const override {
    PickBestDevices(cell, node, shape, pick);
    if (shape.cpu_only()) return 0;
    int64_t gpu_left = 0;
    for (const DeviceSlot& d : cell.devices(node))
      gpu_left += d.free;
    int64_t base = 25 * (8000 - gpu_left) / 8000;
    uint32_t kinds = cell.node(node).kinds & ~1u;  // bit 0 (CPU-only) is not an affinity
    uint32_t mine = 1u << shape.kind();
    if (kinds == 0) return static_cast<double>(base + 25);
    if (kinds == mine) return static_cast<double>(base + 75);
    if (kinds & mine) return static_cast<double>(base + 50);
    return static_cast<double>(base);
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeGpuClustering() {
  return std::make_unique<GpuClusteringScorer>();
}

}  // namespace tessera::policy
