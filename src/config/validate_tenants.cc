// Semantic validation of the tenant tree (quotas) and of policy rules.
#include <map>
#include <set>

#include "config/resolve.h"

namespace tessera::config_internal {
namespace {

std::string Devices(Milli m) {
  return FormatMilli(m);
}

// The nearest limit for `model` on `t` or its ancestors; nullopt = unlimited.
std::optional<Milli> EffectiveLimit(const Spec& s, std::optional<TenantId> t, DeviceModelId model) {
  while (t) {
    const Tenant& tenant = s.tenant(*t);
    if (const Quota* q = tenant.QuotaFor(model); q && q->limit) return q->limit;
    t = tenant.parent;
  }
  return std::nullopt;
}

int64_t FleetDevices(const Spec& s, DeviceModelId model) {
  int64_t n = 0;
  for (const Node& node : s.nodes) {
    for (const Device& d : node.devices)
      n += d.model == model ? 1 : 0;
  }
  return n;
}

void CheckMatch(SpecBuilder& b, const Match& m, const std::string& path) {
  const Spec& s = b.spec;
  for (const auto* p : {&m.min_priority, &m.max_priority}) {
    if (*p && !s.FindPriority(**p)) {
      b.ErrorAt(path + (p == &m.min_priority ? ".minPriority" : ".maxPriority"),
                "unknown priority class \"" + **p + "\"");
    }
  }
  if (m.min_priority && m.max_priority && s.FindPriority(*m.min_priority) &&
      s.FindPriority(*m.max_priority) &&
      s.FindPriority(*m.min_priority)->value > s.FindPriority(*m.max_priority)->value) {
    b.ErrorAt(path + ".minPriority", "minPriority is above maxPriority: the rule matches nothing");
  }
  for (size_t i = 0; i < m.tenants.size(); ++i) {
    if (!s.FindTenant(m.tenants[i])) {
      b.ErrorAt(
          path + ".tenants[" + std::to_string(i) + "]",
          "unknown tenant \"" + m.tenants[i] + "\" (use the full path, e.g. org/dept/project)");
    }
  }
}

}  // namespace

void ValidateTenants(SpecBuilder& b) {
  const Spec& s = b.spec;
  std::map<DeviceModelId, Milli> root_guarantees;
  std::map<DeviceModelId, std::string> root_guarantee_path;
  for (size_t i = 0; i < s.tenants.size(); ++i) {
    const Tenant& t = s.tenants[i];
    const std::string tp = b.tenant_paths[i].merged;
    std::set<DeviceModelId> seen;
    for (const Quota& q : t.quotas) {
      if (!q.model.valid()) continue;
      const std::string& model = s.model(q.model).name;
      std::string qp = tp + ".quotas." + model;
      if (!seen.insert(q.model).second) {
        b.ErrorAt(qp, "two quotas for \"" + model + "\"");
        continue;
      }
      if (q.limit && q.guaranteed > *q.limit) {
        b.ErrorAt(qp + ".guaranteed", "guaranteed (" + Devices(q.guaranteed) +
                                          ") exceeds the limit (" + Devices(*q.limit) + ")");
      }
      if (t.parent) {
        auto parent_limit = EffectiveLimit(s, t.parent, q.model);
        Milli mine = q.limit.value_or(q.guaranteed);
        if (parent_limit && mine > *parent_limit) {
          b.ErrorAt(qp + (q.limit ? ".limit" : ".guaranteed"),
                    "quota of \"" + t.path + "\" for " + model + " (" + Devices(mine) +
                        ") is above its parent's limit (" + Devices(*parent_limit) + ")");
        }
      } else {
        root_guarantees[q.model] += q.guaranteed;
        root_guarantee_path.emplace(q.model, qp + ".guaranteed");
      }
    }
    // The children split the parent's guarantee; together they cannot be promised more.
    std::map<DeviceModelId, Milli> child_sum;
    for (TenantId c : t.children) {
      for (const Quota& q : s.tenant(c).quotas) {
        if (q.model.valid()) child_sum[q.model] += q.guaranteed;
      }
    }
    // A guarantee must be backed by the parent's: a parent without a quota for the model
    // guarantees its subtree nothing of it.
    for (const auto& [model, sum] : child_sum) {
      const Quota* mine = t.QuotaFor(model);
      Milli backed = mine ? mine->guaranteed : 0;
      if (sum > backed) {
        std::string where = mine ? tp + ".quotas." + s.model(model).name + ".guaranteed"
                                 : b.tenant_paths[t.children.front().value()].merged;
        b.ErrorAt(where, "the children of \"" + t.path + "\" are guaranteed " + Devices(sum) + " " +
                             s.model(model).name + " in total, more than its own guarantee (" +
                             Devices(backed) + ")");
      }
    }
  }
  b.CapacityCheck([&] {
    for (const auto& [model, sum] : root_guarantees) {
      int64_t have = FleetDevices(s, model);
      if (sum > have * kMilliPerUnit) {
        b.ErrorAt(root_guarantee_path[model],
                  "the tenants are guaranteed " + Devices(sum) + " " + s.model(model).name +
                      " in total, but the fleet has only " + std::to_string(have));
      }
    }
  });
}

void ValidatePolicies(SpecBuilder& b) {
  const Spec& s = b.spec;
  for (size_t i = 0; i < s.policies.size(); ++i) {
    const PolicyRule& r = s.policies[i];
    const std::string rp = "policies[" + std::to_string(i) + "]";
    CheckMatch(b, r.match, rp + ".match");
    if (const auto* cr = std::get_if<ConstrainRule>(&r.body)) {
      const ConstrainRule* c = cr;
      for (RegionId reg : c->deny_regions) {
        if (reg.valid() && std::find(c->allow_regions.begin(), c->allow_regions.end(), reg) !=
                               c->allow_regions.end()) {
          b.ErrorAt(rp + ".denyRegions",
                    "region \"" + s.region(reg).name + "\" is both allowed and denied");
        }
      }
      for (ClusterId cl : c->deny_clusters) {
        if (cl.valid() && std::find(c->allow_clusters.begin(), c->allow_clusters.end(), cl) !=
                              c->allow_clusters.end()) {
          b.ErrorAt(rp + ".denyClusters",
                    "cluster \"" + s.cluster(cl).name + "\" is both allowed and denied");
        }
      }
      std::set<ClusterTier> tiers(c->tier_order.begin(), c->tier_order.end());
      if (tiers.size() != c->tier_order.size()) {
        b.ErrorAt(rp + ".tiers", "a tier is listed twice");
      }
    } else if (const auto* p = std::get_if<PreemptionRule>(&r.body)) {
      if (p->victim_max_priority && !s.FindPriority(*p->victim_max_priority)) {
        b.ErrorAt(rp + ".victimMaxPriority",
                  "unknown priority class \"" + *p->victim_max_priority + "\"");
      }
    } else if (const auto* bu = std::get_if<BurstRule>(&r.body)) {
      if (bu->budget_per_day == 0) {
        b.ErrorAt(rp + ".budgetPerDay", "a burst budget must be positive");
      }
      bool any_elastic = false;
      for (const Cluster& cl : s.clusters)
        any_elastic |= cl.tier == ClusterTier::kElastic;
      if (!any_elastic) b.ErrorAt(rp, "a burst rule needs at least one cluster of tier elastic");
      for (size_t k = 0; k < bu->clusters.size(); ++k) {
        ClusterId cl = bu->clusters[k];
        if (cl.valid() && s.cluster(cl).tier != ClusterTier::kElastic) {
          b.ErrorAt(rp + ".clusters[" + std::to_string(k) + "]",
                    "cluster \"" + s.cluster(cl).name + "\" is " +
                        std::string(ClusterTierName(s.cluster(cl).tier)) +
                        ", but bursting goes to elastic clusters");
        }
      }
    } else if (const auto* rv = std::get_if<ReservationRule>(&r.body)) {
      if (!rv->model.valid()) continue;
      int64_t have = 0;
      for (size_t ci = 0; ci < s.clusters.size(); ++ci) {
        const Cluster& cl = s.clusters[ci];
        ClusterId cid(static_cast<uint32_t>(ci));
        bool in_scope = (rv->clusters.empty() || std::find(rv->clusters.begin(), rv->clusters.end(),
                                                           cid) != rv->clusters.end()) &&
                        (rv->regions.empty() || std::find(rv->regions.begin(), rv->regions.end(),
                                                          cl.region) != rv->regions.end());
        if (!in_scope) continue;
        for (uint32_t k = 0; k < cl.node_count; ++k) {
          for (const Device& d : s.nodes[cl.first_node.value() + k].devices) {
            have += d.model == rv->model ? 1 : 0;
          }
        }
      }
      if (rv->count > have) {
        b.ErrorAt(rp + ".count", "reserves " + std::to_string(rv->count) + " " +
                                     s.model(rv->model).name + " but only " + std::to_string(have) +
                                     " exist where it applies");
      }
    } else if (const auto* f = std::get_if<FallbackRule>(&r.body)) {
      std::set<DeviceModelId> models;
      for (size_t k = 0; k < f->order.size(); ++k) {
        if (f->order[k].model.valid() && !models.insert(f->order[k].model).second) {
          b.ErrorAt(rp + ".order[" + std::to_string(k) + "]",
                    "model \"" + s.model(f->order[k].model).name + "\" is listed twice");
        }
      }
      if (f->order.empty()) b.ErrorAt(rp + ".order", "a fallback order needs at least one model");
    }
  }
}

}  // namespace tessera::config_internal
