#include "backends/local/device_map.h"

#include <charconv>
#include <set>

namespace tessera {

Result<std::vector<int>> ParseDeviceList(std::string_view text) {
  std::vector<int> out;
  std::set<int> seen;
  size_t k = 0;
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    int v = -1;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || v < 0) {
      return InvalidArgument("--devices: entry " + std::to_string(k + 1) + " (\"" +
                             std::string(item) + "\") is not a device index");
    }
    if (!seen.insert(v).second) {
      return InvalidArgument("--devices: device " + std::to_string(v) + " is listed twice");
    }
    out.push_back(v);
    ++k;
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return out;
}

void MapToHost(const std::vector<int>& host, std::map<std::string, std::string>& env) {
  if (host.empty()) return;
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES",
                           "HIP_VISIBLE_DEVICES", "TESSERA_VISIBLE_DEVICES"}) {
    auto it = env.find(name);
    if (it == env.end() || it->second.empty()) continue;
    std::string mapped;
    std::string_view list = it->second;
    while (!list.empty()) {
      size_t comma = list.find(',');
      std::string_view item = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      int i = -1;
      auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), i);
      bool index = ec == std::errc() && p == item.data() + item.size() && i >= 0 &&
                   static_cast<size_t>(i) < host.size();
      mapped += (mapped.empty() ? "" : ",") +
                (index ? std::to_string(host[static_cast<size_t>(i)]) : std::string(item));
    }
    it->second = mapped;
  }
}

std::vector<GpuSample> NodeGpus(const std::vector<int>& host, const std::vector<GpuSample>& gpus) {
  if (host.empty()) return gpus;
  std::vector<GpuSample> out;
  for (size_t i = 0; i < host.size(); ++i) {
    for (const GpuSample& g : gpus) {
      if (g.index != host[i]) continue;
      GpuSample s = g;
      s.index = static_cast<int>(i);
      out.push_back(s);
    }
  }
  return out;
}

}  // namespace tessera
