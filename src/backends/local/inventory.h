// What a node agent reports about its host (issue 7, docs/operations.md): CPUs and memory from
// the OS, and per GPU its identity, memory and utilization from `nvidia-smi` (Ascend NPUs:
// `npu-smi info`). The parsers take the tools' text, so they are tested and fuzzed without the
// hardware.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/quantity.h"
#include "common/status.h"

namespace tessera {

// One GPU as `nvidia-smi` reports it, or one Ascend NPU device (a chip) as `npu-smi` does.
struct GpuSample {
  // The index the vendor's runtime knows the device by (CUDA_VISIBLE_DEVICES,
  // ASCEND_RT_VISIBLE_DEVICES).
  int index = 0;
  std::string uuid;  // NPUs: "npuN.chipC@BUS-ID"
  std::string name;  // e.g. "NVIDIA H200", "910B3"
  MiB memory_total = 0;
  MiB memory_used = 0;
  // Busy share of the last sample period, 0..1; -1 when the device does not report it (MIG
  // instances say "[N/A]").
  double utilization = -1;
};

// The query the agent runs; ParseNvidiaSmi reads its output.
inline constexpr std::string_view kNvidiaSmiQuery =
    "nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,utilization.gpu "
    "--format=csv,noheader,nounits";

// Parses the output of kNvidiaSmiQuery: one line per GPU, six comma-separated fields. Errors
// name the line and the field.
Result<std::vector<GpuSample>> ParseNvidiaSmi(std::string_view text);

// Parses the table `npu-smi info` prints on Ascend hosts: per device (chip) its NPU's name, AI
// Core busy share and memory (HBM where the table has it, else the device memory). The device
// index is the chip row's Device / Phy-ID column where the table has one (Atlas 300I Duo,
// Atlas A3: two devices per card), else the NPU ID. The process table after the devices is
// not read. Errors name the line and the field.
Result<std::vector<GpuSample>> ParseNpuSmi(std::string_view text);

// The host's memory from /proc/meminfo: MemTotal and MemAvailable.
struct MemorySample {
  MiB total = 0;
  MiB available = 0;
};
Result<MemorySample> ParseMeminfo(std::string_view text);

}  // namespace tessera
