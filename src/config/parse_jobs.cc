// Parsers for jobs and services, and the task request they share.
#include <cctype>

#include "config/parse.h"

namespace tessera::config_internal {
namespace {

const std::vector<std::string_view> kJobClasses = {"training", "finetune", "batch", "eval"};
const std::vector<std::string_view> kLevels = {"island",  "node",   "leaf", "spine",
                                               "cluster", "region", "any"};

void ParseDeviceRequest(YamlMap& parent, const RequestAccessor& request) {
  auto n = parent.Node("devices", Need::kOptional);
  if (!n) return;
  SpecBuilder& b = parent.builder();
  YamlMap m(b, parent.file(), *n, parent.path().Field("devices"), "a device request");
  if (!m.ok()) return;
  DeviceRequest& d = request(b.spec).devices;
  auto count = m.Int("count", 0, 1024);
  auto fraction = m.MilliValue("fraction", Need::kOptional, 1000);
  if (count && fraction) {
    m.Error(
        "set either \"count\" (whole devices) or \"fraction\" (a share of one device), "
        "not both");
  } else if (fraction) {
    if (*fraction == 0 || *fraction >= 1000) {
      m.ErrorAt("fraction",
                "a fraction must be above 0 and below 1 (0.001 to 0.999); use "
                "\"count\" for whole devices");
    } else {
      d.count = 1;
      d.milli_each = *fraction;
    }
  } else if (count) {
    d.count = static_cast<int32_t>(*count);
  } else if (!m.Has("count") && !m.Has("fraction")) {
    m.Error("a device request needs \"count\" (whole devices) or \"fraction\" (a share of one)");
  }
  if (auto k = m.Enum("kind", {"gpu", "npu", "cpu"})) d.kind = ParseDeviceKind(*k);
  d.labels = m.StrList("labels");
  d.min_memory = m.Memory("minMemory").value_or(0);
  m.List("models", Need::kOptional, [&](const YAML::Node& mn, const FieldPath& p, size_t k) {
    request(b.spec).devices.models.emplace_back();
    auto assign = [request, k](Spec& s, uint32_t id) {
      request(s).devices.models[k].model = DeviceModelId(id);
    };
    if (mn.IsScalar()) {
      b.AddRef(RefKind::kDeviceModel, mn.Scalar(), p, PosOf(m.file(), mn), assign);
      return;
    }
    YamlMap cm(b, m.file(), mn, p, "a model choice ({model, speed})");
    if (!cm.ok()) return;
    ParseRef(cm, "model", RefKind::kDeviceModel, Need::kRequired, assign);
    if (auto sp = cm.MilliValue("speed", Need::kOptional, 100000)) {
      if (*sp == 0) cm.ErrorAt("speed", "speed must be positive");
      request(b.spec).devices.models[k].speed = *sp;
    }
  });
}

// `command:` as a list (argv) or a string (run by /bin/sh -c); `env:` as a mapping of
// variable names to values.
void ParseCommand(YamlMap& m, size_t ji) {
  SpecBuilder& b = m.builder();
  std::vector<std::string> command;
  if (auto c = m.Node("command", Need::kOptional)) {
    command = c->IsScalar() ? std::vector<std::string>{"/bin/sh", "-c", c->Scalar()}
                            : m.StrList("command");
    if (command.empty() || command[0].empty()) {
      m.ErrorAt("command", "expected a program and its arguments (a list, or a shell line)");
    }
  }
  std::map<std::string, std::string> env = m.Labels("env");
  for (const auto& [name, value] : env) {
    bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char ch : name)
      ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
    if (!ok) m.ErrorAt("env", "\"" + name + "\" is not a variable name (letters, digits, _)");
    if (name.rfind("TESSERA_", 0) == 0) {
      m.ErrorAt("env", "\"" + name + "\": TESSERA_ variables are set by the agent");
    }
  }
  b.spec.jobs[ji].command = std::move(command);
  b.spec.jobs[ji].env = std::move(env);
}

}  // namespace

void ParseTaskRequest(YamlMap& m, const RequestAccessor& request) {
  SpecBuilder& b = m.builder();
  request(b.spec).cpu = m.MilliValue("cpu", Need::kRequired).value_or(0);
  request(b.spec).memory = m.Memory("memory", Need::kRequired).value_or(0);
  ParseDeviceRequest(m, request);
}

void ParseJob(YamlMap& m, size_t ji) {
  SpecBuilder& b = m.builder();
  auto job = [ji](Spec& s) -> Job& { return s.jobs[ji]; };
  job(b.spec).name = m.Str("name", Need::kRequired).value_or("");
  if (auto c = m.Enum("class", kJobClasses, Need::kRequired)) {
    job(b.spec).job_class = *ParseWorkloadClass(*c);
  }
  ParseRef(m, "tenant", RefKind::kTenant, Need::kRequired,
           [ji](Spec& s, uint32_t id) { s.jobs[ji].tenant = TenantId(id); });
  job(b.spec).priority = m.Str("priority").value_or("normal");
  job(b.spec).preemptible = m.Bool("preemptible");
  job(b.spec).checkpoint_interval = m.Duration("checkpointInterval").value_or(0);
  job(b.spec).runtime = m.Duration("runtime");
  if (auto d = m.Str("deadline")) {
    if (auto t = ParseTimestamp(*d)) {
      job(b.spec).deadline = *t;
    } else {
      m.ErrorAt("deadline",
                "expected a UTC timestamp such as 2026-12-10T08:00:00Z, got \"" + *d + "\"");
    }
  }
  job(b.spec).labels = m.Labels("labels");
  ParseCommand(m, ji);
  m.List("taskGroups", Need::kRequired, [&](const YAML::Node& n, const FieldPath& p, size_t gi) {
    job(b.spec).task_groups.emplace_back();
    YamlMap gm(b, m.file(), n, p, "a task group");
    if (!gm.ok()) return;
    job(b.spec).task_groups[gi].name = gm.Str("name").value_or("task" + std::to_string(gi));
    job(b.spec).task_groups[gi].count =
        static_cast<int32_t>(gm.Int("count", 1, 100000).value_or(1));
    ParseTaskRequest(
        gm, [ji, gi](Spec& s) -> TaskRequest& { return s.jobs[ji].task_groups[gi].request; });
  });
  if (auto gn = m.Node("gang", Need::kOptional)) {
    YamlMap gm(b, m.file(), *gn, m.path().Field("gang"), "a gang rule");
    if (gm.ok()) {
      GangRule& g = job(b.spec).gang;
      g.min_members = static_cast<int32_t>(gm.Int("minMembers", 1, 100000).value_or(0));
      if (auto r = gm.Enum("require", kLevels)) g.require = *ParseTopologyLevel(*r);
      if (auto pr = gm.Enum("prefer", kLevels)) g.prefer = *ParseTopologyLevel(*pr);
    }
  }
  size_t n = 0;
  ParseRefList(
      m, "datasets", RefKind::kDataset,
      [ji](Spec& s, size_t k, uint32_t id) { s.jobs[ji].datasets[k] = DatasetId(id); }, &n);
  job(b.spec).datasets.resize(n);
}

void ParseService(YamlMap& m, size_t si) {
  SpecBuilder& b = m.builder();
  auto svc = [si](Spec& s) -> Service& { return s.services[si]; };
  svc(b.spec).name = m.Str("name", Need::kRequired).value_or("");
  ParseRef(m, "tenant", RefKind::kTenant, Need::kRequired,
           [si](Spec& s, uint32_t id) { s.services[si].tenant = TenantId(id); });
  svc(b.spec).priority = m.Str("priority").value_or("high");
  svc(b.spec).labels = m.Labels("labels");
  if (auto rn = m.Node("replicas", Need::kRequired)) {
    YamlMap rm(b, m.file(), *rn, m.path().Field("replicas"), "replica bounds ({min, max})");
    if (rm.ok()) {
      auto lo = rm.Int("min", 0, 100000, Need::kRequired);
      auto hi = rm.Int("max", 1, 100000, Need::kRequired);
      if (lo && hi && *lo > *hi) {
        rm.ErrorAt("min", "min (" + std::to_string(*lo) + ") must not exceed max (" +
                              std::to_string(*hi) + ")");
      }
      svc(b.spec).min_replicas = static_cast<int32_t>(lo.value_or(1));
      svc(b.spec).max_replicas = static_cast<int32_t>(hi.value_or(1));
    }
  }
  if (auto rn = m.Node("replica", Need::kRequired)) {
    YamlMap rm(b, m.file(), *rn, m.path().Field("replica"), "a replica's resources");
    if (rm.ok()) {
      ParseTaskRequest(rm, [si](Spec& s) -> TaskRequest& { return s.services[si].replica; });
    }
  }
  svc(b.spec).latency_slo = m.Duration("latencySLO", Need::kRequired).value_or(0);
  svc(b.spec).service_time = m.Duration("serviceTime").value_or(0);
  if (svc(b.spec).service_time > svc(b.spec).latency_slo && svc(b.spec).latency_slo > 0) {
    m.ErrorAt("serviceTime", "the service time alone exceeds the latency SLO");
  }
  m.List("userRegions", Need::kOptional, [&](const YAML::Node& n, const FieldPath& p, size_t k) {
    svc(b.spec).user_regions.emplace_back();
    YamlMap um(b, m.file(), n, p, "a user region ({region, weight})");
    if (!um.ok()) return;
    ParseRef(um, "region", RefKind::kRegion, Need::kRequired, [si, k](Spec& s, uint32_t id) {
      s.services[si].user_regions[k].region = RegionId(id);
    });
    svc(b.spec).user_regions[k].weight = um.MilliValue("weight").value_or(1000);
  });
  if (auto ln = m.Node("load", Need::kOptional)) {
    YamlMap lm(b, m.file(), *ln, m.path().Field("load"), "a load signal");
    if (lm.ok()) {
      LoadSignal& l = svc(b.spec).load;
      l.peak_rps = lm.MilliValue("peakRps", Need::kRequired).value_or(0);
      l.rps_per_replica = lm.MilliValue("rpsPerReplica", Need::kRequired).value_or(0);
      if (l.rps_per_replica == 0 && lm.Has("rpsPerReplica")) {
        lm.ErrorAt("rpsPerReplica", "must be positive");
      }
      if (auto c = lm.Enum("curve", {"diurnal", "flat"})) l.curve = *c;
    }
  }
}

}  // namespace tessera::config_internal
