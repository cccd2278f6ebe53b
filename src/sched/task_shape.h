// TaskShape: one task's request compiled for the scheduler: acceptable device models as a
// bit mask over the cell's catalog, quantities in fixed point. Shapes are interned by a
// ShapeTable so that scores can be cached per (node class, shape).
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "common/quantity.h"
#include "model/job.h"
#include "model/spec.h"

namespace tessera {

// At most this many device models per cell (a bit mask each); CellState::FromSpec rejects more.
inline constexpr int kMaxDeviceModels = 64;
using ModelMask = uint64_t;
inline constexpr ModelMask kAnyAccelerator = ~ModelMask{0};

struct TaskShape {
  Milli cpu = 0;            // requested CPU (filters)
  Milli cpu_for_score = 0;  // CPU as scorers see it (FGD's "non-zero CPU"; = cpu by default)
  MiB memory = 0;
  int32_t count = 0;                   // devices per task; 0 = CPU-only
  Milli milli = 0;                     // share of each device, 1..1000; 0 when count == 0
  ModelMask models = kAnyAccelerator;  // acceptable device models (bit = DeviceModelId)
  MiB min_device_memory = 0;
  uint32_t scope = 0;  // placement scope (sched/scope.h); 0 = every cluster
  // How the task spares device nodes (the `spare-devices` filter, sched/filter.h); the engine
  // tries the strictest guard first and relaxes it only when nothing else fits.
  enum Guard : uint8_t {
    kNoGuard = 0,
    kKeepDevicesFed = 1,  // leave a node whose devices stay free one device's CPU and memory
    kCpuNodesOnly = 2,    // CPU-only work: nodes without devices only
  };
  Guard guard = kNoGuard;
  uint32_t id = 0;  // interned id (ShapeTable), for caches

  bool cpu_only() const { return count == 0 || milli == 0; }
  bool fractional() const { return count == 1 && milli > 0 && milli < 1000; }
  Milli total_milli() const { return static_cast<Milli>(count) * milli; }
  bool accepts(DeviceModelId m) const { return (models >> m.value()) & 1; }
  // The kind of task for co-location policies: 0 CPU-only, 1 a share, 1 + k for k whole devices
  // (k >= 15 counted as 15).
  uint32_t kind() const;

  auto key() const {
    return std::tie(cpu, cpu_for_score, memory, count, milli, models, min_device_memory, scope,
                    guard);
  }
};

// Compiles a declared request against a Spec's catalog.
TaskShape MakeTaskShape(const Spec& spec, const TaskRequest& request);

// Interns shapes: equal shapes get equal ids.
class ShapeTable {
 public:
  uint32_t Intern(TaskShape& shape);
  size_t size() const { return ids_.size(); }

 private:
  std::map<
      std::tuple<Milli, Milli, MiB, int32_t, Milli, ModelMask, MiB, uint32_t, TaskShape::Guard>,
      uint32_t>
      ids_;
};

}  // namespace tessera
