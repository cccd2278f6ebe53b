// gpu-packing (FGD paper's GpuPacking): prefer, in order, (1) partially used devices that
// the task fits on, fullest first, (2) nodes that already have some devices in use, (3) empty
// nodes, smaller ones first — so whole free devices and whole free nodes are kept for tasks
// that need them. CPU-only tasks score 0 everywhere (the lowest rank wins).
#include <algorithm>
#include <numeric>

#include "sched/policy/builtin.h"

namespace tessera::policy {
namespace {

class GpuPackingScorer final : public Scorer {
 public:
  std::string_view name() const override { return "gpu-packing"; }
  double Score(const CellState& cell, uint32_t node, const TaskShape& shape,
               std::vector<DeviceUse>* pick) const override {
    PickBestDevices(cell, node, shape, pick);
    if (shape.cpu_only()) return 0;
    auto devs = cell.devices(node);
    int64_t whole = 0;
    for (const DeviceSlot& d : devs)
      whole += d.free == 1000 ? 1 : 0;
    if (whole == static_cast<int64_t>(devs.size())) {
      return static_cast<double>(std::max<int64_t>(33 - whole, whole));  // case 3: empty node
    }
    std::vector<size_t> order(devs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return devs[a].free < devs[b].free; });
    int32_t taken = 0;
    int64_t whole_used = 0, left_sum = 0;
    for (size_t k : order) {
      if (taken == shape.count) break;
      if (devs[k].free < shape.milli || !DeviceEligible(cell, devs[k], shape)) continue;
      ++taken;
      whole_used += devs[k].free == 1000 ? 1 : 0;
      left_sum += devs[k].free * 100 / 1000;
    }
    if (whole_used > 0) {
      return static_cast<double>(std::max<int64_t>(50 - whole_used, 33));  // case 2
    }
    return static_cast<double>(std::max<int64_t>(100 - left_sum / 10, 50));  // case 1
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeGpuPacking() {
  return std::make_unique<GpuPackingScorer>();
}

}  // namespace tessera::policy
