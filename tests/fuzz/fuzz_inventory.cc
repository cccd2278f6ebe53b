// Fuzzes the node agent's inventory parsers (nvidia-smi's CSV, npu-smi's table, /proc/meminfo): any
// text gives samples or an error that says where, never a crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "backends/local/inventory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto gpus = tessera::ParseNvidiaSmi(text);
  if (gpus.ok()) {
    for (const tessera::GpuSample& g : *gpus) {
      if (g.memory_total < 0 || g.memory_used < 0 || g.utilization > 1.0) std::abort();
    }
  } else if (gpus.status().message().find("line ") == std::string::npos) {
    std::abort();
  }
  auto npus = tessera::ParseNpuSmi(text);
  if (npus.ok()) {
    for (const tessera::GpuSample& g : *npus) {
      if (g.memory_total < 0 || g.memory_used < 0 || g.utilization > 1.0 || g.index < 0) {
        std::abort();
      }
    }
  } else if (npus.status().message().find("line ") == std::string::npos) {
    std::abort();
  }
  auto mem = tessera::ParseMeminfo(text);
  if (mem.ok() && (mem->total < 0 || mem->available < 0)) std::abort();
  return 0;
}
