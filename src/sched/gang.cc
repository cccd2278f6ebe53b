#include "sched/gang.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tessera {
namespace {

// The key of a node's domain at a level; equal keys = same domain.
uint64_t DomainKey(const NodeState& n, uint32_t node, TopologyLevel level) {
  switch (level) {
    case TopologyLevel::kIsland:  // islands are checked on the placements of a node domain
    case TopologyLevel::kNode:
      return node;
    case TopologyLevel::kLeaf:
      return (uint64_t{n.cluster} << 32) | static_cast<uint32_t>(n.leaf);
    case TopologyLevel::kSpine:
      return (uint64_t{n.cluster} << 32) | static_cast<uint32_t>(n.spine);
    default:
      return n.cluster;
  }
}

struct Demand {
  Milli cpu = 0;
  int64_t device_milli = 0;
};

// The free capacity of a domain usable by the gang (schedulable nodes, eligible devices).
Demand FreeIn(const CellState& cell, const std::vector<uint32_t>& nodes, const GangRequest& g) {
  Demand d;
  for (uint32_t i : nodes) {
    const NodeState& n = cell.node(i);
    if (!n.schedulable) continue;
    d.cpu += n.cpu_free;
    for (const DeviceSlot& s : cell.devices(i)) {
      bool eligible = std::any_of(g.groups.begin(), g.groups.end(), [&](const GangGroup& gr) {
        return !gr.shape.cpu_only() && DeviceEligible(cell, s, gr.shape);
      });
      if (eligible) d.device_milli += s.free;
    }
  }
  return d;
}

bool SameIsland(const CellState& cell, const std::vector<Placement>& ps) {
  int island = -1;
  for (const Placement& p : ps) {
    for (const DeviceUse& u : p.devices) {
      int here = cell.devices(p.node)[u.index].island;
      if (island >= 0 && here != island) return false;
      island = here;
    }
  }
  return true;
}

void Rollback(CellState& cell, std::vector<Placement>& done) {
  for (auto it = done.rbegin(); it != done.rend(); ++it) {
    it->node_version = cell.node(it->node).version;
    cell.Release(*it);
  }
  done.clear();
}

}  // namespace

GangResult PlaceGang(CellState& cell, Placer& placer, const GangRequest& gang, Rng* rng) {
  GangResult result;
  Demand need;
  int32_t tasks = 0;
  for (const GangGroup& g : gang.groups) {
    need.cpu += g.shape.cpu * g.count;
    need.device_milli += g.shape.total_milli() * g.count;
    tasks += g.count;
  }
  // Place the largest tasks first: they have the fewest places to go.
  std::vector<size_t> order(gang.groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return gang.groups[a].shape.total_milli() > gang.groups[b].shape.total_milli();
  });
  TopologyLevel loosest =
      gang.require == TopologyLevel::kAny || gang.require > TopologyLevel::kCluster
          ? TopologyLevel::kCluster
          : gang.require;
  // A single task needs no island or node check of its own; a gang starts at the island.
  TopologyLevel start = TopologyLevel::kIsland;
  // A gang larger than any node cannot sit within a node or an island: skip those levels
  // without building their domains.
  int64_t largest_node = 0;
  for (uint32_t i = 0; i < cell.node_count(); ++i) {
    largest_node = std::max<int64_t>(largest_node, cell.node(i).device_count * int64_t{1000});
  }
  if (need.device_milli > largest_node && loosest > TopologyLevel::kNode) {
    start = TopologyLevel::kLeaf;
  }
  std::string last_detail;
  for (auto level = start; level <= loosest;
       level = static_cast<TopologyLevel>(static_cast<int>(level) + 1)) {
    // Group the nodes into domains.
    std::map<uint64_t, std::vector<uint32_t>> domains;
    for (uint32_t i = 0; i < cell.node_count(); ++i) {
      domains[DomainKey(cell.node(i), i, level)].push_back(i);
    }
    // Keep the domains that could hold the gang, fullest (least free) first.
    std::vector<std::pair<int64_t, const std::vector<uint32_t>*>> fit;
    int64_t largest = 0;
    for (const auto& [key, nodes] : domains) {
      Demand free = FreeIn(cell, nodes, gang);
      largest = std::max(largest, free.device_milli);
      if (free.cpu >= need.cpu && free.device_milli >= need.device_milli) {
        fit.emplace_back(free.device_milli, &nodes);
      }
    }
    std::stable_sort(fit.begin(), fit.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    last_detail = "no " + std::string(TopologyLevelName(level)) + " holds the gang's " +
                  std::to_string(need.device_milli / 1000) +
                  " free devices (largest: " + std::to_string(largest / 1000) + ")";
    constexpr size_t kMaxDomainsTried = 8;
    for (size_t d = 0; d < fit.size() && d < kMaxDomainsTried; ++d) {
      std::vector<Placement> done;
      std::vector<std::vector<std::pair<std::string, double>>> parts;
      bool ok = true;
      for (size_t gi : order) {
        for (int32_t t = 0; t < gang.groups[gi].count && ok; ++t) {
          PlaceResult r = placer.PlaceWithin(cell, gang.groups[gi].shape, *fit[d].second, rng);
          ok = r.outcome == PlaceOutcome::kPlaced && cell.Commit(r.placement).ok();
          if (ok) {
            done.push_back(r.placement);
            parts.push_back(std::move(r.parts));
          }
        }
      }
      if (ok && level == TopologyLevel::kIsland) ok = SameIsland(cell, done);
      if (!ok) {
        Rollback(cell, done);
        continue;
      }
      // Report the placements in the gang's own group order.
      std::vector<Placement> in_order;
      size_t cursor = 0;
      std::vector<std::vector<size_t>> by_group(gang.groups.size());
      for (size_t gi : order) {
        for (int32_t t = 0; t < gang.groups[gi].count; ++t)
          by_group[gi].push_back(cursor++);
      }
      for (const auto& g : by_group) {
        for (size_t k : g) {
          in_order.push_back(done[k]);
          result.parts.push_back(std::move(parts[k]));
        }
      }
      result.outcome = PlaceOutcome::kPlaced;
      result.placements = std::move(in_order);
      result.level = level;
      return result;
    }
  }
  // Not placed: explain with the first group's filter counts and the topology detail.
  result.detail = last_detail;
  // Could the gang fit some domain of the loosest level if the cell were empty?
  std::map<uint64_t, Demand> empty;
  for (uint32_t i = 0; i < cell.node_count(); ++i) {
    const NodeState& n = cell.node(i);
    Demand& d = empty[DomainKey(n, i, loosest)];
    d.cpu += n.cpu_total;
    for (const DeviceSlot& s : cell.devices(i)) {
      bool eligible = std::any_of(gang.groups.begin(), gang.groups.end(), [&](const GangGroup& gr) {
        return !gr.shape.cpu_only() && DeviceEligible(cell, s, gr.shape);
      });
      if (eligible) d.device_milli += 1000;
    }
  }
  bool ever = std::any_of(empty.begin(), empty.end(), [&](const auto& kv) {
    return kv.second.cpu >= need.cpu && kv.second.device_milli >= need.device_milli;
  });
  if (!gang.groups.empty()) {
    PlaceResult single = placer.Place(cell, gang.groups[order[0]].shape, rng);
    if (single.outcome == PlaceOutcome::kPlaced) {
      result.outcome = ever ? PlaceOutcome::kPending : PlaceOutcome::kInfeasible;
      result.why.total_nodes = static_cast<uint32_t>(cell.node_count());
      ReasonCounter c;
      c.Add(Reason::kTopology, static_cast<uint32_t>(cell.node_count()));
      result.why = c.Finish(static_cast<uint32_t>(cell.node_count()), 0);
    } else {
      result.outcome = ever ? single.outcome : PlaceOutcome::kInfeasible;
      result.why = single.why;
    }
  }
  (void)tasks;
  return result;
}

}  // namespace tessera
