#include "backends/local/inventory.h"

#include <charconv>
#include <optional>

namespace tessera {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::optional<int64_t> Integer(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// "[N/A]", "[Not Supported]", ...: what nvidia-smi prints for a value the device lacks.
bool NotAvailable(std::string_view s) {
  return !s.empty() && s.front() == '[' && s.back() == ']';
}

std::vector<std::string_view> Split(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  for (;;) {
    size_t at = line.find(sep);
    out.push_back(Trim(line.substr(0, at)));
    if (at == std::string_view::npos) return out;
    line.remove_prefix(at + 1);
  }
}

}  // namespace

Result<std::vector<GpuSample>> ParseNvidiaSmi(std::string_view text) {
  static const char* const kFields[] = {"index",        "uuid",        "name",
                                        "memory.total", "memory.used", "utilization.gpu"};
  std::vector<GpuSample> out;
  int line_no = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = Trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_no;
    if (line.empty()) continue;
    const std::string where = "nvidia-smi output line " + std::to_string(line_no) + ": ";
    std::vector<std::string_view> f = Split(line, ',');
    if (f.size() != 6) {
      return InvalidArgument(where +
                             "expected 6 fields (index, uuid, name, memory.total, "
                             "memory.used, utilization.gpu), got " +
                             std::to_string(f.size()));
    }
    GpuSample g;
    auto number = [&](size_t i, bool optional) -> Result<int64_t> {
      if (optional && NotAvailable(f[i])) return int64_t{-1};
      std::optional<int64_t> v = Integer(f[i]);
      if (!v) {
        return InvalidArgument(where + kFields[i] + ": expected a non-negative integer, got \"" +
                               std::string(f[i]) + "\"");
      }
      return *v;
    };
    auto index = number(0, false);
    if (!index.ok()) return index.status();
    if (*index > 1024) return InvalidArgument(where + "index: out of range");
    g.index = static_cast<int>(*index);
    g.uuid = std::string(f[1]);
    g.name = std::string(f[2]);
    if (g.name.empty()) return InvalidArgument(where + "name: empty");
    auto total = number(3, true);
    if (!total.ok()) return total.status();
    auto used = number(4, true);
    if (!used.ok()) return used.status();
    auto util = number(5, true);
    if (!util.ok()) return util.status();
    if (*util > 100) return InvalidArgument(where + "utilization.gpu: above 100");
    g.memory_total = std::max<int64_t>(0, *total);
    g.memory_used = std::max<int64_t>(0, *used);
    g.utilization = *util < 0 ? -1.0 : static_cast<double>(*util) / 100.0;
    out.push_back(std::move(g));
  }
  return out;
}

Result<MemorySample> ParseMeminfo(std::string_view text) {
  std::optional<int64_t> total, available;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    if (key != "MemTotal" && key != "MemAvailable") continue;
    std::string_view value = Trim(line.substr(colon + 1));
    if (value.size() < 3 || value.substr(value.size() - 3) != " kB") {
      return InvalidArgument("/proc/meminfo: " + std::string(key) + ": expected \"N kB\", got \"" +
                             std::string(value) + "\"");
    }
    std::optional<int64_t> kb = Integer(Trim(value.substr(0, value.size() - 3)));
    if (!kb) {
      return InvalidArgument("/proc/meminfo: " + std::string(key) + ": not a number: \"" +
                             std::string(value) + "\"");
    }
    (key == "MemTotal" ? total : available) = *kb / 1024;
  }
  if (!total) return InvalidArgument("/proc/meminfo: no MemTotal line");
  return MemorySample{*total, available.value_or(*total)};
}

}  // namespace tessera
