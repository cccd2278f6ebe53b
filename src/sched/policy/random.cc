// random: a uniformly random feasible node, and for a share a uniformly random eligible
// device (reservoir sampling). The baseline every other policy must beat (FGD paper, §6).
#include "sched/policy/builtin.h"

namespace tessera::policy {
namespace {

class RandomScorer final : public Scorer {
 public:
  std::string_view name() const override { return "random"; }
  double Score(const CellState&, uint32_t, const TaskShape&,
               std::vector<DeviceUse>*) const override {
    return 0;
  }
  bool uniform() const override { return true; }
  void PickRandomDevices(const CellState& cell, uint32_t node, const TaskShape& shape, Rng& rng,
                         std::vector<DeviceUse>* pick) const override {
    if (!shape.fractional()) {
      PickWholeDevices(cell, node, shape, pick);
      return;
    }
    pick->clear();
    auto devs = cell.devices(node);
    uint64_t seen = 0;
    int chosen = -1;
    for (size_t k = 0; k < devs.size(); ++k) {
      if (devs[k].free < shape.milli || !DeviceEligible(cell, devs[k], shape)) continue;
      if (rng.Uniform(++seen) == 0) chosen = static_cast<int>(k);
    }
    if (chosen >= 0) pick->push_back({static_cast<uint16_t>(chosen), shape.milli});
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeRandom() {
  return std::make_unique<RandomScorer>();
}

}  // namespace tessera::policy
