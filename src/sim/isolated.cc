#include "sim/isolated.h"

#include <vector>

#include "sched/constraints.h"

namespace tessera {

ClusterAssignment IsolateClusters(Spec& spec) {
  const size_t clusters = spec.clusters.size();
  // Devices per cluster and the models each has.
  std::vector<int64_t> devices(clusters, 0);
  std::vector<std::vector<bool>> has(clusters, std::vector<bool>(spec.device_models.size()));
  for (const Node& n : spec.nodes) {
    devices[n.cluster.value()] += static_cast<int64_t>(n.devices.size());
    for (const Device& d : n.devices)
      has[n.cluster.value()][d.model.value()] = true;
  }
  auto has_kind = [&](size_t c, DeviceKind kind) {
    for (size_t m = 0; m < spec.device_models.size(); ++m)
      if (has[c][m] && spec.device_models[m].kind == kind) return true;
    return false;
  };
  std::vector<int64_t> assigned(clusters, 0);
  ClusterAssignment out;
  std::vector<PolicyRule> rules;
  for (size_t t = 0; t < spec.tenants.size(); ++t) {
    if (!spec.tenants[t].children.empty()) continue;
    const TenantId tenant(static_cast<uint32_t>(t));
    // The models the tenant or an ancestor is guaranteed.
    std::vector<bool> guaranteed(spec.device_models.size(), false);
    for (std::optional<TenantId> a = tenant; a; a = spec.tenant(*a).parent) {
      for (const Quota& q : spec.tenant(*a).quotas)
        if (q.guaranteed > 0) guaranteed[q.model.value()] = true;
    }
    for (WorkloadClass cls :
         {WorkloadClass::kTraining, WorkloadClass::kFinetune, WorkloadClass::kBatch,
          WorkloadClass::kEval, WorkloadClass::kInference}) {
      Job probe;
      probe.tenant = tenant;
      probe.job_class = cls;
      const JobConstraints constraints = CompileConstraints(spec, probe);
      const std::string path = spec.tenants[t].path;
      const std::string cls_name(WorkloadClassName(cls));
      ConstrainRule body;
      for (DeviceKind kind : {DeviceKind::kGpu, DeviceKind::kNpu}) {
        std::optional<size_t> best;
        bool best_guaranteed = false;
        for (size_t c = 0; c < clusters; ++c) {
          if (constraints.verdicts[c] || !has_kind(c, kind) ||
              spec.clusters[c].tier == ClusterTier::kElastic) {
            continue;
          }
          bool g = false;
          for (size_t m = 0; m < guaranteed.size(); ++m)
            g = g || (guaranteed[m] && has[c][m] && spec.device_models[m].kind == kind);
          // Fewer assignments per device: compare a/d across clusters without division.
          const bool fuller =
              best && (assigned[c] + 1) * devices[*best] >= (assigned[*best] + 1) * devices[c];
          if (best && (best_guaranteed && !g)) continue;
          if (best && best_guaranteed == g && fuller) continue;
          best = c;
          best_guaranteed = g;
        }
        if (!best) continue;  // nowhere allowed: such jobs stay infeasible as they would anyway
        ++assigned[*best];
        out[path][cls_name][std::string(DeviceKindName(kind))] = spec.clusters[*best].name;
        body.allow_clusters.push_back(ClusterId(static_cast<uint32_t>(*best)));
      }
      if (body.allow_clusters.empty()) continue;
      PolicyRule rule;
      rule.name = "isolated:" + path + ":" + cls_name;
      rule.description = "baseline isolated: static home clusters";
      rule.match.tenants = {path};
      rule.match.classes = {cls};
      rule.body = body;
      rules.push_back(std::move(rule));
    }
  }
  for (PolicyRule& r : rules)
    spec.policies.push_back(std::move(r));
  return out;
}

}  // namespace tessera
