// Semantic validation of jobs and services: references, and requests no node (or no
// topology domain) of the fleet could ever satisfy.
#include <algorithm>
#include <set>

#include "config/resolve.h"
#include "model/capacity.h"

namespace tessera::config_internal {
namespace {

std::string ModelList(const Spec& s, const DeviceRequest& d) {
  if (d.models.empty()) return d.kind ? std::string(DeviceKindName(*d.kind)) : "gpu/npu";
  std::string out;
  for (const ModelChoice& c : d.models) {
    if (!c.model.valid()) continue;
    if (!out.empty()) out += "|";
    out += s.model(c.model).name;
  }
  return out;
}

// Checks that some node can host one task with `r`. Reports the tightest reason otherwise.
void CheckTaskFits(SpecBuilder& b, const TaskRequest& r, const std::string& path) {
  const Spec& s = b.fleet();
  for (const ModelChoice& c : r.devices.models) {
    if (!c.model.valid()) return;  // unresolved reference, already reported
  }
  if (s.nodes.empty()) return;  // no fleet in these files: nothing to check against
  const DeviceRequest& d = r.devices;
  int32_t need = d.count;
  auto accepted = [&](const Node& n) {
    int64_t ok = 0;
    for (const Device& dev : n.devices) {
      if (dev.model.valid() && d.Accepts(dev.model, s.model(dev.model))) ++ok;
    }
    return ok;
  };
  // Every submission is checked here: find a node that fits first, and only when none does
  // gather what the error names.
  for (const Node& n : s.nodes) {
    if (n.cpu >= r.cpu && n.memory >= r.memory && (need == 0 || accepted(n) >= need)) return;
  }
  Milli max_cpu = 0;
  MiB max_mem = 0;
  int64_t max_dev = 0;
  int64_t any_dev = 0;
  for (const Node& n : s.nodes) {
    int64_t ok = accepted(n);
    max_cpu = std::max(max_cpu, n.cpu);
    max_mem = std::max(max_mem, n.memory);
    max_dev = std::max(max_dev, ok);
    any_dev += ok;
  }
  if (need > 0 && any_dev == 0) {
    std::string what = ModelList(s, d);
    if (d.min_memory > 0) what += " with at least " + FormatMemory(d.min_memory);
    if (!d.labels.empty()) what += " labelled";
    for (const std::string& l : d.labels)
      what += " " + l;
    b.ErrorAt(path + ".devices", "impossible request: no device in the fleet is " + what);
  } else if (need > max_dev) {
    b.ErrorAt(path + ".devices.count", "impossible request: a task asks for " +
                                           std::to_string(need) + " " + ModelList(s, d) +
                                           " devices, but no node has more than " +
                                           std::to_string(max_dev));
  } else if (r.cpu > max_cpu) {
    b.ErrorAt(path + ".cpu", "impossible request: a task asks for " + FormatMilli(r.cpu) +
                                 " CPUs, but the largest node has " + FormatMilli(max_cpu));
  } else if (r.memory > max_mem) {
    b.ErrorAt(path + ".memory", "impossible request: a task asks for " + FormatMemory(r.memory) +
                                    " memory, but the largest node has " + FormatMemory(max_mem));
  } else {
    b.ErrorAt(path, "impossible request: no single node has " + std::to_string(need) + " " +
                        ModelList(s, d) + " devices together with " + FormatMilli(r.cpu) +
                        " CPUs and " + FormatMemory(r.memory) + " memory");
  }
}

void CheckModels(SpecBuilder& b, const DeviceRequest& d, const std::string& path) {
  const Spec& s = b.fleet();
  std::set<DeviceModelId> seen;
  for (size_t k = 0; k < d.models.size(); ++k) {
    DeviceModelId m = d.models[k].model;
    if (!m.valid()) continue;
    std::string mp = path + ".devices.models[" + std::to_string(k) + "]";
    if (!seen.insert(m).second) b.ErrorAt(mp, "model \"" + s.model(m).name + "\" listed twice");
    if (d.kind && s.model(m).kind != *d.kind) {
      b.ErrorAt(mp, "model \"" + s.model(m).name + "\" is a " +
                        std::string(DeviceKindName(s.model(m).kind)) +
                        ", but the request asks for " + std::string(DeviceKindName(*d.kind)));
    }
    if (s.model(m).memory < d.min_memory) {
      b.ErrorAt(mp, "model \"" + s.model(m).name + "\" has " + FormatMemory(s.model(m).memory) +
                        ", below the requested minMemory " + FormatMemory(d.min_memory));
    }
  }
}

void CheckPriority(SpecBuilder& b, const std::string& priority, const std::string& path) {
  if (!b.fleet().FindPriority(priority)) {
    std::string names;
    for (const PriorityClass& p : b.fleet().priority_classes) {
      names += (names.empty() ? "" : ", ") + p.name;
    }
    b.ErrorAt(path, "unknown priority class \"" + priority + "\"; declared: " + names);
  }
}

// A gang that must sit inside one island/node/leaf/spine/cluster: the whole job's devices
// must fit under one instance of that level somewhere.
void CheckGangTopology(SpecBuilder& b, const Job& job, const std::string& path) {
  const Spec& s = b.fleet();
  TopologyLevel req = job.gang.require;
  if (req == TopologyLevel::kAny || req == TopologyLevel::kRegion || s.nodes.empty()) return;
  if (job.task_groups.empty()) return;
  int64_t total = 0;
  for (const TaskGroup& g : job.task_groups) {
    if (g.request.devices.fractional()) return;  // shares: checked per task
    total += int64_t{g.count} * g.request.devices.count;
  }
  if (total == 0) return;
  // Devices acceptable to every group (a gang shares one topology domain).
  auto ok = [&](const Node&, const Device& dev) {
    if (!dev.model.valid()) return false;
    return std::all_of(job.task_groups.begin(), job.task_groups.end(), [&](const TaskGroup& g) {
      return g.request.devices.count == 0 ||
             g.request.devices.Accepts(dev.model, s.model(dev.model));
    });
  };
  int64_t best = 0;
  for (size_t ci = 0; ci < s.clusters.size(); ++ci) {
    LevelCapacity cap = ClusterCapacity(s, ClusterId(static_cast<uint32_t>(ci)), ok);
    best = std::max(best, cap[static_cast<size_t>(req)]);
    if (best >= total) return;  // one domain that holds the gang is enough
  }
  if (total > best) {
    b.ErrorAt(path + ".gang.require",
              "impossible request: the gang needs " + std::to_string(total) +
                  " devices within one " + std::string(TopologyLevelName(req)) +
                  ", but the largest " + std::string(TopologyLevelName(req)) + " holds " +
                  std::to_string(best) + " acceptable devices");
  }
}

}  // namespace

// FGD scores against the workload the configuration declares (its jobs and services): without
// any, a scheduler or weights rule naming it has nothing to score against.
void CheckFgdTarget(SpecBuilder& b) {
  if (!b.spec.jobs.empty() || !b.spec.services.empty()) return;
  const std::string why =
      "fgd scores against the typical jobs the configuration declares (jobs, services), and it "
      "declares none: declare some, or name another scorer";
  if (b.spec.scheduler.placement == "fgd") b.ErrorAt("scheduler.placement", why);
  for (size_t i = 0; i < b.spec.policies.size(); ++i) {
    const WeightsRule* w = std::get_if<WeightsRule>(&b.spec.policies[i].body);
    if (w != nullptr && w->placement == "fgd")
      b.ErrorAt("policies[" + std::to_string(i) + "].placement", why);
  }
}

void ValidateWorkloads(SpecBuilder& b) {
  CheckFgdTarget(b);
  const Spec& s = b.fleet();
  for (size_t i = 0; i < b.spec.jobs.size(); ++i) {
    const Job& j = b.spec.jobs[i];
    const std::string jp = "jobs[" + std::to_string(i) + "]";
    CheckPriority(b, j.priority, jp + ".priority");
    if (j.gang.min_members > j.TaskCount()) {
      b.ErrorAt(jp + ".gang.minMembers", "minMembers (" + std::to_string(j.gang.min_members) +
                                             ") exceeds the job's " +
                                             std::to_string(j.TaskCount()) + " tasks");
    }
    if (j.gang.prefer != TopologyLevel::kAny && j.gang.require != TopologyLevel::kAny &&
        j.gang.prefer > j.gang.require) {
      b.ErrorAt(jp + ".gang.prefer", "the preferred level is looser than the required one");
    }
    for (size_t g = 0; g < j.task_groups.size(); ++g) {
      std::string gp = jp + ".taskGroups[" + std::to_string(g) + "]";
      CheckModels(b, j.task_groups[g].request.devices, gp);
      b.CapacityCheck([&] { CheckTaskFits(b, j.task_groups[g].request, gp); });
    }
    b.CapacityCheck([&] { CheckGangTopology(b, j, jp); });
    // Datasets with residency pin the job to the regions all of them allow.
    std::optional<std::set<RegionId>> allowed;
    for (DatasetId d : j.datasets) {
      if (!d.valid() || s.datasets[d.value()].residency.empty()) continue;
      std::set<RegionId> here(s.datasets[d.value()].residency.begin(),
                              s.datasets[d.value()].residency.end());
      if (!allowed) {
        allowed = here;
      } else {
        std::set<RegionId> both;
        std::set_intersection(allowed->begin(), allowed->end(), here.begin(), here.end(),
                              std::inserter(both, both.begin()));
        allowed = both;
      }
    }
    if (allowed && allowed->empty()) {
      b.ErrorAt(jp + ".datasets",
                "impossible request: the datasets' residency rules have no "
                "region in common, so no region may process them together");
    }
  }
  for (size_t i = 0; i < b.spec.services.size(); ++i) {
    const Service& v = b.spec.services[i];
    const std::string sp = "services[" + std::to_string(i) + "]";
    CheckPriority(b, v.priority, sp + ".priority");
    CheckModels(b, v.replica.devices, sp + ".replica");
    b.CapacityCheck([&] { CheckTaskFits(b, v.replica, sp + ".replica"); });
  }
}

}  // namespace tessera::config_internal
