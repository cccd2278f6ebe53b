#include "config/resolve.h"

#include <map>
#include <string>

#include "common/text.h"

namespace tessera::config_internal {
namespace {

std::string_view RefKindName(RefKind k) {
  switch (k) {
    case RefKind::kDeviceModel:
      return "device model";
    case RefKind::kRegion:
      return "region";
    case RefKind::kCluster:
      return "cluster";
    case RefKind::kDataset:
      return "dataset";
    case RefKind::kTenant:
      return "tenant";
  }
  return "?";
}

// name -> index, first declaration wins; duplicates are reported by ValidateSpec.
template <class T, class Key>
std::map<std::string, uint32_t, std::less<>> Index(const std::vector<T>& items, Key key) {
  std::map<std::string, uint32_t, std::less<>> out;
  for (size_t i = 0; i < items.size(); ++i) {
    out.emplace(key(items[i]), static_cast<uint32_t>(i));
  }
  return out;
}

}  // namespace

void ResolveRefs(SpecBuilder& b) {
  const Spec& s = b.fleet();
  std::map<RefKind, std::map<std::string, uint32_t, std::less<>>> names;
  names[RefKind::kDeviceModel] =
      Index(s.device_models, [](const DeviceModel& m) { return m.name; });
  names[RefKind::kRegion] = Index(s.regions, [](const Region& r) { return r.name; });
  names[RefKind::kCluster] = Index(s.clusters, [](const Cluster& c) { return c.name; });
  names[RefKind::kDataset] = Index(s.datasets, [](const Dataset& d) { return d.name; });
  names[RefKind::kTenant] = Index(s.tenants, [](const Tenant& t) { return t.path; });
  for (const PendingRef& ref : b.refs) {
    const auto& table = names[ref.kind];
    auto it = table.find(ref.name);
    if (it != table.end()) {
      ref.assign(b.spec, it->second);
      continue;
    }
    std::vector<std::string_view> candidates;
    for (const auto& [name, id] : table)
      candidates.push_back(name);
    std::string hint = ClosestMatch(ref.name, candidates);
    std::string msg = "unknown " + std::string(RefKindName(ref.kind)) + " \"" + ref.name + "\"";
    if (!hint.empty()) {
      msg += " (did you mean \"" + hint + "\"?)";
    } else if (candidates.empty()) {
      msg += "; none is declared";
    } else if (candidates.size() <= 12) {
      msg += "; declared: " + JoinNames(candidates);
    }
    b.diags.Error(ref.pos, ref.path.local, msg);
  }
}

namespace {

constexpr int64_t kMaxNodes = 200'000;
constexpr int64_t kMaxDevices = 2'000'000;

int32_t CeilDiv(int32_t a, int32_t b) {
  return (a + b - 1) / b;
}

std::string GroupNodeName(const std::string& cluster, const std::string& group, int32_t i,
                          int32_t count) {
  std::string num = std::to_string(i);
  size_t width = std::max<size_t>(4, std::to_string(count - 1).size());
  while (num.size() < width)
    num.insert(num.begin(), '0');
  return cluster + "-" + group + "-" + num;
}

// Whether the fleet's node groups and single nodes stay within kMaxNodes and kMaxDevices once
// expanded; else an error names the group that crosses the limit. A typo such as
// `count: 1000000` must give an error, not exhaust memory.
bool WithinFleetLimits(SpecBuilder& b) {
  const Spec& s = b.spec;
  int64_t total_nodes = 0, total_devices = 0;
  for (size_t ci = 0; ci < s.clusters.size(); ++ci) {
    // Nodes declared one by one count towards the same limits.
    if (ci < b.single_nodes.size()) {
      for (const DraftNode& dn : b.single_nodes[ci]) {
        ++total_nodes;
        total_devices += static_cast<int64_t>(dn.node.devices.size());
      }
    }
    for (size_t gi = 0; gi < s.clusters[ci].node_groups.size(); ++gi) {
      const NodeGroup& g = s.clusters[ci].node_groups[gi];
      total_nodes += g.count;
      total_devices += int64_t{g.count} * g.devices_per_node;
      if (total_nodes > kMaxNodes || total_devices > kMaxDevices) {
        b.ErrorAt(
            "clusters[" + std::to_string(ci) + "].nodeGroups[" + std::to_string(gi) + "].count",
            "the fleet would have " + std::to_string(total_nodes) + " nodes and " +
                std::to_string(total_devices) + " devices; at most " + std::to_string(kMaxNodes) +
                " nodes and " + std::to_string(kMaxDevices) + " devices are supported");
        return false;
      }
    }
  }
  return true;
}

// The nodes of cluster `ci`'s groups, their leaves and spines numbered from `next_leaf` and
// `next_spine` (which move past them).
void ExpandGroups(SpecBuilder& b, size_t ci, int32_t& next_leaf, int32_t& next_spine) {
  Spec& s = b.spec;
  const Cluster& c = s.clusters[ci];
  for (size_t gi = 0; gi < c.node_groups.size(); ++gi) {
    const NodeGroup& g = c.node_groups[gi];
    if (g.count <= 0) continue;
    std::string group_path =
        "clusters[" + std::to_string(ci) + "].nodeGroups[" + std::to_string(gi) + "]";
    int32_t per_leaf = g.nodes_per_leaf > 0 ? g.nodes_per_leaf : g.count;
    int32_t leaves = CeilDiv(g.count, per_leaf);
    int32_t per_spine = g.leaves_per_spine > 0 ? g.leaves_per_spine : leaves;
    int32_t per_island =
        g.devices_per_island > 0 ? g.devices_per_island : std::max(g.devices_per_node, 1);
    for (int32_t i = 0; i < g.count; ++i) {
      Node n;
      n.name = GroupNodeName(c.name, g.name, i, g.count);
      n.cluster = ClusterId(static_cast<uint32_t>(ci));
      n.cpu = g.cpu;
      n.memory = g.memory;
      n.labels = g.labels;
      n.group = g.name;
      n.leaf = next_leaf + i / per_leaf;
      n.spine = next_spine + (i / per_leaf) / per_spine;
      if (g.device_model) {
        n.devices.reserve(static_cast<size_t>(g.devices_per_node));
        for (int32_t k = 0; k < g.devices_per_node; ++k) {
          n.devices.push_back({*g.device_model, k / per_island});
        }
      }
      s.nodes.push_back(std::move(n));
      b.node_paths.push_back(group_path);
    }
    next_leaf += leaves;
    next_spine += CeilDiv(leaves, per_spine);
  }
}

// Cluster `ci`'s nodes declared one by one: nodes naming the same leaf share it; a leaf
// belongs to one spine.
void AddSingleNodes(SpecBuilder& b, size_t ci, int32_t& next_leaf, int32_t& next_spine) {
  Spec& s = b.spec;
  std::map<std::string, int32_t> leaf_index, spine_index;
  std::map<int32_t, int32_t> spine_of_leaf;
  for (DraftNode& dn : b.single_nodes[ci]) {
    Node n = dn.node;
    n.cluster = ClusterId(static_cast<uint32_t>(ci));
    if (dn.leaf.empty()) {
      n.leaf = next_leaf++;
    } else {
      auto [it, fresh] = leaf_index.emplace(dn.leaf, next_leaf);
      if (fresh) ++next_leaf;
      n.leaf = it->second;
    }
    if (dn.spine.empty()) {
      auto it = spine_of_leaf.find(n.leaf);
      n.spine = it != spine_of_leaf.end() ? it->second : next_spine++;
    } else {
      auto [it, fresh] = spine_index.emplace(dn.spine, next_spine);
      if (fresh) ++next_spine;
      n.spine = it->second;
    }
    auto [it, fresh] = spine_of_leaf.emplace(n.leaf, n.spine);
    if (!fresh && it->second != n.spine) {
      b.ErrorAt(dn.path.Field("spine").merged,
                "leaf \"" + dn.leaf +
                    "\" is already under another spine; a leaf switch "
                    "hangs under exactly one spine");
    }
    bool devices_ok = true;
    for (const Device& d : n.devices)
      devices_ok = devices_ok && d.model.valid();
    if (!devices_ok) n.devices.clear();  // its model did not resolve; already reported
    s.nodes.push_back(std::move(n));
    b.node_paths.push_back(dn.path.merged);
  }
}

// Expands node groups and single nodes into Spec::nodes, cluster by cluster, and assigns the
// cluster-local leaf and spine indices. Returns false (with an error) if the fleet is too large
// to expand.
bool ExpandNodes(SpecBuilder& b) {
  Spec& s = b.spec;
  s.nodes.clear();
  b.node_paths.clear();
  if (!WithinFleetLimits(b)) return false;
  for (size_t ci = 0; ci < s.clusters.size(); ++ci) {
    Cluster& c = s.clusters[ci];
    c.first_node = NodeId(static_cast<uint32_t>(s.nodes.size()));
    int32_t next_leaf = 0, next_spine = 0;
    ExpandGroups(b, ci, next_leaf, next_spine);
    AddSingleNodes(b, ci, next_leaf, next_spine);
    c.node_count = static_cast<uint32_t>(s.nodes.size()) - c.first_node.value();
  }
  return true;
}

}  // namespace

void ResolveAndValidate(SpecBuilder& b) {
  if (!b.priority_classes_declared) b.spec.priority_classes = Spec::DefaultPriorityClasses();
  ResolveRefs(b);
  for (const Diagnostic& d : b.diags.items()) {
    if (d.path.rfind("clusters[", 0) == 0 || d.path.rfind("deviceModels[", 0) == 0) {
      b.fleet_incomplete = true;
    }
  }
  // Without its nodes, the semantic checks would only repeat the expansion error.
  if (ExpandNodes(b)) ValidateSpec(b);
  if (b.suppressed > 0) {
    b.diags.Note(std::to_string(b.suppressed) +
                 " more error(s) about the fleet's capacity (prices, quota guarantees, impossible "
                 "requests) not shown: they follow from the fleet errors above; fix those first");
  }
}

}  // namespace tessera::config_internal
