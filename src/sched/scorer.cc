#include "sched/scorer.h"

namespace tessera {

void Scorer::PickRandomDevices(const CellState& cell, uint32_t node, const TaskShape& shape,
                               Rng& rng, std::vector<DeviceUse>* pick) const {
  (void)rng;
  PickBestDevices(cell, node, shape, pick);
}

std::vector<std::pair<std::string, double>> Scorer::Explain(const CellState& cell, uint32_t node,
                                                            const TaskShape& shape) const {
  std::vector<DeviceUse> pick;
  return {{std::string(name()), Score(cell, node, shape, &pick)}};
}

void ScorerRegistry::Register(std::string name, ScorerFactory factory) {
  factories_[std::move(name)] = std::move(factory);
}

Result<std::unique_ptr<Scorer>> ScorerRegistry::Create(std::string_view name,
                                                       const ScorerContext& ctx) const {
  auto it = factories_.find(std::string(name));
  if (it == factories_.end()) {
    std::string names;
    for (const auto& [n, f] : factories_)
      names += (names.empty() ? "" : ", ") + n;
    return InvalidArgument("unknown placement policy \"" + std::string(name) +
                           "\"; expected one of " + names);
  }
  return it->second(ctx);
}

std::vector<std::string> ScorerRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& [n, f] : factories_)
    out.push_back(n);
  return out;
}

bool DeviceEligible(const CellState& cell, const DeviceSlot& d, const TaskShape& shape) {
  return d.healthy && shape.accepts(DeviceModelId(d.model)) &&
         cell.model_memory(d.model) >= shape.min_device_memory;
}

void PickWholeDevices(const CellState& cell, uint32_t node, const TaskShape& shape,
                      std::vector<DeviceUse>* pick) {
  pick->clear();
  auto devs = cell.devices(node);
  for (size_t k = 0; k < devs.size() && static_cast<int32_t>(pick->size()) < shape.count; ++k) {
    if (devs[k].free == 1000 && DeviceEligible(cell, devs[k], shape)) {
      pick->push_back({static_cast<uint16_t>(k), shape.milli});
    }
  }
}

void PickBestDevices(const CellState& cell, uint32_t node, const TaskShape& shape,
                     std::vector<DeviceUse>* pick) {
  pick->clear();
  if (shape.cpu_only()) return;
  if (!shape.fractional()) {
    PickWholeDevices(cell, node, shape, pick);
    return;
  }
  auto devs = cell.devices(node);
  int best = -1;
  for (size_t k = 0; k < devs.size(); ++k) {
    if (devs[k].free >= shape.milli && DeviceEligible(cell, devs[k], shape) &&
        (best < 0 || devs[k].free < devs[static_cast<size_t>(best)].free)) {
      best = static_cast<int>(k);
    }
  }
  if (best >= 0) pick->push_back({static_cast<uint16_t>(best), shape.milli});
}

CellScale ComputeCellScale(const CellState& cell) {
  return {std::max<Milli>(1, cell.max_node_cpu()),
          std::max<Milli>(1, cell.max_node_device_milli())};
}

}  // namespace tessera
