// Gavel's job traces (stanford-futuredata/gavel, scheduler/traces): one job per line, tab
// separated: job type, command, steps flag, needs-data-dir, total steps, arrival time (s),
// scale factor (GPUs). Speeds come from Gavel's isolated throughputs (steps/s per job type,
// scale factor and GPU model): the job's work is its steps at the fastest model's throughput,
// and its speed on each model is that model's throughput relative to the fastest. Scale
// factors beyond the table (16, 24, 32, 64) scale the largest measured one linearly; job
// types measured only on one GPU scale that one.
#include <array>
#include <cmath>
#include <map>

#include "config/csv.h"
#include "sim/workload.h"

namespace tessera {
namespace {

struct Throughputs {
  // (job type, scale) -> steps/s for v100, p100, k80.
  std::map<std::pair<std::string, int64_t>, std::array<double, 3>> table;
  std::optional<std::array<double, 3>> Find(const std::string& type, int64_t scale) const {
    auto it = table.find({type, scale});
    if (it != table.end()) return it->second;
    // The largest measured scale below.
    std::optional<std::pair<int64_t, std::array<double, 3>>> best;
    for (auto i = table.lower_bound({type, 0}); i != table.end() && i->first.first == type; ++i) {
      if (i->first.second < scale) best = {i->first.second, i->second};
    }
    if (!best) return std::nullopt;
    std::array<double, 3> t = best->second;
    for (double& v : t)
      v *= static_cast<double>(scale) / static_cast<double>(best->first);
    return t;
  }
};

Result<Throughputs> ReadThroughputs(std::string_view csv) {
  auto table = CsvTable::Parse("isolated_throughputs_v100_p100_k80.csv", csv);
  if (!table.ok()) return table.status();
  TESSERA_RETURN_IF_ERROR(table->RequireColumns(
      {"job_type", "scale_factor", "v100_steps_per_s", "p100_steps_per_s", "k80_steps_per_s"}));
  Throughputs t;
  CsvErrors errors;
  for (size_t i = 0; i < table->size(); ++i) {
    CsvRow row = table->row(i);
    auto type = row.NonEmpty("job_type");
    auto scale = row.Int("scale_factor", 1, 1024);
    if (!type.ok() || !scale.ok()) {
      errors.Add(type.ok() ? scale.status() : type.status());
      continue;
    }
    std::array<double, 3> v{};
    const char* cols[] = {"v100_steps_per_s", "p100_steps_per_s", "k80_steps_per_s"};
    bool ok = true;
    for (int k = 0; k < 3; ++k) {
      auto text = row.NonEmpty(cols[k]);
      if (!text.ok()) {
        errors.Add(text.status());
        ok = false;
        break;
      }
      char* end = nullptr;
      std::string s(*text);
      v[k] = std::strtod(s.c_str(), &end);
      // 0 is Gavel's mark for "does not fit on this model" (out of memory).
      if (end == s.c_str() || *end != '\0' || !(v[k] >= 0) || !std::isfinite(v[k])) {
        errors.Add(row.Error(std::string("column ") + cols[k] + ": expected a number >= 0, got \"" +
                             s + "\""));
        ok = false;
        break;
      }
    }
    if (ok) t.table[{std::string(*type), *scale}] = v;
  }
  TESSERA_RETURN_IF_ERROR(errors.ToStatus("isolated_throughputs_v100_p100_k80.csv"));
  return t;
}

std::vector<std::string_view> SplitTabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return fields;
}

bool ParseNumber(std::string_view text, double* out) {
  std::string s(text);
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && end != s.c_str() && *end == '\0' && std::isfinite(*out) && *out >= 0;
}

}  // namespace

Result<Workload> ParseGavelTrace(const Spec& spec, const std::string& name, std::string_view text,
                                 std::string_view throughputs_csv, const ImportOptions& options) {
  auto tput = ReadThroughputs(throughputs_csv);
  if (!tput.ok()) return tput.status();
  std::array<std::optional<DeviceModelId>, 3> models = {
      FindModelNoCase(spec, "v100"), FindModelNoCase(spec, "p100"), FindModelNoCase(spec, "k80")};
  if (!models[0] && !models[1] && !models[2]) {
    return InvalidArgument(name + ": the fleet has none of Gavel's models (V100, P100, K80)");
  }
  Workload w;
  CsvErrors errors;
  TenantId tenant = DefaultTenant(spec);
  LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    const int line_no = lines.line_no();
    auto bad = [&](const std::string& what) {
      errors.Add(InvalidArgument(name + ":" + std::to_string(line_no) + ": " + what));
    };
    std::vector<std::string_view> f = SplitTabs(line);
    if (f.size() != 7) {
      bad("expected 7 tab-separated fields (job type, command, steps flag, needs data dir, "
          "total steps, arrival time, scale factor), got " +
          std::to_string(f.size()));
      continue;
    }
    double steps = 0, arrival = 0, scale = 0;
    if (!ParseNumber(f[4], &steps) || steps <= 0) {
      bad("field 5 (total steps): expected a positive number, got \"" + std::string(f[4]) + "\"");
      continue;
    }
    if (!ParseNumber(f[5], &arrival)) {
      bad("field 6 (arrival time): expected seconds >= 0, got \"" + std::string(f[5]) + "\"");
      continue;
    }
    if (!ParseNumber(f[6], &scale) || scale < 1 || scale > 4096 || scale != std::floor(scale)) {
      bad("field 7 (scale factor): expected a whole number of GPUs, got \"" + std::string(f[6]) +
          "\"");
      continue;
    }
    std::string type(f[0]);
    auto t = tput->Find(type, static_cast<int64_t>(scale));
    if (!t) {
      bad("job type \"" + type + "\" has no throughput in the table");
      continue;
    }
    double fastest = 0;
    for (int k = 0; k < 3; ++k)
      if (models[k]) fastest = std::max(fastest, (*t)[k]);
    if (!(fastest > 0)) {
      bad("job type \"" + type + "\" runs on none of the fleet's Gavel models (throughput 0)");
      continue;
    }
    TraceJob tj;
    tj.job = TraceTrainingJob("gavel-" + std::to_string(line_no), tenant, options);
    Job& job = tj.job;
    job.labels["job_type"] = type;
    TaskGroup g;
    g.name = "worker";
    g.count = static_cast<int32_t>(scale);
    g.request.cpu = kMilliPerUnit;
    g.request.devices.count = 1;
    for (int k = 0; k < 3; ++k) {
      if (!models[k] || !((*t)[k] > 0)) continue;
      Milli speed = std::max<Milli>(1, std::llround((*t)[k] / fastest * kMilliPerUnit));
      g.request.devices.models.push_back({*models[k], speed});
    }
    job.task_groups.push_back(std::move(g));
    tj.work = std::max<Millis>(1000, std::llround(steps / fastest * 1000.0));
    job.runtime = tj.work;
    job.submit_time = std::llround(arrival * 1000.0);
    w.jobs.push_back(std::move(tj));
  }
  TESSERA_RETURN_IF_ERROR(errors.ToStatus(name));
  if (w.jobs.empty()) return InvalidArgument(name + ": no jobs in the trace");
  return w;
}

}  // namespace tessera
