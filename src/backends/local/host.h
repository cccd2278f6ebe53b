// What the node agent measures on its host: the inventory once (CPUs, memory, GPUs from
// nvidia-smi when the host has it) and live telemetry at each heartbeat (CPU busy since the
// last sample from /proc/stat, memory in use from /proc/meminfo, per GPU its utilization and
// memory used).
//
// Thread-safety: none; one sampler per agent, used from one thread at a time.
#pragma once

#include <cstdint>
#include <string>

#include "backends/local/protocol.h"

namespace tessera {

class HostSampler {
 public:
  HostSampler();
  const AgentInventory& inventory() const { return inventory_; }
  AgentTelemetry Sample();
  // Whether nvidia-smi answered (the GPUs come from it).
  bool has_nvidia_smi() const { return nvidia_smi_; }

 private:
  bool nvidia_smi_ = false;
  AgentInventory inventory_;
  uint64_t last_busy_ = 0, last_total_ = 0;
};

// The output of a shell command ("" and false when it could not run or failed).
bool RunCommand(const std::string& command, std::string* output);

}  // namespace tessera
