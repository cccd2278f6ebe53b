#include "model/catalog.h"

#include <algorithm>

namespace tessera {

std::string_view DeviceKindName(DeviceKind k) {
  switch (k) {
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kNpu:
      return "npu";
    case DeviceKind::kCpu:
      return "cpu";
  }
  return "?";
}

std::optional<DeviceKind> ParseDeviceKind(std::string_view s) {
  for (DeviceKind k : {DeviceKind::kGpu, DeviceKind::kNpu, DeviceKind::kCpu}) {
    if (DeviceKindName(k) == s) return k;
  }
  return std::nullopt;
}

std::string_view WorkloadClassName(WorkloadClass c) {
  switch (c) {
    case WorkloadClass::kTraining:
      return "training";
    case WorkloadClass::kFinetune:
      return "finetune";
    case WorkloadClass::kBatch:
      return "batch";
    case WorkloadClass::kEval:
      return "eval";
    case WorkloadClass::kInference:
      return "inference";
  }
  return "?";
}

std::optional<WorkloadClass> ParseWorkloadClass(std::string_view s) {
  for (int i = 0; i < kWorkloadClassCount; ++i) {
    auto c = static_cast<WorkloadClass>(i);
    if (WorkloadClassName(c) == s) return c;
  }
  return std::nullopt;
}

bool DeviceModel::HasLabel(std::string_view label) const {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

}  // namespace tessera
