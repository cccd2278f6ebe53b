// Semantic validation of names and of the resource sections.
#include <algorithm>
#include <map>
#include <set>

#include "config/resolve.h"

namespace tessera::config_internal {
namespace {

template <class T>
std::string Idx(std::string_view list, T i) {
  return std::string(list) + "[" + std::to_string(i) + "]";
}

// Reports each name seen before in `items` at its `.name` field.
template <class T, class Key>
void CheckUnique(SpecBuilder& b, const std::vector<T>& items, std::string_view list,
                 std::string_view what, Key key) {
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& name = key(items[i]);
    if (name.empty()) continue;  // "missing required field" was reported
    auto [it, fresh] = first.emplace(name, i);
    if (!fresh) {
      SourceEntry e = b.Locate(Idx(list, it->second) + ".name");
      b.ErrorAt(Idx(list, i) + ".name", "duplicate " + std::string(what) + " name \"" + name +
                                            "\" (first declared at " + e.pos.file + ":" +
                                            std::to_string(e.pos.line) + ")");
    }
  }
}

template <class T, class Key>
void CheckNames(SpecBuilder& b, const std::vector<T>& items, std::string_view list, Key key) {
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string& name = key(items[i]);
    if (!name.empty() && !IsValidName(name)) {
      b.ErrorAt(Idx(list, i) + ".name",
                "invalid name \"" + name +
                    "\"; expected letters, digits, '.', '_' or '-', starting with a letter or "
                    "digit, at most 63 characters");
    }
  }
}

}  // namespace

bool IsValidName(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  if (!std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
}

void ValidateSpec(SpecBuilder& b) {
  ValidateNames(b);
  ValidateFleet(b);
  ValidateTenants(b);
  ValidatePolicies(b);
  ValidateWorkloads(b);
}

void ValidateNames(SpecBuilder& b) {
  const Spec& s = b.spec;
  auto name = [](const auto& x) -> const std::string& { return x.name; };
  CheckNames(b, s.device_models, "deviceModels", name);
  CheckUnique(b, s.device_models, "deviceModels", "device model", name);
  CheckNames(b, s.regions, "regions", name);
  CheckUnique(b, s.regions, "regions", "region", name);
  CheckNames(b, s.clusters, "clusters", name);
  CheckUnique(b, s.clusters, "clusters", "cluster", name);
  CheckNames(b, s.datasets, "datasets", name);
  CheckUnique(b, s.datasets, "datasets", "dataset", name);
  CheckNames(b, s.priority_classes, "priorityClasses", name);
  CheckUnique(b, s.priority_classes, "priorityClasses", "priority class", name);
  CheckNames(b, s.policies, "policies", name);
  CheckUnique(b, s.policies, "policies", "policy rule", name);
  CheckNames(b, s.jobs, "jobs", name);
  CheckUnique(b, s.jobs, "jobs", "job", name);
  CheckNames(b, s.services, "services", name);
  CheckUnique(b, s.services, "services", "service", name);
  // "cpu" is the price key for CPU cores, so no device model may take that name.
  for (size_t i = 0; i < s.device_models.size(); ++i) {
    if (s.device_models[i].name == "cpu") {
      b.ErrorAt(Idx("deviceModels", i) + ".name",
                "\"cpu\" is reserved (it prices CPU cores); name the model after the processor");
    }
  }
  // Tenants: unique by path; names validated where declared.
  std::map<std::string, size_t> first;
  for (size_t i = 0; i < s.tenants.size(); ++i) {
    const Tenant& t = s.tenants[i];
    std::string where = b.tenant_paths[i].merged + ".name";
    bool nested_path = t.name.find('/') != std::string::npos;  // reported by the parser
    if (!t.name.empty() && !nested_path && !IsValidName(t.name)) {
      b.ErrorAt(where, "invalid tenant name \"" + t.name +
                           "\"; expected letters, digits, '.', '_' or '-', at most 63 characters");
    }
    if (t.name.empty()) continue;
    if (!first.emplace(t.path, i).second) {
      b.ErrorAt(where, "duplicate tenant \"" + t.path + "\"");
    }
  }
  // Nodes: unique across the whole fleet (generated names included).
  std::map<std::string, size_t> node_first;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const std::string& n = s.nodes[i].name;
    if (n.empty()) continue;
    if (!IsValidName(n)) {
      b.ErrorAt(b.node_paths[i] + ".name", "invalid node name \"" + n + "\"");
    }
    auto [it, fresh] = node_first.emplace(n, i);
    if (!fresh) {
      b.ErrorAt(b.node_paths[i] + ".name", "duplicate node name \"" + n +
                                               "\" (also declared in cluster \"" +
                                               s.cluster(s.nodes[it->second].cluster).name + "\")");
    }
  }
  for (size_t ci = 0; ci < s.clusters.size(); ++ci) {
    CheckNames(b, s.clusters[ci].node_groups, Idx("clusters", ci) + ".nodeGroups", name);
    CheckUnique(b, s.clusters[ci].node_groups, Idx("clusters", ci) + ".nodeGroups", "node group",
                name);
  }
}

void ValidateFleet(SpecBuilder& b) {
  const Spec& s = b.spec;
  std::set<std::pair<uint32_t, uint32_t>> seen_links;
  for (size_t i = 0; i < s.links.size(); ++i) {
    const RegionLink& l = s.links[i];
    if (!l.a.valid() || !l.b.valid()) continue;
    if (l.a == l.b) {
      b.ErrorAt(Idx("links", i) + ".to", "a link joins two different regions");
      continue;
    }
    std::pair<uint32_t, uint32_t> key(std::min(l.a.value(), l.b.value()),
                                      std::max(l.a.value(), l.b.value()));
    if (!seen_links.insert(key).second) {
      b.ErrorAt(Idx("links", i), "duplicate link between \"" + s.region(l.a).name + "\" and \"" +
                                     s.region(l.b).name + "\"");
    }
  }
  for (size_t ci = 0; ci < s.clusters.size(); ++ci) {
    const Cluster& c = s.clusters[ci];
    std::string cp = Idx("clusters", ci);
    if (c.node_groups.empty() && b.single_nodes[ci].empty() && !c.name.empty()) {
      b.ErrorAt(cp, "cluster \"" + c.name + "\" declares no nodes (add nodeGroups or nodes)");
    }
    std::set<DeviceModelId> present;
    for (uint32_t k = 0; k < c.node_count; ++k) {
      for (const Device& d : s.nodes[c.first_node.value() + k].devices)
        present.insert(d.model);
    }
    for (const auto& entry : c.price_per_device_hour) {
      const DeviceModelId model = entry.first;
      if (present.count(model)) continue;
      b.CapacityCheck([&] {
        b.ErrorAt(cp + ".prices." + s.model(model).name,
                  "price for \"" + s.model(model).name + "\", but the cluster has no such devices");
      });
    }
  }
  for (size_t i = 0; i < s.datasets.size(); ++i) {
    const Dataset& d = s.datasets[i];
    std::string dp = Idx("datasets", i);
    if (d.residency.empty() || !d.region.valid()) continue;
    auto allowed = [&](RegionId r) {
      return std::find(d.residency.begin(), d.residency.end(), r) != d.residency.end();
    };
    if (!allowed(d.region)) {
      b.ErrorAt(dp + ".region", "dataset \"" + d.name + "\" is stored in \"" +
                                    s.region(d.region).name +
                                    "\", outside the regions its residency allows");
    }
    for (size_t k = 0; k < d.replicas.size(); ++k) {
      if (d.replicas[k].valid() && !allowed(d.replicas[k])) {
        b.ErrorAt(dp + ".replicas[" + std::to_string(k) + "]",
                  "a replica in \"" + s.region(d.replicas[k]).name +
                      "\" violates the dataset's residency");
      }
    }
  }
}

}  // namespace tessera::config_internal
