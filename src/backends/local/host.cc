#include "backends/local/host.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <sstream>

#include "backends/shell.h"
#include "common/file.h"

namespace tessera {

namespace {

// Busy and total jiffies of all CPUs from /proc/stat's first line.
bool CpuTimes(uint64_t* busy, uint64_t* total) {
  auto text = ReadFileBounded("/proc/stat", 1 << 20);
  if (!text.ok()) return false;
  std::istringstream in(*text);
  std::string cpu;
  uint64_t v[8] = {};
  in >> cpu;
  for (uint64_t& x : v)
    in >> x;
  if (cpu != "cpu" || !in) return false;
  *total = 0;
  for (uint64_t x : v)
    *total += x;
  *busy = *total - v[3] - v[4];  // less idle and iowait
  return true;
}

// Whether the host has `tool` on its PATH.
bool Present(const char* tool) {
  std::string probe;
  return RunCommand(std::string("command -v ") + tool + " >/dev/null 2>&1", &probe);
}

}  // namespace

// The devices as the host's tool lists them now (none when it fails or prints garbage).
std::vector<GpuSample> HostSampler::Devices() const {
  std::string out;
  Result<std::vector<GpuSample>> devices = std::vector<GpuSample>{};
  if (tool_ == DeviceTool::kNvidiaSmi) {
    if (!RunCommand(std::string(kNvidiaSmiQuery) + " 2>/dev/null", &out)) return {};
    devices = ParseNvidiaSmi(out);
  } else if (tool_ == DeviceTool::kNpuSmi) {
    if (!RunCommand("npu-smi info 2>/dev/null", &out)) return {};
    devices = ParseNpuSmi(out);
  }
  return devices.ok() ? *devices : std::vector<GpuSample>{};
}

Result<DeviceTool> ParseDeviceTool(std::string_view name) {
  if (name == "auto") return DeviceTool::kAuto;
  if (name == "none") return DeviceTool::kNone;
  if (name == "nvidia-smi") return DeviceTool::kNvidiaSmi;
  if (name == "npu-smi") return DeviceTool::kNpuSmi;
  return InvalidArgument("--device-tool: expected auto, nvidia-smi, npu-smi or none, got \"" +
                         std::string(name) + "\"");
}

HostSampler::HostSampler(DeviceTool tool) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  inventory_.cpu = static_cast<Milli>(cpus > 0 ? cpus : 1) * 1000;
  if (auto text = ReadFileBounded("/proc/meminfo", 1 << 20); text.ok()) {
    if (auto m = ParseMeminfo(*text); m.ok()) inventory_.memory = m->total;
  }
  tool_ = tool != DeviceTool::kAuto ? tool
          : Present("nvidia-smi")   ? DeviceTool::kNvidiaSmi
          : Present("npu-smi")      ? DeviceTool::kNpuSmi
                                    : DeviceTool::kNone;
  inventory_.gpus = Devices();
  CpuTimes(&last_busy_, &last_total_);
}

AgentTelemetry HostSampler::Sample() {
  AgentTelemetry t;
  uint64_t busy = 0, total = 0;
  if (CpuTimes(&busy, &total) && total > last_total_) {
    double share =
        static_cast<double>(busy - last_busy_) / static_cast<double>(total - last_total_);
    t.cpu_used = static_cast<Milli>(share * static_cast<double>(inventory_.cpu));
    last_busy_ = busy;
    last_total_ = total;
  }
  if (auto text = ReadFileBounded("/proc/meminfo", 1 << 20); text.ok()) {
    if (auto m = ParseMeminfo(*text); m.ok()) t.memory_used = m->total - m->available;
  }
  t.gpus = Devices();
  return t;
}

}  // namespace tessera
