// Tessera's native workload format: one JSON object per line (docs/simulation.md has the
// reference). Unknown fields are errors, so a typo does not silently change a run.
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "sim/workload.h"

namespace tessera {
namespace {

class LineError {
 public:
  LineError(const std::string& file, int line)
      : prefix_(file + ":" + std::to_string(line) + ": ") {}
  Status operator()(const std::string& field, const std::string& what) const {
    return InvalidArgument(prefix_ + (field.empty() ? "" : field + ": ") + what);
  }

 private:
  std::string prefix_;
};

Status CheckKeys(const nlohmann::json& obj, const std::set<std::string>& known,
                 const std::string& where, const LineError& err) {
  for (const auto& [k, v] : obj.items()) {
    if (!known.count(k)) return err(where + k, "unknown field");
  }
  return Status::Ok();
}

Result<double> Seconds(const nlohmann::json& obj, const char* key, const std::string& where,
                       const LineError& err, bool required, double fallback = 0) {
  if (!obj.contains(key)) {
    if (required) return err(where + key, "required (seconds)");
    return fallback;
  }
  const nlohmann::json& v = obj[key];
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
      v.get<double>() > 1e11) {
    return err(where + key, "expected a number of seconds >= 0");
  }
  return v.get<double>();
}

// The line's times: submitted, work at the nominal speed, the estimate, idle after.
Status ParseTimes(const nlohmann::json& o, const LineError& err, TraceJob& tj) {
  auto submit = Seconds(o, "submit", "", err, true);
  if (!submit.ok()) return submit.status();
  auto work = Seconds(o, "work", "", err, true);
  if (!work.ok()) return work.status();
  if (*work <= 0) return err("work", "expected a number of seconds > 0");
  tj.job.submit_time = std::llround(*submit * 1000);
  tj.work = std::llround(*work * 1000);
  if (o.contains("estimate")) {
    auto est = Seconds(o, "estimate", "", err, true);
    if (!est.ok()) return est.status();
    tj.job.runtime = std::llround(*est * 1000);
  }
  if (o.contains("deadline")) {
    auto deadline = Seconds(o, "deadline", "", err, true);
    if (!deadline.ok()) return deadline.status();
    if (*deadline < *submit) return err("deadline", "expected a time at or after submit");
    tj.job.deadline = std::llround(*deadline * 1000);
  }
  if (o.contains("idle_after")) {
    auto idle = Seconds(o, "idle_after", "", err, true);
    if (!idle.ok()) return idle.status();
    if (*idle <= 0) return err("idle_after", "expected a number of seconds > 0");
    tj.idle_after = std::llround(*idle * 1000);
  }
  return Status::Ok();
}

// Whose and how urgent: class, tenant, priority, preemptible.
Status ParseOwner(const Spec& spec, const nlohmann::json& o, const LineError& err, Job& job) {
  if (o.contains("class")) {
    auto c =
        o["class"].is_string() ? ParseWorkloadClass(o["class"].get<std::string>()) : std::nullopt;
    if (!c) return err("class", "expected training, finetune, batch, eval or inference");
    job.job_class = *c;
  } else {
    job.job_class = WorkloadClass::kBatch;
  }
  if (o.contains("tenant")) {
    auto t =
        o["tenant"].is_string() ? spec.FindTenant(o["tenant"].get<std::string>()) : std::nullopt;
    if (!t) return err("tenant", "not a tenant path of the fleet");
    job.tenant = *t;
  } else {
    job.tenant = DefaultTenant(spec);
    if (!job.tenant.valid()) return err("tenant", "required: the fleet has no default tenant");
  }
  job.priority = "normal";
  if (o.contains("priority")) {
    if (!o["priority"].is_string() || !spec.FindPriority(o["priority"].get<std::string>()))
      return err("priority", "not a priority class of the fleet");
    job.priority = o["priority"].get<std::string>();
  }
  if (o.contains("preemptible")) {
    if (!o["preemptible"].is_boolean()) return err("preemptible", "expected true or false");
    job.preemptible = o["preemptible"].get<bool>();
  }
  return Status::Ok();
}

// Task group `i` of the line's `tasks`.
Result<TaskGroup> ParseTaskGroup(const Spec& spec, const nlohmann::json& t, size_t i,
                                 const LineError& err) {
  std::string where = "tasks[" + std::to_string(i) + "].";
  if (!t.is_object()) return err(where, "expected an object");
  TESSERA_RETURN_IF_ERROR(
      CheckKeys(t, {"name", "count", "gpus", "gpu_share", "cpu", "memory", "models"}, where, err));
  TaskGroup g;
  g.name = "task" + std::to_string(i);
  if (t.contains("name")) {
    if (!t["name"].is_string() || t["name"].get<std::string>().empty())
      return err(where + "name", "expected a non-empty string");
    g.name = t["name"].get<std::string>();
  }
  if (t.contains("count")) {
    if (!t["count"].is_number_integer() || t["count"].get<int64_t>() < 1 ||
        t["count"].get<int64_t>() > 100000)
      return err(where + "count", "expected a whole number in 1..100000");
    g.count = t["count"].get<int32_t>();
  }
  if (t.contains("gpus")) {
    if (!t["gpus"].is_number_integer() || t["gpus"].get<int64_t>() < 0 ||
        t["gpus"].get<int64_t>() > 64)
      return err(where + "gpus", "expected a whole number in 0..64");
    g.request.devices.count = t["gpus"].get<int32_t>();
  }
  if (t.contains("gpu_share")) {
    if (t.contains("gpus")) return err(where + "gpu_share", "give gpus or gpu_share, not both");
    if (!t["gpu_share"].is_number() || !(t["gpu_share"].get<double>() > 0) ||
        t["gpu_share"].get<double>() > 1)
      return err(where + "gpu_share", "expected a fraction of one GPU in (0, 1]");
    g.request.devices.count = 1;
    g.request.devices.milli_each =
        std::max<Milli>(1, std::llround(t["gpu_share"].get<double>() * 1000));
  }
  if (t.contains("cpu")) {
    if (!t["cpu"].is_number() || t["cpu"].get<double>() < 0 || t["cpu"].get<double>() > 1e6)
      return err(where + "cpu", "expected a number of cores >= 0");
    g.request.cpu = std::llround(t["cpu"].get<double>() * 1000);
  }
  if (t.contains("memory")) {
    if (!t["memory"].is_string()) return err(where + "memory", "expected a size such as \"64Gi\"");
    auto m = ParseMemory(t["memory"].get<std::string>());
    if (!m.ok()) return err(where + "memory", m.status().message());
    g.request.memory = *m;
  }
  if (t.contains("models")) {
    if (!t["models"].is_object() || t["models"].empty())
      return err(where + "models", "expected an object of model name -> relative speed");
    for (const auto& [name, speed] : t["models"].items()) {
      auto id = spec.FindModel(name);
      if (!id) return err(where + "models." + name, "not a device model of the fleet");
      if (!speed.is_number() || !(speed.get<double>() > 0) || speed.get<double>() > 1000)
        return err(where + "models." + name, "expected a relative speed > 0 (1 = nominal)");
      g.request.devices.models.push_back({*id, std::llround(speed.get<double>() * 1000)});
    }
  }
  if (g.request.devices.count > 0 && g.request.devices.models.empty())
    g.request.devices.kind = DeviceKind::kGpu;
  return g;
}

// The gang's topology: required (a whole cluster unless said) and preferred; an elastic
// gang's minimum of tasks (after the task groups: at most the job's tasks).
Status ParseGang(const nlohmann::json& o, const LineError& err, Job& job) {
  job.gang.require = TopologyLevel::kCluster;
  if (o.contains("gang")) {
    const nlohmann::json& g = o["gang"];
    if (!g.is_object()) return err("gang", "expected an object");
    TESSERA_RETURN_IF_ERROR(CheckKeys(g, {"require", "prefer", "min_members"}, "gang.", err));
    if (g.contains("min_members")) {
      const nlohmann::json& m = g["min_members"];
      if (!m.is_number_integer() || m.get<int64_t>() < 1 || m.get<int64_t>() > job.TaskCount())
        return err("gang.min_members", "expected a whole number from 1 to the job's " +
                                           std::to_string(job.TaskCount()) + " tasks");
      job.gang.min_members = m.get<int32_t>();
    }
    for (const char* key : {"require", "prefer"}) {
      if (!g.contains(key)) continue;
      auto level =
          g[key].is_string() ? ParseTopologyLevel(g[key].get<std::string>()) : std::nullopt;
      if (!level)
        return err(std::string("gang.") + key,
                   "expected island, node, leaf, spine, cluster or region");
      (std::string(key) == "require" ? job.gang.require : job.gang.prefer) = *level;
    }
  }
  return Status::Ok();
}

Result<TraceJob> ParseLine(const Spec& spec, const nlohmann::json& o, const LineError& err,
                           const ImportOptions& options) {
  if (!o.is_object()) return err("", "expected a JSON object");
  TESSERA_RETURN_IF_ERROR(
      CheckKeys(o,
                {"name", "submit", "work", "estimate", "class", "tenant", "priority", "preemptible",
                 "checkpoint", "tasks", "gang", "labels", "idle_after", "deadline"},
                "", err));
  TraceJob tj;
  Job& job = tj.job;
  if (!o.contains("name") || !o["name"].is_string() || o["name"].get<std::string>().empty())
    return err("name", "required, a non-empty string");
  job.name = o["name"].get<std::string>();
  TESSERA_RETURN_IF_ERROR(ParseTimes(o, err, tj));
  TESSERA_RETURN_IF_ERROR(ParseOwner(spec, o, err, job));
  auto ckpt = Seconds(o, "checkpoint", "", err, false,
                      static_cast<double>(options.default_checkpoint) / 1000);
  if (!ckpt.ok()) return ckpt.status();
  job.checkpoint_interval = std::llround(*ckpt * 1000);
  if (o.contains("labels")) {
    if (!o["labels"].is_object()) return err("labels", "expected an object of strings");
    for (const auto& [k, v] : o["labels"].items()) {
      if (!v.is_string()) return err("labels." + k, "expected a string");
      job.labels[k] = v.get<std::string>();
    }
  }
  if (!o.contains("tasks") || !o["tasks"].is_array() || o["tasks"].empty())
    return err("tasks", "required, a non-empty list of task groups");
  for (size_t i = 0; i < o["tasks"].size(); ++i) {
    Result<TaskGroup> g = ParseTaskGroup(spec, o["tasks"][i], i, err);
    if (!g.ok()) return g.status();
    job.task_groups.push_back(std::move(*g));
  }
  TESSERA_RETURN_IF_ERROR(ParseGang(o, err, job));
  return tj;
}

}  // namespace

Result<Workload> ParseJsonlJobs(const Spec& spec, const std::string& name, std::string_view text,
                                const ImportOptions& options) {
  Workload w;
  std::vector<std::string> errors;
  size_t error_count = 0;
  std::set<std::string> names;
  LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    LineError err(name, lines.line_no());
    nlohmann::json o = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    Result<TraceJob> job = o.is_discarded() ? Result<TraceJob>(err("", "not valid JSON"))
                                            : ParseLine(spec, o, err, options);
    if (job.ok() && !names.insert(job->job.name).second)
      job = err("name", "\"" + job->job.name + "\" is used by an earlier line");
    if (!job.ok()) {
      if (++error_count <= 20) errors.push_back(job.status().message());
      continue;
    }
    w.jobs.push_back(std::move(*job));
  }
  if (error_count) {
    std::string msg = name + ": " + std::to_string(error_count) + " malformed line(s)";
    for (const std::string& e : errors)
      msg += "\n  " + e;
    if (error_count > errors.size())
      msg += "\n  ... and " + std::to_string(error_count - errors.size()) + " more";
    return InvalidArgument(msg);
  }
  if (w.jobs.empty()) return InvalidArgument(name + ": no jobs in the file");
  return w;
}

}  // namespace tessera
