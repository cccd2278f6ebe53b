#include "backends/run_order.h"

#include <charconv>

namespace tessera {

std::string TaskKey::ToString() const {
  return std::to_string(job) + "." + std::to_string(run) + "." + std::to_string(task);
}

std::optional<TaskKey> TaskKey::Parse(std::string_view s) {
  TaskKey k;
  const char* p = s.data();
  const char* end = s.data() + s.size();
  auto number = [&](auto& out, bool last) {
    auto [q, ec] = std::from_chars(p, end, out);
    if (ec != std::errc() || q == p || out < 0) return false;
    p = q;
    if (last) return p == end;
    if (p == end || *p != '.') return false;
    ++p;
    return true;
  };
  if (!number(k.job, false) || !number(k.run, false) || !number(k.task, true)) return {};
  return k;
}

}  // namespace tessera
