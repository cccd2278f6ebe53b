#include "model/job.h"

#include <algorithm>

namespace tessera {

bool DeviceRequest::Accepts(DeviceModelId id, const DeviceModel& model) const {
  if (!models.empty()) {
    if (std::none_of(models.begin(), models.end(),
                     [&](const ModelChoice& c) { return c.model == id; })) {
      return false;
    }
  } else if (kind ? model.kind != *kind : model.kind == DeviceKind::kCpu) {
    return false;
  }
  if (model.memory < min_memory) return false;
  return std::all_of(labels.begin(), labels.end(),
                     [&](const std::string& l) { return model.HasLabel(l); });
}

Milli DeviceRequest::SpeedOn(DeviceModelId id) const {
  for (const ModelChoice& c : models) {
    if (c.model == id) return c.speed;
  }
  return 1000;
}

int32_t Job::TaskCount() const {
  int32_t n = 0;
  for (const TaskGroup& g : task_groups)
    n += g.count;
  return n;
}

}  // namespace tessera
