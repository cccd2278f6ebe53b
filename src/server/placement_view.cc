#include "server/placement_view.h"

#include <string>

namespace tessera {

namespace {

// TaskShape::kind(): 0 CPU only, 1 a share of one device, 1 + k for k whole devices (k >= 15
// counted as 15).
std::string KindName(uint32_t kind) {
  if (kind == 0) return "cpu";
  if (kind == 1) return "share";
  const uint32_t devices = kind - 1;
  if (devices >= 15) return "15+ devices";
  return std::to_string(devices) + (devices == 1 ? " device" : " devices");
}

}  // namespace

nlohmann::ordered_json PlacementView(std::string_view stored) {
  auto out = nlohmann::ordered_json::array();
  if (stored.empty()) return out;
  auto parsed = nlohmann::ordered_json::parse(stored, nullptr, false);
  if (!parsed.is_array()) return out;
  for (auto& task : parsed) {
    if (!task.is_object()) continue;
    const uint32_t kind = task.value("kind", 0u);
    task["kind"] = KindName(kind);
    out.push_back(std::move(task));
  }
  return out;
}

}  // namespace tessera
