#include "sim/openb_pods.h"

#include <algorithm>
#include <map>

#include "common/text.h"
#include "config/csv.h"

namespace tessera {
namespace {

Result<std::vector<TracePod>> FromTable(const CsvTable& t,
                                        const std::vector<std::string>* known_models) {
  // The placement columns are required; the others are absent from some published lists
  // (openb_pod_list_multigpu20.csv has only these five).
  TESSERA_RETURN_IF_ERROR(
      t.RequireColumns({"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}));
  auto has = [&](std::string_view col) { return t.Column(col).ok(); };
  std::vector<TracePod> pods;
  pods.reserve(t.size());
  CsvErrors errors;
  std::map<std::string, int> lines;  // pod name -> its line
  for (size_t i = 0; i < t.size(); ++i) {
    CsvRow r = t.row(i);
    if (Status s = r.CheckWidth(); !s.ok()) {
      errors.Add(s);
      continue;
    }
    TracePod p;
    bool ok = true;
    auto get_int = [&](std::string_view col, int64_t lo, int64_t hi) -> int64_t {
      auto v = r.Int(col, lo, hi);
      if (!v.ok()) {
        errors.Add(v.status());
        ok = false;
        return 0;
      }
      return *v;
    };
    auto name = r.NonEmpty("name");
    if (!name.ok()) {
      errors.Add(name.status());
      continue;
    }
    p.name = std::string(*name);
    if (auto [at, fresh] = lines.emplace(p.name, r.line()); !fresh) {
      errors.Add(r.ErrorAt(*t.Column("name"), "pod \"" + p.name + "\" is already on line " +
                                                  std::to_string(at->second)));
      continue;
    }
    p.cpu = get_int("cpu_milli", 0, int64_t{1} << 40);
    p.memory = get_int("memory_mib", 0, int64_t{1} << 40);
    p.num_gpu = static_cast<int32_t>(get_int("num_gpu", 0, 1024));
    // gpu_milli is the share of each GPU: 0 for a CPU-only pod, 1..1000 for a pod with one
    // GPU, 1000 for a pod with several (every published variant keeps to this).
    p.gpu_milli = get_int("gpu_milli", 0, 1000);
    if (ok && p.num_gpu == 0 && p.gpu_milli != 0) {
      errors.Add(r.ErrorAt(
          *t.Column("gpu_milli"),
          "a pod without GPUs (num_gpu 0) asks for no share, got " + std::to_string(p.gpu_milli)));
      ok = false;
    } else if (ok && p.num_gpu == 1 && p.gpu_milli == 0) {
      errors.Add(r.ErrorAt(*t.Column("gpu_milli"), "a pod with a GPU asks for a share of 1..1000"));
      ok = false;
    } else if (ok && p.num_gpu > 1 && p.gpu_milli != 1000) {
      errors.Add(r.ErrorAt(*t.Column("gpu_milli"), "a pod with " + std::to_string(p.num_gpu) +
                                                       " GPUs takes them whole (1000), got " +
                                                       std::to_string(p.gpu_milli)));
      ok = false;
    }
    auto time = [&](std::string_view col) -> std::optional<TimeMs> {
      if (!has(col)) return std::nullopt;
      auto text = r.Text(col);
      if (text.ok() && text->empty()) return std::nullopt;
      return get_int(col, 0, int64_t{1} << 40) * 1000;
    };
    p.creation = time("creation_time");
    p.deletion = time("deletion_time");
    p.scheduled = time("scheduled_time");
    if (!ok) continue;
    std::string_view spec = has("gpu_spec") ? *r.Text("gpu_spec") : std::string_view();
    size_t start = 0;
    while (start <= spec.size()) {
      size_t bar = spec.find('|', start);
      if (bar == std::string_view::npos) bar = spec.size();
      if (bar > start) p.spec.emplace_back(spec.substr(start, bar - start));
      start = bar + 1;
    }
    if (known_models != nullptr) {
      bool known = true;
      for (const std::string& m : p.spec) {
        if (std::find(known_models->begin(), known_models->end(), m) != known_models->end()) {
          continue;
        }
        std::vector<std::string_view> names(known_models->begin(), known_models->end());
        std::string hint = ClosestMatch(m, names);
        errors.Add(r.ErrorAt(*t.Column("gpu_spec"),
                             "\"" + m + "\" is not a GPU model of the node list (" +
                                 JoinNames(*known_models) + ")" +
                                 (hint.empty() ? "" : "; did you mean \"" + hint + "\"?")));
        known = false;
        break;
      }
      if (!known) continue;
    }
    if (has("qos")) p.qos = std::string(*r.Text("qos"));
    if (has("pod_phase")) p.phase = std::string(*r.Text("pod_phase"));
    pods.push_back(std::move(p));
  }
  TESSERA_RETURN_IF_ERROR(errors.ToStatus(t.name()));
  if (pods.empty()) return InvalidArgument(t.name() + ": no pods");
  return pods;
}

}  // namespace

Result<std::vector<TracePod>> ReadOpenbPods(const std::string& path,
                                            const std::vector<std::string>* known_models) {
  auto t = CsvTable::ReadFile(path);
  if (!t.ok()) return t.status();
  return FromTable(*t, known_models);
}

Result<std::vector<TracePod>> ParseOpenbPods(const std::string& name, std::string_view text,
                                             const std::vector<std::string>* known_models) {
  auto t = CsvTable::Parse(name, text);
  if (!t.ok()) return t.status();
  return FromTable(*t, known_models);
}

}  // namespace tessera
