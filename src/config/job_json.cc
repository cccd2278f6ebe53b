#include "config/job_json.h"

namespace tessera {

using json = nlohmann::json;

namespace {

json RequestJson(const Spec& spec, const TaskRequest& r) {
  json models = json::array();
  for (const ModelChoice& c : r.devices.models)
    models.push_back({spec.model(c.model).name, c.speed});
  json d = {{"count", r.devices.count},
            {"milli_each", r.devices.milli_each},
            {"models", models},
            {"labels", r.devices.labels},
            {"min_memory", r.devices.min_memory}};
  if (r.devices.kind) d["kind"] = std::string(DeviceKindName(*r.devices.kind));
  return {{"cpu", r.cpu}, {"memory", r.memory}, {"devices", d}};
}

template <typename Map>
Result<uint32_t> Lookup(const Map& names, const json& name, const char* what) {
  const std::string& n = name.get_ref<const std::string&>();
  auto it = names.find(n);
  if (it == names.end()) {
    return NotFound(std::string(what) + " \"" + n + "\" is no longer in the configuration");
  }
  return it->second;
}

template <typename T, typename Key>
std::map<std::string, uint32_t, std::less<>> Index(const std::vector<T>& items, Key key) {
  std::map<std::string, uint32_t, std::less<>> out;
  for (size_t i = 0; i < items.size(); ++i)
    out.emplace(key(items[i]), static_cast<uint32_t>(i));
  return out;
}

}  // namespace

json ResolvedJobJson(const Spec& spec, const Job& job) {
  json groups = json::array();
  for (const TaskGroup& g : job.task_groups)
    groups.push_back(
        {{"name", g.name}, {"count", g.count}, {"request", RequestJson(spec, g.request)}});
  json datasets = json::array();
  for (DatasetId d : job.datasets)
    datasets.push_back(spec.datasets[d.value()].name);
  json out = {{"name", job.name},
              {"class", std::string(WorkloadClassName(job.job_class))},
              {"tenant", spec.tenants[job.tenant.value()].path},
              {"priority", job.priority},
              {"checkpoint_interval", job.checkpoint_interval},
              {"task_groups", groups},
              {"gang",
               {{"min_members", job.gang.min_members},
                {"require", std::string(TopologyLevelName(job.gang.require))},
                {"prefer", std::string(TopologyLevelName(job.gang.prefer))}}},
              {"datasets", datasets},
              {"labels", job.labels},
              {"max_round_trip", job.max_round_trip}};
  if (job.preemptible) out["preemptible"] = *job.preemptible;
  if (job.runtime) out["runtime"] = *job.runtime;
  if (!job.command.empty()) out["command"] = job.command;
  if (!job.env.empty()) out["env"] = job.env;
  if (job.deadline) out["deadline"] = *job.deadline;
  if (job.users_region) out["users_region"] = spec.region(*job.users_region).name;
  return out;
}

ResolvedJobReader::ResolvedJobReader(const Spec& spec)
    : spec_(spec),
      tenants_(Index(spec.tenants, [](const Tenant& t) { return t.path; })),
      models_(Index(spec.device_models, [](const DeviceModel& m) { return m.name; })),
      datasets_(Index(spec.datasets, [](const Dataset& d) { return d.name; })),
      regions_(Index(spec.regions, [](const Region& r) { return r.name; })) {}

Result<Job> ResolvedJobReader::Read(std::string_view text) const {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("not a resolved job");
  try {
    return FromJson(j);
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("not a resolved job: ") + e.what());
  }
}

Result<Job> ResolvedJobReader::FromJson(const json& j) const {
  Job job;
  job.name = j.at("name").get<std::string>();
  auto cls = ParseWorkloadClass(j.at("class").get<std::string>());
  if (!cls) return InvalidArgument("unknown class");
  job.job_class = *cls;
  auto tenant = Lookup(tenants_, j.at("tenant"), "tenant");
  if (!tenant.ok()) return tenant.status();
  job.tenant = TenantId(*tenant);
  job.priority = j.at("priority").get<std::string>();
  if (!spec_.FindPriority(job.priority)) {
    return NotFound("priority class \"" + job.priority + "\" is no longer in the configuration");
  }
  if (j.contains("preemptible")) job.preemptible = j["preemptible"].get<bool>();
  job.checkpoint_interval = j.at("checkpoint_interval").get<Millis>();
  for (const json& g : j.at("task_groups")) {
    TaskGroup& tg = job.task_groups.emplace_back();
    tg.name = g.at("name").get<std::string>();
    tg.count = g.at("count").get<int32_t>();
    const json& r = g.at("request");
    tg.request.cpu = r.at("cpu").get<Milli>();
    tg.request.memory = r.at("memory").get<MiB>();
    const json& d = r.at("devices");
    DeviceRequest& dr = tg.request.devices;
    dr.count = d.at("count").get<int32_t>();
    dr.milli_each = d.at("milli_each").get<Milli>();
    for (const json& m : d.at("models")) {
      auto id = Lookup(models_, m.at(0), "device model");
      if (!id.ok()) return id.status();
      dr.models.push_back({DeviceModelId(*id), m.at(1).get<Milli>()});
    }
    if (d.contains("kind")) dr.kind = ParseDeviceKind(d["kind"].get<std::string>());
    dr.labels = d.at("labels").get<std::vector<std::string>>();
    dr.min_memory = d.at("min_memory").get<MiB>();
  }
  const json& gang = j.at("gang");
  job.gang.min_members = gang.at("min_members").get<int32_t>();
  job.gang.require =
      ParseTopologyLevel(gang.at("require").get<std::string>()).value_or(TopologyLevel::kAny);
  job.gang.prefer =
      ParseTopologyLevel(gang.at("prefer").get<std::string>()).value_or(TopologyLevel::kAny);
  for (const json& name : j.at("datasets")) {
    auto id = Lookup(datasets_, name, "dataset");
    if (!id.ok()) return id.status();
    job.datasets.push_back(DatasetId(*id));
  }
  job.labels = j.at("labels").get<std::map<std::string, std::string>>();
  job.max_round_trip = j.at("max_round_trip").get<Millis>();
  if (j.contains("runtime")) job.runtime = j["runtime"].get<Millis>();
  if (j.contains("command")) job.command = j["command"].get<std::vector<std::string>>();
  if (j.contains("env")) job.env = j["env"].get<std::map<std::string, std::string>>();
  if (j.contains("deadline")) job.deadline = j["deadline"].get<TimeMs>();
  if (j.contains("users_region")) {
    auto id = Lookup(regions_, j["users_region"], "region");
    if (!id.ok()) return id.status();
    job.users_region = RegionId(*id);
  }
  return job;
}

}  // namespace tessera
