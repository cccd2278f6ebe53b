#include "sched/filter.h"

#include "sched/scorer.h"

namespace tessera {

std::optional<Reason> FilterChain::Check(const CellState& cell, uint32_t node,
                                         const TaskShape& shape) const {
  for (const auto& f : filters_)
    if (!f->Keep(cell, node, shape)) return f->reason();
  return std::nullopt;
}

void FilterChain::Append(FilterChain other) {
  for (auto& f : other.filters_)
    filters_.push_back(std::move(f));
  if (other.scopes_ != nullptr) scopes_ = other.scopes_;
}

std::vector<std::string_view> FilterChain::names() const {
  std::vector<std::string_view> out;
  for (const auto& f : filters_)
    out.push_back(f->name());
  return out;
}

namespace {

// Cordoned, lost or unhealthy nodes take nothing.
class SchedulableFilter final : public NodeFilter {
 public:
  std::string_view name() const override { return "schedulable"; }
  Reason reason() const override { return Reason::kUnschedulable; }
  bool Keep(const CellState& cell, uint32_t node, const TaskShape&) const override {
    return cell.node(node).schedulable;
  }
};

// The node has a device of a model the task accepts.
class DeviceModelFilter final : public NodeFilter {
 public:
  std::string_view name() const override { return "device-model"; }
  Reason reason() const override { return Reason::kModelNotAllowed; }
  bool Keep(const CellState& cell, uint32_t node, const TaskShape& shape) const override {
    return shape.cpu_only() || (cell.node(node).models & shape.models) != 0;
  }
};

// One of those devices is healthy and has the memory the task needs per device.
class DeviceMemoryFilter final : public NodeFilter {
 public:
  std::string_view name() const override { return "device-memory"; }
  Reason reason() const override { return Reason::kDeviceMemory; }
  bool Keep(const CellState& cell, uint32_t node, const TaskShape& shape) const override {
    if (shape.cpu_only()) return true;
    for (const DeviceSlot& d : cell.devices(node))
      if (DeviceEligible(cell, d, shape)) return true;
    return false;
  }
};

class CpuFilter final : public NodeFilter {
 public:
  std::string_view name() const override { return "cpu"; }
  Reason reason() const override { return Reason::kInsufficientCpu; }
  bool Keep(const CellState& cell, uint32_t node, const TaskShape& shape) const override {
    return cell.node(node).cpu_free >= shape.cpu;
  }
};

class MemoryFilter final : public NodeFilter {
 public:
  std::string_view name() const override { return "memory"; }
  Reason reason() const override { return Reason::kInsufficientMemory; }
  bool Keep(const CellState& cell, uint32_t node, const TaskShape& shape) const override {
    return cell.node(node).mem_free >= shape.memory;
  }
};

// Enough eligible devices with the task's free share each.
class FreeDevicesFilter final : public NodeFilter {
 public:
  std::string_view name() const override { return "free-devices"; }
  Reason reason() const override { return Reason::kInsufficientDevices; }
  bool Keep(const CellState& cell, uint32_t node, const TaskShape& shape) const override {
    if (shape.cpu_only()) return true;
    int32_t fit = 0;
    for (const DeviceSlot& d : cell.devices(node))
      if (DeviceEligible(cell, d, shape) && d.free >= shape.milli) ++fit;
    return fit >= shape.count;
  }
};

// Device nodes are for device work (TaskShape::Guard). Under kCpuNodesOnly, CPU-only work
// goes to nodes without devices.
class CpuNodesFirstFilter final : public NodeFilter {
 public:
  std::string_view name() const override { return "cpu-nodes-first"; }
  Reason reason() const override { return Reason::kCpuNodesFirst; }
  bool Keep(const CellState& cell, uint32_t node, const TaskShape& shape) const override {
    return shape.guard != TaskShape::kCpuNodesOnly || !shape.cpu_only() ||
           cell.node(node).device_count == 0;
  }
};

// Under either guard, a task leaves a node whose devices stay (partly) free at least one
// device's share of its CPU and memory (the node's totals over its devices), so that they can
// still be used.
class KeepDevicesFedFilter final : public NodeFilter {
 public:
  std::string_view name() const override { return "keep-devices-fed"; }
  Reason reason() const override { return Reason::kKeepsDevicesFed; }
  bool Keep(const CellState& cell, uint32_t node, const TaskShape& shape) const override {
    const NodeState& n = cell.node(node);
    if (shape.guard == TaskShape::kNoGuard || n.device_count == 0) return true;
    Milli free = 0;
    for (const DeviceSlot& d : cell.devices(node))
      if (d.healthy) free += d.free;
    if (free - shape.total_milli() < kMilliPerUnit) return true;  // no device stays free
    return n.cpu_free - shape.cpu >= n.cpu_total / n.device_count &&
           n.mem_free - shape.memory >= n.mem_total / n.device_count;
  }
};

}  // namespace

FilterChain MakeDefaultFilters() {
  FilterChain c;
  c.Add(std::make_unique<SchedulableFilter>());
  c.Add(std::make_unique<DeviceModelFilter>());
  c.Add(std::make_unique<DeviceMemoryFilter>());
  c.Add(std::make_unique<CpuFilter>());
  c.Add(std::make_unique<MemoryFilter>());
  c.Add(std::make_unique<FreeDevicesFilter>());
  // Last: a node they drop fits otherwise (the engine relaxes the guard when nothing else fits).
  c.Add(std::make_unique<CpuNodesFirstFilter>());
  c.Add(std::make_unique<KeepDevicesFedFilter>());
  return c;
}

const FilterChain& DefaultFilters() {
  static const FilterChain chain = MakeDefaultFilters();
  return chain;
}

}  // namespace tessera
