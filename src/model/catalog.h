// The device catalog: every kind of accelerator (and CPU) the organisation owns, with what a
// job needs to know to choose between them.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/quantity.h"

namespace tessera {

enum class DeviceKind { kGpu, kNpu, kCpu };

// The workload classes of docs/architecture.md §1. Speeds, policies and metrics are kept per class.
enum class WorkloadClass { kTraining, kFinetune, kBatch, kEval, kInference };
inline constexpr int kWorkloadClassCount = 5;

std::string_view DeviceKindName(DeviceKind k);
std::optional<DeviceKind> ParseDeviceKind(std::string_view s);
std::string_view WorkloadClassName(WorkloadClass c);
std::optional<WorkloadClass> ParseWorkloadClass(std::string_view s);

struct DeviceModel {
  std::string name;  // "H800", "Ascend910B"
  DeviceKind kind = DeviceKind::kGpu;
  std::string vendor;               // "nvidia", "huawei", "amd", "intel"
  MiB memory = 0;                   // device memory
  std::vector<std::string> labels;  // capabilities: "cuda12", "cann8", "fp8", "nvlink"
  // Relative speed per workload class in milli (1000 = the reference device), indexed by
  // WorkloadClass. Defaults to 1000 for every class.
  std::array<Milli, kWorkloadClassCount> speed = {1000, 1000, 1000, 1000, 1000};

  bool HasLabel(std::string_view label) const;
};

}  // namespace tessera
