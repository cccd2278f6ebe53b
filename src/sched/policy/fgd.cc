// fgd (Fragmentation Gradient Descent, Weng et al., USENIX ATC'23): place each task where
// the expected fragmentation of the node — with respect to the target workload of typical
// task shapes — grows least, and for a share pick the device that grows it least. Scores are
// sigmoid(decrease in fragmentation, in devices) x 100, truncated to an integer as in the
// original; ties go to the lower rank.
#include <cmath>

#include "sched/policy/builtin.h"

namespace tessera::policy {
namespace {

class FgdScorer final : public Scorer {
 public:
  explicit FgdScorer(const TargetWorkload& w) : workload_(w) {}
  std::string_view name() const override { return "fgd"; }

  double Score(const CellState& cell, uint32_t node, const TaskShape& shape,
               std::vector<DeviceUse>* pick) const override {
    pick->clear();
    const NodeState& n = cell.node(node);
    uint16_t free[64];
    size_t count = FreeShares(cell, node, free);
    std::span<const uint16_t> shares(free, count);
    double before = workload_.Fragmentation(n.cpu_free, shares, n.models);
    Milli cpu_after = n.cpu_free - shape.cpu_for_score;
    if (shape.fractional()) {
      auto devs = cell.devices(node);
      int64_t best = -1;
      for (size_t k = 0; k < count; ++k) {
        if (free[k] < shape.milli || !DeviceEligible(cell, devs[k], shape)) continue;
        uint16_t saved = free[k];
        free[k] = static_cast<uint16_t>(saved - shape.milli);
        int64_t s = ScoreOf(before, workload_.Fragmentation(cpu_after, shares, n.models));
        free[k] = saved;
        if (s > best) {
          best = s;
          pick->assign({{static_cast<uint16_t>(k), shape.milli}});
        }
      }
      return static_cast<double>(best);
    }
    if (!shape.cpu_only()) {
      PickWholeDevices(cell, node, shape, pick);
      for (const DeviceUse& u : *pick)
        free[u.index] = 0;
    }
    return static_cast<double>(
        ScoreOf(before, workload_.Fragmentation(cpu_after, shares, n.models)));
  }

 private:
  static int64_t ScoreOf(double before, double after) {
    double x = (before - after) / 1000.0;
    return static_cast<int64_t>(1.0 / (1.0 + std::exp(-x)) * 100.0);
  }
  const TargetWorkload& workload_;
};

}  // namespace

std::unique_ptr<Scorer> MakeFgd(const TargetWorkload& w) {
  return std::make_unique<FgdScorer>(w);
}

}  // namespace tessera::policy
