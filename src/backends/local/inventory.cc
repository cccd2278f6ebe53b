#include "backends/local/inventory.h"

#include <charconv>
#include <optional>
#include <utility>

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

std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  for (;;) {
    s = Trim(s);
    if (s.empty()) return out;
    size_t end = s.find_first_of(" \t");
    out.push_back(s.substr(0, end));
    if (end == std::string_view::npos) return out;
    s.remove_prefix(end);
  }
}

// A PCI address as npu-smi prints it: "0000:C1:00.0".
bool BusId(std::string_view s) {
  return s.size() == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.';
}

// The "used / total" pairs of an npu-smi cell, however it spaces them ("3161 / 65536",
// "59356/ 65536", "0    / 0"): around each '/', the word before it and the word after.
std::vector<std::pair<std::string_view, std::string_view>> UsagePairs(std::string_view cell) {
  std::vector<std::string_view> parts = Split(cell, '/');
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    std::vector<std::string_view> before = Words(parts[i]), after = Words(parts[i + 1]);
    pairs.emplace_back(before.empty() ? "" : before.back(), after.empty() ? "" : after.front());
  }
  return pairs;
}

}  // namespace

Result<std::vector<GpuSample>> ParseNpuSmi(std::string_view text) {
  std::vector<GpuSample> out;
  int line_no = 0;
  std::optional<int64_t> npu;  // the NPU row the next chip rows belong to
  std::string name;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = Trim(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_no;
    if (line.size() < 2 || line.front() != '|' || line.back() != '|') continue;  // borders
    std::vector<std::string_view> cells = Split(line.substr(1, line.size() - 2), '|');
    if (cells.size() < 3) continue;  // the version line, "No running processes found"
    if (cells[1].substr(0, 7) == "Process") break;  // the process table follows the devices
    if (cells[0].empty() || cells[0].front() < '0' || cells[0].front() > '9') continue;  // headers
    const std::string where = "npu-smi output line " + std::to_string(line_no) + ": ";
    std::vector<std::string_view> ids = Words(cells[0]);
    auto integer = [&](std::string_view v, const char* field) -> Result<int64_t> {
      std::optional<int64_t> n = Integer(v);
      if (!n || *n > 1024) {
        return InvalidArgument(where + field + ": expected an index, got \"" + std::string(v) +
                               "\"");
      }
      return *n;
    };
    if (!BusId(cells[1]) && cells[1] != "NA") {  // an NPU row: "ID NAME | HEALTH | ..."
      auto id = integer(ids[0], "NPU");
      if (!id.ok()) return id.status();
      if (ids.size() < 2) return InvalidArgument(where + "Name: missing");
      npu = *id;
      name = std::string(cells[0].substr(ids[1].data() - cells[0].data()));
      continue;
    }
    // A chip row: "CHIP [DEVICE] | BUS-ID | AICORE MEMORY-USAGE [HBM-USAGE]".
    if (!npu) return InvalidArgument(where + "a chip row before any NPU row");
    auto chip = integer(ids[0], "Chip");
    if (!chip.ok()) return chip.status();
    auto device = ids.size() > 1 ? integer(ids[1], "Device") : Result<int64_t>(*npu);
    if (!device.ok()) return device.status();
    GpuSample g;
    g.index = static_cast<int>(*device);
    g.name = name;
    g.uuid = "npu" + std::to_string(*npu) + ".chip" + std::to_string(*chip) +
             (cells[1] == "NA" ? "" : "@" + std::string(cells[1]));
    std::vector<std::string_view> usage = Words(cells[2]);
    if (usage.empty()) return InvalidArgument(where + "AICore(%): missing");
    if (usage[0] != "NA" && usage[0] != "-") {
      std::optional<int64_t> busy = Integer(usage[0]);
      if (!busy || *busy > 100) {
        return InvalidArgument(where + "AICore(%): expected 0..100, got \"" +
                               std::string(usage[0]) + "\"");
      }
      g.utilization = static_cast<double>(*busy) / 100.0;
    }
    // HBM where the table has it (the last pair), else the device memory.
    for (const auto& [used_text, total_text] : UsagePairs(cells[2])) {
      std::optional<int64_t> used = Integer(used_text);
      std::optional<int64_t> total = Integer(total_text);
      if (!used || !total) {
        return InvalidArgument(where + "Memory-Usage(MB): expected \"USED / TOTAL\", got \"" +
                               std::string(used_text) + " / " + std::string(total_text) + "\"");
      }
      if (*total > 0 || g.memory_total == 0) {
        g.memory_used = *used;
        g.memory_total = *total;
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

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
