#include "sched/spread.h"

#include <algorithm>

namespace tessera {

ReplicaSpread::ReplicaSpread(const CellState& cell, size_t clusters)
    : cell_(cell), clusters_(clusters) {}

std::optional<uint32_t> ReplicaSpread::GroupOf(const Job& job) {
  auto label = job.labels.find(kServiceLabel);
  if (label == job.labels.end()) return std::nullopt;
  auto [it, added] = index_.try_emplace(label->second, static_cast<uint32_t>(groups_.size()));
  if (added) groups_.push_back({0, std::vector<int32_t>(clusters_, 0), {}, {}});
  return it->second;
}

void ReplicaSpread::Track(uint32_t group, const std::vector<Placement>& placements, int sign) {
  Group& g = groups_[group];
  for (const Placement& p : placements) {
    const NodeState& node = cell_.node(p.node);
    g.running += sign;
    g.by_cluster[node.cluster] += sign;
    if ((g.by_node[p.node] += sign) == 0) g.by_node.erase(p.node);
    const std::pair<uint32_t, int32_t> leaf{node.cluster, node.leaf};
    if ((g.by_leaf[leaf] += sign) == 0) g.by_leaf.erase(leaf);
  }
}

std::vector<std::vector<uint32_t>> ReplicaSpread::Tiers(uint32_t group,
                                                        std::optional<uint32_t> cluster) const {
  const Group& g = groups_[group];
  if (g.running == 0) return {};
  std::vector<uint32_t> other_leaf, other_node;
  auto consider = [&](uint32_t n) {
    const NodeState& node = cell_.node(n);
    if (!node.schedulable || g.by_node.count(n)) return;
    other_node.push_back(n);
    if (!g.by_leaf.count({node.cluster, node.leaf})) other_leaf.push_back(n);
  };
  if (cluster) {
    std::optional<size_t> domain = cell_.ClusterDomain(*cluster);
    if (!domain) return {};
    for (uint32_t n : cell_.domain_nodes(TopologyLevel::kCluster, *domain))
      consider(n);
  } else {
    for (uint32_t n = 0; n < cell_.node_count(); ++n)
      consider(n);
  }
  std::vector<std::vector<uint32_t>> tiers;
  if (!other_leaf.empty() && other_leaf.size() < other_node.size())
    tiers.push_back(std::move(other_leaf));
  if (!other_node.empty()) tiers.push_back(std::move(other_node));
  return tiers;
}

}  // namespace tessera
