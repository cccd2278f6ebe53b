#include "sched/victims.h"

#include <algorithm>

namespace tessera {

void RankVictims(std::vector<VictimCandidate>& candidates, size_t limit) {
  std::sort(candidates.begin(), candidates.end(),
            [](const VictimCandidate& a, const VictimCandidate& b) {
              if (a.priority != b.priority) return a.priority < b.priority;
              if (a.cost != b.cost) return a.cost < b.cost;
              if ((a.shrink_to > 0) != (b.shrink_to > 0)) return a.shrink_to > 0;
              return a.key > b.key;
            });
  if (candidates.size() > limit) candidates.resize(limit);
}

bool RuleAdmitsVictim(const Spec& spec, const CellState& cell, const PreemptionRule* rule,
                      const VictimView& victim, bool reclaimed) {
  const bool preemptible_only = rule ? rule->victims_preemptible_only : true;
  if (!victim.preemptible && !reclaimed && preemptible_only) return false;
  if (!rule) return true;
  if (!rule->allow && !reclaimed) return false;
  if (!rule->victim_classes.empty() &&
      std::find(rule->victim_classes.begin(), rule->victim_classes.end(), victim.job.job_class) ==
          rule->victim_classes.end())
    return false;
  if (rule->victim_max_priority) {
    const PriorityClass* max = spec.FindPriority(*rule->victim_max_priority);
    if (max && victim.priority > max->value) return false;
  }
  for (const Placement& p : victim.placements) {
    const ClusterId cl = spec.node(cell.spec_node(p.node)).cluster;
    if (!rule->clusters.empty() &&
        std::find(rule->clusters.begin(), rule->clusters.end(), cl) == rule->clusters.end())
      return false;
    const RegionId region = spec.cluster(cl).region;
    if (!rule->regions.empty() &&
        std::find(rule->regions.begin(), rule->regions.end(), region) == rule->regions.end())
      return false;
  }
  return true;
}

bool FreesModels(const CellState& cell, std::span<const Placement> placements, ModelMask mask) {
  for (const Placement& p : placements) {
    auto devices = cell.devices(p.node);
    for (const DeviceUse& u : p.devices)
      if ((mask >> devices[u.index].model) & 1) return true;
  }
  return mask == 0 && !placements.empty();
}

}  // namespace tessera
