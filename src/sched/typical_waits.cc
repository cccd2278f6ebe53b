#include "sched/typical_waits.h"

#include <algorithm>
#include <bit>

namespace tessera {

int64_t TypicalWaits::Key(int32_t priority, Milli devices) {
  const auto whole =
      static_cast<uint64_t>(std::max<Milli>(1, (devices + kMilliPerUnit - 1) / kMilliPerUnit));
  // 1, 2, 3-4, 5-8, ... devices: 0, 1, 2, 3, ...
  return static_cast<int64_t>(priority) * 64 + static_cast<int64_t>(std::bit_width(whole - 1));
}

void TypicalWaits::Observe(int32_t priority, Milli devices, Millis waited) {
  const double w = static_cast<double>(std::max<Millis>(0, waited));
  auto [it, fresh] = average_.try_emplace(Key(priority, devices), w);
  if (!fresh) it->second += (w - it->second) / kSpan;
}

std::optional<Millis> TypicalWaits::Of(int32_t priority, Milli devices) const {
  auto it = average_.find(Key(priority, devices));
  if (it == average_.end()) return std::nullopt;
  return static_cast<Millis>(it->second);
}

}  // namespace tessera
