#include "sched/fragmentation.h"

#include <map>
#include <tuple>

namespace tessera {

double TargetWorkload::Fragmentation(Milli cpu_free, std::span<const uint16_t> free,
                                     ModelMask node_models) const {
  int64_t total = 0;
  for (uint16_t g : free)
    total += g;
  if (total == 0) return 0;
  // Buckets in the measure's own order: Q1 lack both, Q2 lack devices, Q3 fits, Q4 lack CPU,
  // XL / XR CPU-only typical tasks, NA model not on the node. Q3's partial devices go to Q2.
  double q1 = 0, q2 = 0, q4 = 0, xl = 0, xr = 0, na = 0;
  const double g_total = static_cast<double>(total);
  for (const TypicalTask& t : tasks_) {
    if (t.milli == 0) {
      (cpu_free >= t.cpu ? xl : xr) += t.weight * g_total;
      continue;
    }
    if ((t.models & node_models) == 0) {
      na += t.weight * g_total;
      continue;
    }
    int32_t hosts = 0;
    int64_t too_small = 0;
    for (uint16_t g : free) {
      if (g >= t.milli) {
        ++hosts;
      } else {
        too_small += g;
      }
    }
    bool host = hosts >= t.count;
    bool cpu = cpu_free >= t.cpu;
    if (host && cpu) {
      q2 += t.weight * static_cast<double>(too_small);
    } else if (host) {
      q4 += t.weight * g_total;
    } else if (cpu) {
      q2 += t.weight * g_total;
    } else {
      q1 += t.weight * g_total;
    }
  }
  return q1 + q2 + q4 + xl + xr + na;
}

TargetWorkload TargetFromRequests(const Spec& spec,
                                  const std::vector<std::pair<const TaskRequest*, int64_t>>& reqs) {
  std::vector<TypicalTask> tasks;
  std::map<std::tuple<Milli, Milli, int32_t, ModelMask>, size_t> index;
  double total = 0;
  for (const auto& [request, count] : reqs) {
    TaskShape s = MakeTaskShape(spec, *request);
    TypicalTask t{s.cpu, s.cpu_only() ? 0 : s.milli, s.cpu_only() ? 0 : s.count, s.models, 0};
    auto [it, fresh] =
        index.emplace(std::make_tuple(t.cpu, t.milli, t.count, t.models), tasks.size());
    if (fresh) tasks.push_back(t);
    tasks[it->second].weight += static_cast<double>(count);
    total += static_cast<double>(count);
  }
  std::vector<std::pair<TaskShape, double>> shapes;
  for (TypicalTask& t : tasks) {
    TaskShape s;
    s.count = t.count;
    s.milli = t.milli;
    s.models = t.models;
    shapes.push_back({s, t.weight});
    t.weight /= total;
  }
  return TargetWorkload(std::move(tasks), PinnedDemand(shapes));
}

std::vector<std::pair<ModelMask, double>> PinnedDemand(
    const std::vector<std::pair<TaskShape, double>>& shapes) {
  std::map<ModelMask, double> by_mask;
  double total = 0;
  for (const auto& [s, n] : shapes) {
    if (s.cpu_only()) continue;
    double demand = n * static_cast<double>(s.total_milli());
    total += demand;
    if (s.models != kAnyAccelerator) by_mask[s.models] += demand;
  }
  std::vector<std::pair<ModelMask, double>> out;
  for (const auto& [mask, d] : by_mask)
    out.push_back({mask, d / total});
  return out;
}

TargetWorkload DeclaredTarget(const Spec& spec) {
  std::vector<std::pair<const TaskRequest*, int64_t>> reqs;
  for (const Job& j : spec.jobs)
    for (const TaskGroup& g : j.task_groups)
      reqs.push_back({&g.request, g.count});
  for (const Service& s : spec.services)
    reqs.push_back({&s.replica, std::max(1, s.min_replicas)});
  return TargetFromRequests(spec, reqs);
}

}  // namespace tessera
