#include "model/capacity.h"

#include <algorithm>
#include <map>

namespace tessera {

LevelCapacity ClusterCapacity(const Spec& spec, ClusterId cluster, const DevicePredicate& ok,
                              const std::function<bool(const Node&)>& node_ok) {
  LevelCapacity cap{};
  const Cluster& c = spec.cluster(cluster);
  std::map<int32_t, int64_t> per_leaf, per_spine;
  for (uint32_t i = 0; i < c.node_count; ++i) {
    const Node& n = spec.nodes[c.first_node.value() + i];
    if (node_ok && !node_ok(n)) continue;
    std::map<int32_t, int64_t> per_island;
    int64_t on_node = 0;
    for (const Device& d : n.devices) {
      if (!ok(n, d)) continue;
      ++per_island[d.island];
      ++on_node;
    }
    for (const auto& [island, count] : per_island)
      cap[0] = std::max(cap[0], count);
    cap[1] = std::max(cap[1], on_node);
    per_leaf[n.leaf] += on_node;
    per_spine[n.spine] += on_node;
    cap[4] += on_node;
  }
  for (const auto& [leaf, count] : per_leaf)
    cap[2] = std::max(cap[2], count);
  for (const auto& [spine, count] : per_spine)
    cap[3] = std::max(cap[3], count);
  return cap;
}

}  // namespace tessera
