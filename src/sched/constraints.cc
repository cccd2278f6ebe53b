#include "sched/constraints.h"

#include <algorithm>
#include <map>

#include "sched/fleet_view.h"
#include "sched/policy_match.h"

namespace tessera {
namespace {

template <typename T>
bool Contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Why `rule` excludes `cluster`, if it does.
std::optional<Reason> Excludes(const ConstrainRule& rule, ClusterId id, const Cluster& c) {
  if (!rule.allow_regions.empty() && !Contains(rule.allow_regions, c.region)) {
    return Reason::kRegionNotAllowed;
  }
  if (Contains(rule.deny_regions, c.region)) return Reason::kRegionNotAllowed;
  if (!rule.allow_clusters.empty() && !Contains(rule.allow_clusters, id)) {
    return Reason::kClusterNotAllowed;
  }
  if (Contains(rule.deny_clusters, id)) return Reason::kClusterNotAllowed;
  if (!rule.tier_order.empty() && !Contains(rule.tier_order, c.tier)) {
    return Reason::kTierNotAllowed;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::pair<Milli, ModelMask>> ModelPreference(const Spec& spec, const Job& job,
                                                         ModelMask accepted) {
  std::map<DeviceModelId, Milli> listed;  // the job's own lists, over all task groups
  for (const TaskGroup& g : job.task_groups) {
    for (const ModelChoice& c : g.request.devices.models) {
      auto [it, fresh] = listed.emplace(c.model, c.speed);
      if (!fresh) it->second = std::max(it->second, c.speed);
    }
  }
  // rank -> (speed, models); lower rank first.
  std::map<int64_t, std::pair<Milli, ModelMask>> ranks;
  const FallbackRule* fallback = listed.empty() ? FirstFallback(spec, job) : nullptr;
  for (size_t m = 0; m < spec.device_models.size(); ++m) {
    if (!((accepted >> m) & 1)) continue;
    DeviceModelId id(static_cast<uint32_t>(m));
    int64_t rank = 0;
    Milli speed = 1000;
    if (!listed.empty()) {
      auto it = listed.find(id);
      speed = it == listed.end() ? 1000 : it->second;
      rank = -speed;
    } else if (fallback != nullptr) {
      auto it = std::find_if(fallback->order.begin(), fallback->order.end(),
                             [&](const ModelChoice& c) { return c.model == id; });
      rank = it - fallback->order.begin();
      speed = it != fallback->order.end() && it->speed > 0
                  ? it->speed
                  : spec.model(id).speed[static_cast<size_t>(job.job_class)];
    } else {
      // The catalog's speed of the model for the job's class.
      speed = spec.model(id).speed[static_cast<size_t>(job.job_class)];
      rank = -speed;
    }
    auto& slot = ranks.try_emplace(rank, speed, ModelMask{0}).first->second;
    slot.second |= ModelMask{1} << m;
  }
  std::vector<std::pair<Milli, ModelMask>> out;
  for (const auto& [rank, step] : ranks)
    out.push_back(step);
  return out;
}

JobConstraints CompileConstraints(const Spec& spec, const Job& job) {
  JobConstraints out;
  out.verdicts.assign(spec.clusters.size(), std::nullopt);
  out.excluded_by.assign(spec.clusters.size(), "");
  auto exclude = [&](size_t c, Reason r, const std::string& by) {
    if (out.verdicts[c]) return;  // the first exclusion names the cause
    out.verdicts[c] = r;
    out.excluded_by[c] = by;
  };
  for (const PolicyRule* r : MatchingRules(spec, RuleKind::kConstrain, job)) {
    const auto& rule = std::get<ConstrainRule>(r->body);
    if (out.tier_order.empty()) out.tier_order = rule.tier_order;
    if (rule.cross_region && !*rule.cross_region) out.cross_region = false;
    for (size_t c = 0; c < spec.clusters.size(); ++c) {
      ClusterId id(static_cast<uint32_t>(c));
      if (auto why = Excludes(rule, id, spec.cluster(id))) exclude(c, *why, "rule " + r->name);
    }
  }
  if (out.tier_order.empty()) {
    out.tier_order = {ClusterTier::kDedicated, ClusterTier::kShared, ClusterTier::kElastic};
  }
  // Elastic (cloud) clusters are for bursting: open only to a job whose first matching burst
  // rule names them (or names none).
  std::vector<const PolicyRule*> burst = MatchingRules(spec, RuleKind::kBurst, job);
  for (size_t c = 0; c < spec.clusters.size(); ++c) {
    if (spec.clusters[c].tier != ClusterTier::kElastic) continue;
    ClusterId id(static_cast<uint32_t>(c));
    if (burst.empty()) {
      exclude(c, Reason::kTierNotAllowed, "elastic: no burst rule matches the job");
      continue;
    }
    const auto& rule = std::get<BurstRule>(burst.front()->body);
    if (!rule.clusters.empty() && !Contains(rule.clusters, id)) {
      exclude(c, Reason::kClusterNotAllowed, "burst rule " + burst.front()->name);
    }
  }
  if (job.users_region && job.users_region->value() < spec.regions.size()) {
    const RegionPaths paths = ComputeRegionPaths(spec);
    const auto& from = paths.latency[job.users_region->value()];
    for (size_t c = 0; c < spec.clusters.size(); ++c) {
      const std::optional<Millis> one_way = from[spec.clusters[c].region.value()];
      if (one_way && 2 * *one_way <= job.max_round_trip) continue;
      exclude(c, Reason::kRegionNotAllowed,
              "latency: round trip from " + spec.regions[job.users_region->value()].name + " " +
                  (one_way ? FormatDuration(2 * *one_way) : std::string("unreachable")) + " > " +
                  FormatDuration(job.max_round_trip));
    }
  }
  for (DatasetId d : job.datasets) {
    if (!d.valid() || d.value() >= spec.datasets.size()) continue;
    const Dataset& ds = spec.datasets[d.value()];
    if (ds.residency.empty()) continue;
    for (size_t c = 0; c < spec.clusters.size(); ++c) {
      if (!Contains(ds.residency, spec.clusters[c].region)) {
        exclude(c, Reason::kDataResidency, "residency of dataset " + ds.name);
      }
    }
  }
  return out;
}

}  // namespace tessera
