#include "sched/policy_match.h"

#include <algorithm>

namespace tessera {
namespace {

bool UnderPath(const std::string& path, const std::string& prefix) {
  return path == prefix ||
         (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
          path[prefix.size()] == '/');
}

int32_t PriorityValue(const Spec& spec, const std::string& name) {
  const PriorityClass* p = spec.FindPriority(name);
  return p ? p->value : 0;
}

}  // namespace

bool MatchesJob(const Spec& spec, const Match& match, const Job& job) {
  if (!match.classes.empty() &&
      std::find(match.classes.begin(), match.classes.end(), job.job_class) == match.classes.end()) {
    return false;
  }
  if (!match.tenants.empty()) {
    const std::string& path = job.tenant.valid() ? spec.tenant(job.tenant).path : std::string();
    if (std::none_of(match.tenants.begin(), match.tenants.end(),
                     [&](const std::string& t) { return UnderPath(path, t); })) {
      return false;
    }
  }
  int32_t priority = PriorityValue(spec, job.priority);
  if (match.min_priority && priority < PriorityValue(spec, *match.min_priority)) return false;
  if (match.max_priority && priority > PriorityValue(spec, *match.max_priority)) return false;
  for (const auto& [k, v] : match.labels) {
    auto it = job.labels.find(k);
    if (it == job.labels.end() || it->second != v) return false;
  }
  if (!match.jobs.empty() &&
      std::find(match.jobs.begin(), match.jobs.end(), job.name) == match.jobs.end()) {
    return false;
  }
  return true;
}

Job ServiceAsJob(const Service& service) {
  Job j;
  j.name = service.name;
  j.job_class = WorkloadClass::kInference;
  j.tenant = service.tenant;
  j.priority = service.priority;
  j.labels = service.labels;
  j.task_groups.push_back({"replica", std::max(1, service.min_replicas), service.replica});
  j.gang.min_members = 1;
  return j;
}

std::vector<const PolicyRule*> MatchingRules(const Spec& spec, RuleKind kind, const Job& job) {
  std::vector<const PolicyRule*> rules;
  for (const PolicyRule& r : spec.policies) {
    if (r.kind() == kind && MatchesJob(spec, r.match, job)) rules.push_back(&r);
  }
  return rules;
}

const FallbackRule* FirstFallback(const Spec& spec, const Job& job) {
  for (const PolicyRule& r : spec.policies) {
    if (r.kind() == RuleKind::kFallback && MatchesJob(spec, r.match, job))
      return &std::get<FallbackRule>(r.body);
  }
  return nullptr;
}

Milli GroupSpeedOn(const Spec& spec, const Job& job, const TaskGroup& g, DeviceModelId model,
                   const FallbackRule* fallback) {
  if (!g.request.devices.models.empty()) return g.request.devices.SpeedOn(model);
  if (fallback != nullptr) {
    for (const ModelChoice& c : fallback->order)
      if (c.model == model && c.speed > 0) return c.speed;
  }
  return spec.model(model).speed[static_cast<size_t>(job.job_class)];
}

}  // namespace tessera
