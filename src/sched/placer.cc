#include "sched/placer.h"

#include <algorithm>
#include <limits>

#include "sched/scope.h"

namespace tessera {

bool FitsEmpty(const CellState& cell, uint32_t node, const TaskShape& shape) {
  const NodeState& n = cell.node(node);
  if (n.cpu_total < shape.cpu || n.mem_total < shape.memory) return false;
  if (shape.cpu_only()) return true;
  int32_t eligible = 0;
  for (const DeviceSlot& d : cell.devices(node)) {
    if (shape.accepts(DeviceModelId(d.model)) &&
        cell.model_memory(d.model) >= shape.min_device_memory) {
      ++eligible;
    }
  }
  return eligible >= shape.count;
}

const Placer::Evaluation& Placer::Evaluate(const CellState& cell, uint32_t slot,
                                           const TaskShape& shape) {
  if (cache_.size() < cell.class_slots()) cache_.resize(cell.class_slots());
  const NodeClass& k = cell.klass(slot);
  std::vector<Evaluation>& entries = cache_[slot];
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].generation != k.generation) {
      // The slot was reused by another class: everything cached for it is stale.
      entries.clear();
      break;
    }
    if (entries[i].shape == shape.id) return entries[i];
  }
  Evaluation e;
  e.generation = k.generation;
  e.shape = shape.id;
  uint32_t rep = k.members.front();
  std::optional<Reason> reason = filters_.Check(cell, rep, shape);
  e.feasible = !reason;
  if (reason) {
    e.reason = *reason;
  } else if (!scorer_.uniform()) {
    e.score = scorer_.Score(cell, rep, shape, &e.pick);
  }
  entries.push_back(std::move(e));
  return entries.back();
}

PlaceResult Placer::Finish(const CellState& cell, const TaskShape& shape, uint32_t node,
                           const Evaluation& e, Rng* rng) {
  PlaceResult r;
  r.outcome = PlaceOutcome::kPlaced;
  r.score = e.score;
  Placement& p = r.placement;
  p.node = node;
  p.node_version = cell.node(node).version;
  p.cpu = shape.cpu;
  p.memory = shape.memory;
  p.kind = shape.kind();
  if (scorer_.uniform()) {
    CHECK(rng != nullptr) << "a uniform placement policy needs an Rng";
    scorer_.PickRandomDevices(cell, node, shape, *rng, &p.devices);
  } else {
    p.devices = e.pick;
  }
  if (explain_) r.parts = scorer_.Explain(cell, node, shape);
  return r;
}

PlaceResult Placer::NotPlaced(const CellState& cell, const TaskShape& shape, Explanation why) {
  PlaceResult r;
  r.why = std::move(why);
  r.outcome = PlaceOutcome::kInfeasible;
  for (uint32_t i = 0; i < cell.node_count(); ++i) {
    if (FitsEmpty(cell, i, shape) && InScope(filters_, shape, cell.node(i).cluster)) {
      r.outcome = PlaceOutcome::kPending;
      break;
    }
  }
  return r;
}

void Placer::Refresh(const CellState& cell) {
  uint64_t epoch = scorer_.Epoch(cell);
  if (epoch == epoch_) return;
  epoch_ = epoch;
  cache_.clear();
  index_.clear();
}

PlaceResult Placer::Place(const CellState& cell, const TaskShape& shape, Rng* rng) {
  Refresh(cell);
  if (explain_ || scorer_.uniform()) return PlaceByScan(cell, shape, rng);
  return PlaceByIndex(cell, shape, rng);
}

void Placer::Push(const CellState& cell, ShapeIndex& index, uint32_t slot, const TaskShape& shape) {
  const NodeClass& k = cell.klass(slot);
  if (!k.live()) return;
  const Evaluation& e = Evaluate(cell, slot, shape);
  if (!e.feasible) return;
  index.heap.push_back({e.score, cell.node(k.members.front()).rank, slot, k.generation, k.stamp});
  std::push_heap(index.heap.begin(), index.heap.end());
}

PlaceResult Placer::PlaceByIndex(const CellState& cell, const TaskShape& shape, Rng* rng) {
  if (index_.size() <= shape.id) index_.resize(shape.id + 1);
  ShapeIndex& index = index_[shape.id];
  bool rebuild = !index.built || index.cursor < cell.events_begin() ||
                 index.heap.size() > 4 * cell.live_classes() + 64 ||
                 cell.events_end() - index.cursor > cell.live_classes() + 64;
  if (rebuild) {
    index.heap.clear();
    for (uint32_t slot = 0; slot < cell.class_slots(); ++slot)
      Push(cell, index, slot, shape);
    index.built = true;
  } else {
    for (uint64_t pos = index.cursor; pos < cell.events_end(); ++pos) {
      Push(cell, index, cell.event(pos), shape);
    }
  }
  index.cursor = cell.events_end();
  while (!index.heap.empty()) {
    const HeapEntry& top = index.heap.front();
    const NodeClass& k = cell.klass(top.slot);
    if (k.live() && k.generation == top.generation && k.stamp == top.stamp) {
      const Evaluation& e = Evaluate(cell, top.slot, shape);
      PlaceResult r = Finish(cell, shape, k.members.front(), e, rng);
      r.why.total_nodes = static_cast<uint32_t>(cell.node_count());
      return r;
    }
    std::pop_heap(index.heap.begin(), index.heap.end());
    index.heap.pop_back();
  }
  return PlaceByScan(cell, shape, rng);  // nothing fits: the scan explains why
}

PlaceResult Placer::PlaceByScan(const CellState& cell, const TaskShape& shape, Rng* rng) {
  std::vector<Candidate> candidates;
  candidates.reserve(cell.live_classes());
  for (uint32_t slot = 0; slot < cell.class_slots(); ++slot) {
    const NodeClass& k = cell.klass(slot);
    if (k.live()) candidates.push_back({k.members, slot});
  }
  return Select(cell, shape, candidates, static_cast<uint32_t>(cell.node_count()), rng);
}

PlaceResult Placer::PlaceWithin(const CellState& cell, const TaskShape& shape,
                                const std::vector<uint32_t>& nodes, Rng* rng) {
  Refresh(cell);
  std::vector<Candidate> candidates;
  candidates.reserve(nodes.size());
  for (const uint32_t& node : nodes)
    candidates.push_back({std::span<const uint32_t>(&node, 1), cell.node(node).klass});
  return Select(cell, shape, candidates, static_cast<uint32_t>(nodes.size()), rng);
}

PlaceResult Placer::Select(const CellState& cell, const TaskShape& shape,
                           const std::vector<Candidate>& candidates, uint32_t total, Rng* rng) {
  ReasonCounter reasons;
  uint32_t feasible = 0;
  double best_score = -std::numeric_limits<double>::infinity();
  uint32_t best_node = 0, best_rank = std::numeric_limits<uint32_t>::max();
  const Evaluation* best = nullptr;
  std::vector<std::pair<const Candidate*, const Evaluation*>> ok;
  for (const Candidate& c : candidates) {
    const Evaluation& e = Evaluate(cell, c.slot, shape);
    uint32_t members = static_cast<uint32_t>(c.nodes.size());
    if (!e.feasible) {
      reasons.Add(e.reason, members);
      continue;
    }
    feasible += members;
    ok.emplace_back(&c, &e);
    // A class's members are sorted by rank: its first is its best.
    uint32_t rank = cell.node(c.nodes.front()).rank;
    if (e.score > best_score || (e.score == best_score && rank < best_rank)) {
      best_score = e.score;
      best_rank = rank;
      best_node = c.nodes.front();
      best = &e;
    }
  }
  Explanation why = reasons.Finish(total, feasible);
  if (feasible == 0) return NotPlaced(cell, shape, std::move(why));
  if (scorer_.uniform()) {
    // Uniform over the feasible nodes, in candidate order.
    CHECK(rng != nullptr) << "a uniform placement policy needs an Rng";
    uint32_t pick = feasible == 1 ? 0 : static_cast<uint32_t>(rng->Uniform(feasible));
    for (const auto& [c, e] : ok) {
      if (pick < c->nodes.size()) {
        best_node = c->nodes[pick];
        best = e;
        break;
      }
      pick -= static_cast<uint32_t>(c->nodes.size());
    }
  }
  PlaceResult r = Finish(cell, shape, best_node, *best, rng);
  r.why = std::move(why);
  return r;
}

}  // namespace tessera
