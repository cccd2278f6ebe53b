#include "sim/compare.h"

#include <map>
#include <vector>

#include "sim/run_stats.h"

namespace tessera {
namespace {

using json = nlohmann::ordered_json;

struct FirstStart {
  std::string job_class;
  double queue_s = 0;
};

// Each job's first start: its class and queueing delay.
Result<std::map<std::string, FirstStart>> FirstStarts(const DecisionLogText& log) {
  std::map<std::string, FirstStart> starts;
  size_t line_no = 0;
  size_t at = 0;
  while (at < log.text.size()) {
    size_t end = log.text.find('\n', at);
    if (end == std::string_view::npos) end = log.text.size();
    const std::string_view line = log.text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (line.empty()) continue;
    const std::string where = log.name + ":" + std::to_string(line_no) + ": ";
    json d = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!d.is_object()) return InvalidArgument(where + "not a JSON object");
    auto kind = d.find("kind");
    if (kind == d.end() || !kind->is_string()) return InvalidArgument(where + "no \"kind\"");
    if (*kind != "start") continue;
    for (const char* field : {"job", "class"}) {
      if (!d.contains(field) || !d[field].is_string())
        return InvalidArgument(where + "a start without \"" + field + "\"");
    }
    for (const char* field : {"t_s", "submitted_s"}) {
      if (!d.contains(field) || !d[field].is_number())
        return InvalidArgument(where + "a start without \"" + field + "\"");
    }
    const std::string job_class = d["class"].get<std::string>();
    if (job_class == "inference") continue;
    const double queue = d["t_s"].get<double>() - d["submitted_s"].get<double>();
    if (queue < 0) return InvalidArgument(where + "a start before its submission");
    starts.try_emplace(d["job"].get<std::string>(), FirstStart{job_class, queue});
  }
  return starts;
}

}  // namespace

Result<json> CompareDecisionLogs(const DecisionLogText& base, const DecisionLogText& other) {
  Result<std::map<std::string, FirstStart>> a = FirstStarts(base);
  if (!a.ok()) return a.status();
  Result<std::map<std::string, FirstStart>> b = FirstStarts(other);
  if (!b.ok()) return b.status();
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_class;
  std::pair<std::vector<double>, std::vector<double>> all;
  size_t both = 0;
  for (const auto& [job, start] : *a) {
    auto it = b->find(job);
    if (it == b->end()) continue;
    ++both;
    auto& cls = by_class[start.job_class];
    cls.first.push_back(start.queue_s);
    cls.second.push_back(it->second.queue_s);
    all.first.push_back(start.queue_s);
    all.second.push_back(it->second.queue_s);
  }
  json per_class = json::object();
  for (auto& [name, values] : by_class)
    per_class[name] = {{"base", Summary(std::move(values.first))},
                       {"other", Summary(std::move(values.second))}};
  return json{
      {"jobs",
       {{"base_started", a->size()},
        {"other_started", b->size()},
        {"both", both},
        {"only_base", a->size() - both},
        {"only_other", b->size() - both}}},
      {"queue_s",
       {{"all",
         {{"base", Summary(std::move(all.first))}, {"other", Summary(std::move(all.second))}}},
        {"per_class", per_class}}}};
}

}  // namespace tessera
