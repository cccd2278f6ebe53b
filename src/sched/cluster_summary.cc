#include "sched/cluster_summary.h"

#include <algorithm>
#include <array>
#include <bit>

namespace tessera {
namespace {

constexpr size_t kMaxInPlace = 8;  // device models on one node updated in place
constexpr uint32_t kNoLeaf = UINT32_MAX;

}  // namespace

ClusterSummaries::ClusterSummaries(const Spec& spec, const CellState& cell) : cell_(cell) {
  clusters_.resize(spec.clusters.size());
  for (size_t c = 0; c < spec.clusters.size(); ++c) {
    Summary& s = clusters_[c];
    s.domain = cell.ClusterDomain(static_cast<uint32_t>(c));
    s.node_free.resize(cell.model_count());
    s.leaf_free.resize(cell.model_count());
    s.price.assign(cell.model_count(), 0);
    s.pressure.assign(cell.model_count(), 0);
    s.cpu_price = spec.clusters[c].price_per_cpu_core_hour.value_or(0);
    max_cpu_price_ = std::max(max_cpu_price_, s.cpu_price);
    for (const auto& [model, price] : spec.clusters[c].price_per_device_hour) {
      if (model.value() >= s.price.size()) continue;
      s.price[model.value()] = price;
      max_price_ = std::max(max_price_, price);
    }
  }
  shares_.resize(cell.node_count());
  for (uint32_t n = 0; n < cell.node_count(); ++n) {
    Summary& s = clusters_[cell.node(n).cluster];
    s.models |= cell.node(n).models;
    if (!cell.node(n).retired) ++s.nodes;
    Add(n, +1);
  }
}

void ClusterSummaries::Add(uint32_t node, int sign) {
  if (node >= shares_.size()) shares_.resize(node + 1);
  Share& share = shares_[node];
  Summary& s = clusters_[cell_.node(node).cluster];
  if (sign < 0) {
    if (!share.counted) return;
    for (const auto& [model, free] : share.free) {
      s.node_free[model].erase(s.node_free[model].find(free));
      MoveLeaf(node, model, -free);
    }
    s.node_cpu.erase(s.node_cpu.find(share.cpu));
    if (cell_.node(node).device_count == 0) {
      s.cpu_node_free -= share.cpu;
      s.cpu_node_capacity -= cell_.node(node).cpu_total;
    }
    --s.schedulable;
    share = Share{};
    return;
  }
  const NodeState& n = cell_.node(node);
  if (!n.schedulable || n.retired) return;
  share.counted = true;
  for (const DeviceSlot& d : cell_.devices(node)) {
    if (!d.healthy) continue;
    auto it = std::find_if(share.free.begin(), share.free.end(),
                           [&](const auto& f) { return f.first == d.model; });
    if (it == share.free.end()) {
      share.free.push_back({d.model, d.free});
    } else {
      it->second += d.free;
    }
  }
  for (const auto& [model, free] : share.free) {
    s.node_free[model].insert(free);
    MoveLeaf(node, model, free);
  }
  share.cpu = n.cpu_free;
  s.node_cpu.insert(share.cpu);
  if (n.device_count == 0) {
    s.cpu_node_free += share.cpu;
    s.cpu_node_capacity += n.cpu_total;
  }
  ++s.schedulable;
}

void ClusterSummaries::Touch(uint32_t node) {
  if (node >= shares_.size()) {
    // A node added while the engine runs.
    shares_.resize(node + 1);
    Summary& s = clusters_[cell_.node(node).cluster];
    s.models |= cell_.node(node).models;
    ++s.nodes;
    if (!s.domain) s.domain = cell_.ClusterDomain(cell_.node(node).cluster);
  }
  // The common case — a commit or a release on a counted node that stays counted, with the
  // same models healthy — changes values only: move them in place, no allocation.
  Share& share = shares_[node];
  const NodeState& n = cell_.node(node);
  if (share.counted && n.schedulable && !n.retired) {
    std::array<std::pair<uint16_t, Milli>, kMaxInPlace> now;
    size_t count = 0;
    bool same = true;
    for (const DeviceSlot& d : cell_.devices(node)) {
      if (!d.healthy) continue;
      size_t i = 0;
      while (i < count && now[i].first != d.model)
        ++i;
      if (i == count) {
        if (count == kMaxInPlace || count >= share.free.size() ||
            share.free[count].first != d.model) {
          same = false;
          break;
        }
        now[count++] = {d.model, 0};
      }
      now[i].second += d.free;
    }
    if (same && count == share.free.size()) {
      Summary& s = clusters_[n.cluster];
      auto move = [](std::multiset<Milli>& set, Milli from, Milli to) {
        if (from == to) return;
        auto handle = set.extract(set.find(from));
        handle.value() = to;
        set.insert(std::move(handle));
      };
      for (size_t i = 0; i < count; ++i) {
        move(s.node_free[now[i].first], share.free[i].second, now[i].second);
        MoveLeaf(node, now[i].first, now[i].second - share.free[i].second);
        share.free[i].second = now[i].second;
      }
      move(s.node_cpu, share.cpu, n.cpu_free);
      if (n.device_count == 0) s.cpu_node_free += n.cpu_free - share.cpu;
      share.cpu = n.cpu_free;
      return;
    }
  }
  Add(node, -1);
  Add(node, +1);
}

Milli ClusterSummaries::Free(uint32_t cluster, ModelMask mask) const {
  const Summary& s = clusters_[cluster];
  return s.domain ? cell_.DomainFreeDevices(TopologyLevel::kCluster, *s.domain, mask) : 0;
}

Milli ClusterSummaries::Capacity(uint32_t cluster, ModelMask mask) const {
  const Summary& s = clusters_[cluster];
  return s.domain ? cell_.DomainDeviceCapacity(TopologyLevel::kCluster, *s.domain, mask) : 0;
}

Milli ClusterSummaries::LargestNodeFree(uint32_t cluster, uint16_t model) const {
  const auto& free = clusters_[cluster].node_free;
  if (model >= free.size() || free[model].empty()) return 0;
  return *free[model].rbegin();
}

uint32_t ClusterSummaries::LeafOf(uint32_t node) {
  if (node >= node_leaf_.size()) node_leaf_.resize(node + 1, kNoLeaf);
  if (node_leaf_[node] == kNoLeaf) {
    const NodeState& n = cell_.node(node);
    auto [it, added] =
        leaf_index_.try_emplace({n.cluster, n.leaf}, static_cast<uint32_t>(leaf_totals_.size()));
    if (added) leaf_totals_.emplace_back(cell_.model_count(), 0);
    node_leaf_[node] = it->second;
  }
  return node_leaf_[node];
}

void ClusterSummaries::MoveLeaf(uint32_t node, uint16_t model, Milli delta) {
  if (delta == 0) return;
  Milli& total = leaf_totals_[LeafOf(node)][model];
  std::multiset<Milli>& set = clusters_[cell_.node(node).cluster].leaf_free[model];
  if (total > 0) set.erase(set.find(total));
  total += delta;
  if (total > 0) set.insert(total);
}

Milli ClusterSummaries::LargestLeafFree(uint32_t cluster, uint16_t model) const {
  const auto& free = clusters_[cluster].leaf_free;
  if (model >= free.size() || free[model].empty()) return 0;
  return *free[model].rbegin();
}

Milli ClusterSummaries::LargestNodeCpu(uint32_t cluster) const {
  const auto& cpu = clusters_[cluster].node_cpu;
  return cpu.empty() ? 0 : *cpu.rbegin();
}

double ClusterSummaries::Health(uint32_t cluster) const {
  const Summary& s = clusters_[cluster];
  return s.nodes == 0 ? 0.0 : static_cast<double>(s.schedulable) / s.nodes;
}

Milli ClusterSummaries::Pressure(uint32_t cluster, ModelMask mask) const {
  Milli total = 0;
  const auto& pressure = clusters_[cluster].pressure;
  for (ModelMask m = mask; m != 0; m &= m - 1) {
    const auto model = static_cast<size_t>(std::countr_zero(m));
    if (model < pressure.size()) total += pressure[model];
  }
  return total;
}

void ClusterSummaries::AddPressure(uint32_t cluster, uint16_t model, Milli milli) {
  clusters_[cluster].pressure[model] += milli;
}

Milli ClusterSummaries::Price(uint32_t cluster, uint16_t model) const {
  const auto& price = clusters_[cluster].price;
  return model < price.size() ? price[model] : 0;
}

}  // namespace tessera
