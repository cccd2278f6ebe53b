#include "sched/gang.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "sched/scope.h"

namespace tessera {
namespace {

int32_t GangTaskCount(const GangRequest& gang) {
  int32_t n = 0;
  for (const GangGroup& g : gang.groups)
    n += g.count;
  return n;
}

struct Demand {
  Milli cpu = 0;
  int64_t device_milli = 0;
  // The devices the gang takes up at least, as milli: a share that does not divide a device
  // leaves the rest of it to no other task of the gang (three 0.75 shares need three devices,
  // not 2.25). What an empty domain must hold.
  int64_t packed_milli = 0;
};

// The device models any of the gang's tasks may use (model and device memory).
ModelMask EligibleModels(const CellState& cell, const GangRequest& g) {
  ModelMask mask = 0;
  for (const GangGroup& gr : g.groups) {
    if (gr.shape.cpu_only()) continue;
    for (size_t m = 0; m < cell.model_count(); ++m) {
      if (gr.shape.accepts(DeviceModelId(static_cast<uint32_t>(m))) &&
          cell.model_memory(static_cast<uint16_t>(m)) >= gr.shape.min_device_memory) {
        mask |= ModelMask{1} << m;
      }
    }
  }
  return mask;
}

// The free capacity of one node usable by the gang (0 when it is not schedulable).
Demand FreeOnNode(const CellState& cell, uint32_t node, ModelMask eligible) {
  Demand d;
  const NodeState& n = cell.node(node);
  if (!n.schedulable) return d;
  d.cpu = n.cpu_free;
  for (const DeviceSlot& s : cell.devices(node))
    if (s.healthy && ((eligible >> s.model) & 1)) d.device_milli += s.free;
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

// A domain that could hold the gang: its free devices (for "fullest first"), a tie-breaker,
// and its nodes.
struct Candidate {
  int64_t free = 0;
  uint32_t order = 0;
  const std::vector<uint32_t>* nodes = nullptr;
  uint32_t node = 0;  // node-level domains: the node itself
};

// The first `limit` domains of `level` that have room for the gang now, fullest first. Node
// and island levels go through the equivalence classes (one free count per class); the levels
// above through the cell's domain totals. `largest` receives the most free devices any domain
// has.
// Domains outside the gang's policy scope (`in_scope` false for their cluster) are skipped.
template <typename InScopeFn>
std::vector<Candidate> Fitting(const CellState& cell, TopologyLevel level, ModelMask eligible,
                               const Demand& need, size_t limit, const InScopeFn& in_scope,
                               int64_t* largest) {
  std::vector<Candidate> fit;
  *largest = 0;
  auto fuller = [](const Candidate& a, const Candidate& b) {
    return a.free != b.free ? a.free < b.free : a.order < b.order;
  };
  if (level <= TopologyLevel::kNode) {
    // One candidate per class first (ordered by its lowest-ranked member), then the members.
    std::vector<std::pair<Candidate, uint32_t>> classes;
    for (uint32_t slot = 0; slot < cell.class_slots(); ++slot) {
      const NodeClass& k = cell.klass(slot);
      if (!k.live() || !in_scope(cell.node(k.members.front()).cluster)) continue;
      Demand free = FreeOnNode(cell, k.members.front(), eligible);
      *largest = std::max(*largest, free.device_milli);
      if (free.cpu < need.cpu || free.device_milli < need.device_milli) continue;
      classes.push_back({{free.device_milli, cell.node(k.members.front()).rank, nullptr, 0}, slot});
    }
    std::sort(classes.begin(), classes.end(),
              [&](const auto& a, const auto& b) { return fuller(a.first, b.first); });
    for (const auto& [c, slot] : classes) {
      for (uint32_t node : cell.klass(slot).members) {
        if (fit.size() >= limit) return fit;
        fit.push_back({c.free, cell.node(node).rank, nullptr, node});
      }
    }
    return fit;
  }
  for (size_t d = 0; d < cell.domain_count(level); ++d) {
    if (!in_scope(cell.node(cell.domain_nodes(level, d).front()).cluster)) continue;
    int64_t free = cell.DomainFreeDevices(level, d, eligible);
    *largest = std::max(*largest, free);
    if (cell.DomainFreeCpu(level, d) < need.cpu || free < need.device_milli) continue;
    fit.push_back({free, static_cast<uint32_t>(d), &cell.domain_nodes(level, d), 0});
  }
  std::sort(fit.begin(), fit.end(), fuller);
  if (fit.size() > limit) fit.resize(limit);
  return fit;
}

// Whether the gang could fit some domain of `level` if the cell were empty.
template <typename InScopeFn>
bool FitsEmptyDomain(const CellState& cell, TopologyLevel level, ModelMask eligible,
                     const Demand& need, const InScopeFn& in_scope) {
  if (level <= TopologyLevel::kNode) {
    // Capacity and health are part of a class's state: one representative per class.
    for (uint32_t slot = 0; slot < cell.class_slots(); ++slot) {
      const NodeClass& k = cell.klass(slot);
      if (!k.live() || !in_scope(cell.node(k.members.front()).cluster)) continue;
      uint32_t i = k.members.front();
      Demand cap;
      cap.cpu = cell.node(i).cpu_total;
      for (const DeviceSlot& s : cell.devices(i))
        if (s.healthy && ((eligible >> s.model) & 1)) cap.device_milli += 1000;
      if (cap.cpu >= need.cpu && cap.device_milli >= need.packed_milli) return true;
    }
    return false;
  }
  for (size_t d = 0; d < cell.domain_count(level); ++d) {
    if (!in_scope(cell.node(cell.domain_nodes(level, d).front()).cluster)) continue;
    if (cell.DomainCpuCapacity(level, d) >= need.cpu &&
        cell.DomainDeviceCapacity(level, d, eligible) >= need.packed_milli) {
      return true;
    }
  }
  return false;
}

// Places one task inside the candidate domain. A domain that is the whole cell uses the
// placer's index instead of a scan of its members.
PlaceResult PlaceIn(const CellState& cell, Placer& placer, const TaskShape& shape,
                    const Candidate& c, Rng* rng) {
  if (c.nodes == nullptr) return placer.PlaceWithin(cell, shape, {c.node}, rng);
  if (c.nodes->size() == cell.node_count()) return placer.Place(cell, shape, rng);
  return placer.PlaceWithin(cell, shape, *c.nodes, rng);
}

// One task with no island requirement: the first of the preferred node sets that holds it,
// else the placer's own choice over the whole cell.
GangResult PlaceSingle(CellState& cell, Placer& placer, const TaskShape& shape, JobId job,
                       const std::vector<std::vector<uint32_t>>& prefer_within, Rng* rng) {
  GangResult result;
  PlaceResult r;
  for (const std::vector<uint32_t>& nodes : prefer_within) {
    r = placer.PlaceWithin(cell, shape, nodes, rng);
    if (r.outcome == PlaceOutcome::kPlaced) break;
  }
  if (r.outcome != PlaceOutcome::kPlaced) r = placer.Place(cell, shape, rng);
  result.outcome = r.outcome;
  result.why = std::move(r.why);
  if (r.outcome != PlaceOutcome::kPlaced) return result;
  r.placement.task = {job, 0};
  Status s = cell.Commit(r.placement);
  CHECK(s.ok()) << "the placer proposed what does not fit: " << s.ToString();
  result.placements.push_back(r.placement);
  result.parts.push_back(std::move(r.parts));
  result.level =
      SameIsland(cell, result.placements) ? TopologyLevel::kIsland : TopologyLevel::kNode;
  return result;
}

// The gang's groups in the order they are placed, largest task first (they have the fewest
// places to go), and the index of each group's first task in the job's own order.
struct GangOrder {
  std::vector<size_t> groups;
  std::vector<int32_t> first_task;  // by group
};

GangOrder LargestFirst(const GangRequest& gang) {
  GangOrder o;
  o.groups.resize(gang.groups.size());
  std::iota(o.groups.begin(), o.groups.end(), 0);
  std::stable_sort(o.groups.begin(), o.groups.end(), [&](size_t a, size_t b) {
    return gang.groups[a].shape.total_milli() > gang.groups[b].shape.total_milli();
  });
  o.first_task.assign(gang.groups.size(), 0);
  for (size_t gi = 1; gi < gang.groups.size(); ++gi)
    o.first_task[gi] = o.first_task[gi - 1] + gang.groups[gi - 1].count;
  return o;
}

// The gang's placements, proposed in `order`, in the gang's own group order.
void InGroupOrder(const GangRequest& gang, const GangOrder& order,
                  const std::vector<Placement>& done,
                  std::vector<std::vector<std::pair<std::string, double>>>& parts,
                  GangResult& result) {
  std::vector<std::vector<size_t>> by_group(gang.groups.size());
  size_t cursor = 0;
  for (size_t gi : order.groups) {
    for (int32_t t = 0; t < gang.groups[gi].count; ++t)
      by_group[gi].push_back(cursor++);
  }
  for (const auto& g : by_group) {
    for (size_t k : g) {
      result.placements.push_back(done[k]);
      result.parts.push_back(std::move(parts[k]));
    }
  }
}

// A gang no domain held: pending when some domain could hold it in an empty cell (`ever`),
// else infeasible; why, with the filter counts of its first group placed alone and the
// topology's `detail`.
GangResult Unplaced(CellState& cell, Placer& placer, const GangRequest& gang, size_t first_group,
                    bool ever, std::string detail, Rng* rng) {
  GangResult result;
  result.detail = std::move(detail);
  if (gang.groups.empty()) return result;
  PlaceResult single = placer.Place(cell, gang.groups[first_group].shape, rng);
  if (single.outcome != PlaceOutcome::kPlaced) {
    result.outcome = ever ? single.outcome : PlaceOutcome::kInfeasible;
    result.why = single.why;
    return result;
  }
  result.outcome = ever ? PlaceOutcome::kPending : PlaceOutcome::kInfeasible;
  // The nodes that could host a task are too few in any one domain; the others keep the
  // reason the filters gave them (in explain mode, where the placer counted them).
  ReasonCounter c;
  uint32_t topology = static_cast<uint32_t>(cell.node_count());
  if (single.why.total_nodes > 0) {
    for (const auto& [reason, nodes] : single.why.dropped)
      c.Add(reason, nodes);
    topology = single.why.feasible_nodes;
  }
  c.Add(Reason::kTopology, topology);
  result.why = c.Finish(static_cast<uint32_t>(cell.node_count()), 0);
  return result;
}

}  // namespace

GangResult PlaceGang(CellState& cell, Placer& placer, const GangRequest& gang, Rng* rng) {
  Demand need;
  int32_t tasks = 0;
  for (const GangGroup& g : gang.groups) {
    need.cpu += g.shape.cpu * g.count;
    need.device_milli += g.shape.total_milli() * g.count;
    need.packed_milli += (g.shape.fractional() ? kMilliPerUnit / (kMilliPerUnit / g.shape.milli)
                                               : g.shape.total_milli()) *
                         g.count;
    tasks += g.count;
  }
  if (tasks == 1 && gang.require != TopologyLevel::kIsland) {
    for (const GangGroup& g : gang.groups)
      if (g.count == 1)
        return PlaceSingle(cell, placer, g.shape, gang.job, gang.prefer_within, rng);
  }
  const ModelMask eligible = EligibleModels(cell, gang);
  // Every group of a gang shares the job's scope.
  auto in_scope = [&](uint32_t cluster) {
    return gang.groups.empty() || InScope(placer.filters(), gang.groups[0].shape, cluster);
  };
  const GangOrder order = LargestFirst(gang);
  TopologyLevel loosest =
      gang.require == TopologyLevel::kAny || gang.require > TopologyLevel::kCluster
          ? TopologyLevel::kCluster
          : gang.require;
  // A gang larger than any node cannot sit within a node or an island: skip those levels.
  TopologyLevel start = TopologyLevel::kIsland;
  if (need.device_milli > cell.max_node_device_milli() && loosest > TopologyLevel::kNode) {
    start = TopologyLevel::kLeaf;
  }
  std::string last_detail;
  for (auto level = start; level <= loosest;
       level = static_cast<TopologyLevel>(static_cast<int>(level) + 1)) {
    constexpr size_t kMaxDomainsTried = 8;
    int64_t largest = 0;
    std::vector<Candidate> fit =
        Fitting(cell, level, eligible, need, kMaxDomainsTried, in_scope, &largest);
    // A CPU-only gang's domains are not measured in devices: its tasks found no room in any.
    last_detail = need.device_milli == 0
                      ? "no " + std::string(TopologyLevelName(level)) + " holds the gang's " +
                            std::to_string(GangTaskCount(gang)) + " CPU-only tasks"
                      : "no " + std::string(TopologyLevelName(level)) + " holds the gang's " +
                            std::to_string(need.device_milli / 1000) +
                            " free devices (largest: " + std::to_string(largest / 1000) + ")";
    for (const Candidate& where : fit) {
      // Propose the whole gang inside this domain; keep it only if every task found room.
      CellState::Proposal proposal(cell);
      std::vector<std::vector<std::pair<std::string, double>>> parts;
      bool ok = true;
      for (size_t gi : order.groups) {
        for (int32_t t = 0; t < gang.groups[gi].count && ok; ++t) {
          PlaceResult r = PlaceIn(cell, placer, gang.groups[gi].shape, where, rng);
          r.placement.task = {gang.job, order.first_task[gi] + t};
          ok = r.outcome == PlaceOutcome::kPlaced && proposal.Add(r.placement).ok();
          if (ok) parts.push_back(std::move(r.parts));
        }
      }
      if (ok && level == TopologyLevel::kIsland) ok = SameIsland(cell, proposal.placements());
      if (!ok) continue;  // the proposal aborts as it goes out of scope
      proposal.Keep();
      GangResult result;
      InGroupOrder(gang, order, proposal.placements(), parts, result);
      result.outcome = PlaceOutcome::kPlaced;
      result.level = level;
      return result;
    }
  }
  const bool ever = FitsEmptyDomain(cell, loosest, eligible, need, in_scope);
  return Unplaced(cell, placer, gang, order.groups.empty() ? 0 : order.groups[0], ever,
                  std::move(last_detail), rng);
}

}  // namespace tessera
