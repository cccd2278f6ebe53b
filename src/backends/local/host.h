// What the node agent measures on its host: the inventory once (CPUs, memory, GPUs from
// nvidia-smi when the host has it, else Ascend NPUs from npu-smi) and live telemetry at each
// heartbeat (CPU busy since the last sample from /proc/stat, memory in use from /proc/meminfo,
// per device its utilization and memory used).
//
// Thread-safety: none; one sampler per agent, used from one thread at a time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends/local/protocol.h"
#include "common/status.h"

namespace tessera {

// The tool the devices come from. kAuto: the first of nvidia-smi and npu-smi the host has;
// kNone: no devices are read (the node's are those the fleet declares).
enum class DeviceTool { kAuto, kNone, kNvidiaSmi, kNpuSmi };

// "auto", "none", "nvidia-smi", "npu-smi".
Result<DeviceTool> ParseDeviceTool(std::string_view name);

class HostSampler {
 public:
  explicit HostSampler(DeviceTool tool = DeviceTool::kAuto);
  const AgentInventory& inventory() const { return inventory_; }
  AgentTelemetry Sample();
  // The tool in use (never kAuto).
  DeviceTool device_tool() const { return tool_; }

 private:
  std::vector<GpuSample> Devices() const;

  DeviceTool tool_ = DeviceTool::kNone;
  AgentInventory inventory_;
  uint64_t last_busy_ = 0, last_total_ = 0;
};

}  // namespace tessera
