#include "backends/local/host.h"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <sstream>

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

std::vector<GpuSample> Gpus() {
  std::string out;
  if (!RunCommand(std::string(kNvidiaSmiQuery) + " 2>/dev/null", &out)) return {};
  auto gpus = ParseNvidiaSmi(out);
  return gpus.ok() ? *gpus : std::vector<GpuSample>{};
}

}  // namespace

bool RunCommand(const std::string& command, std::string* output) {
  output->clear();
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return false;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    output->append(buf.data(), n);
  return pclose(p) == 0;
}

HostSampler::HostSampler() {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  inventory_.cpu = static_cast<Milli>(cpus > 0 ? cpus : 1) * 1000;
  if (auto text = ReadFileBounded("/proc/meminfo", 1 << 20); text.ok()) {
    if (auto m = ParseMeminfo(*text); m.ok()) inventory_.memory = m->total;
  }
  std::string probe;
  nvidia_smi_ = RunCommand("command -v nvidia-smi >/dev/null 2>&1", &probe);
  if (nvidia_smi_) inventory_.gpus = Gpus();
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
  if (nvidia_smi_) t.gpus = Gpus();
  return t;
}

}  // namespace tessera
