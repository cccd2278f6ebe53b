#include "sched/task_shape.h"

#include <algorithm>

namespace tessera {

uint32_t TaskShape::kind() const {
  if (cpu_only()) return 0;
  if (fractional()) return 1;
  return 1 + static_cast<uint32_t>(std::min(count, 15));
}

TaskShape MakeTaskShape(const Spec& spec, const TaskRequest& request) {
  TaskShape s;
  s.cpu = request.cpu;
  s.cpu_for_score = request.cpu;
  s.memory = request.memory;
  const DeviceRequest& d = request.devices;
  if (d.count > 0) {
    s.count = d.count;
    s.milli = d.milli_each;
    s.min_device_memory = d.min_memory;
    s.models = 0;
    for (size_t m = 0; m < spec.device_models.size() && m < kMaxDeviceModels; ++m) {
      DeviceModelId id(static_cast<uint32_t>(m));
      if (d.Accepts(id, spec.model(id))) s.models |= ModelMask{1} << m;
    }
  }
  return s;
}

uint32_t ShapeTable::Intern(TaskShape& shape) {
  auto [it, fresh] = ids_.emplace(shape.key(), static_cast<uint32_t>(ids_.size()));
  shape.id = it->second;
  return shape.id;
}

}  // namespace tessera
