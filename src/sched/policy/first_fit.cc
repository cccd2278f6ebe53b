// first-fit: the feasible node of lowest rank, and on it the first devices that fit. The
// simplest deterministic policy; a reference for the others, not a good packer.
#include "sched/policy/builtin.h"

namespace tessera::policy {
namespace {

class FirstFitScorer final : public Scorer {
 public:
  std::string_view name() const override { return "first-fit"; }
  double Score(const CellState& cell, uint32_t node, const TaskShape& shape,
               std::vector<DeviceUse>* pick) const override {
    pick->clear();
    if (shape.fractional()) {
      auto devs = cell.devices(node);
      for (size_t k = 0; k < devs.size(); ++k) {
        if (devs[k].free >= shape.milli && DeviceEligible(cell, devs[k], shape)) {
          pick->push_back({static_cast<uint16_t>(k), shape.milli});
          break;
        }
      }
    } else if (!shape.cpu_only()) {
      PickWholeDevices(cell, node, shape, pick);
    }
    return 0;  // every node equal: the lowest rank wins
  }
};

}  // namespace

std::unique_ptr<Scorer> MakeFirstFit() {
  return std::make_unique<FirstFitScorer>();
}

}  // namespace tessera::policy
