#include "sim/openb_pods.h"

#include <algorithm>
#include <map>

#include "common/text.h"
#include "config/csv.h"

namespace tessera {
namespace {

// gpu_milli is the share of each GPU: 0 for a CPU-only pod, 1..1000 for a pod with one GPU,
// 1000 for a pod with several (every published variant keeps to this).
Status CheckShare(const CsvTable& t, const CsvRow& r, const TracePod& p) {
  const size_t col = *t.Column("gpu_milli");
  if (p.num_gpu == 0 && p.gpu_milli != 0) {
    return r.ErrorAt(col, "a pod without GPUs (num_gpu 0) asks for no share, got " +
                              std::to_string(p.gpu_milli));
  }
  if (p.num_gpu == 1 && p.gpu_milli == 0) {
    return r.ErrorAt(col, "a pod with a GPU asks for a share of 1..1000");
  }
  if (p.num_gpu > 1 && p.gpu_milli != 1000) {
    return r.ErrorAt(col, "a pod with " + std::to_string(p.num_gpu) +
                              " GPUs takes them whole (1000), got " + std::to_string(p.gpu_milli));
  }
  return Status::Ok();
}

// The models a pod may run on, "A|B|C" (empty: any).
std::vector<std::string> SplitSpec(std::string_view spec) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t bar = spec.find('|', start);
    if (bar == std::string_view::npos) bar = spec.size();
    if (bar > start) out.emplace_back(spec.substr(start, bar - start));
    start = bar + 1;
  }
  return out;
}

// An error at the row's gpu_spec for the first model the node list does not have.
Status CheckModels(const CsvTable& t, const CsvRow& r, const std::vector<std::string>& spec,
                   const std::vector<std::string>& known) {
  for (const std::string& m : spec) {
    if (std::find(known.begin(), known.end(), m) != known.end()) continue;
    std::vector<std::string_view> names(known.begin(), known.end());
    std::string hint = ClosestMatch(m, names);
    return r.ErrorAt(*t.Column("gpu_spec"),
                     "\"" + m + "\" is not a GPU model of the node list (" + JoinNames(known) +
                         ")" + (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
  }
  return Status::Ok();
}

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
    p.gpu_milli = get_int("gpu_milli", 0, 1000);
    if (ok) {
      if (Status share = CheckShare(t, r, p); !share.ok()) {
        errors.Add(share);
        ok = false;
      }
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
    if (has("gpu_spec")) p.spec = SplitSpec(*r.Text("gpu_spec"));
    if (known_models != nullptr) {
      if (Status known = CheckModels(t, r, p.spec, *known_models); !known.ok()) {
        errors.Add(known);
        continue;
      }
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
