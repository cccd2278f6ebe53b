// The single-task placement pipeline: filter -> score -> select, over equivalence classes of
// nodes (CellState) with a per-class cache, so a decision costs O(distinct node states).
//
//   filter: a chain of named filters (sched/filter.h; by default schedulable, device model,
//           device memory, CPU, memory, free devices); the first that drops a node names
//           the reason.
//   score:  the policy plug-in (Scorer), once per class and task shape.
//   select: the highest score; ties go to the lowest rank (a stable key).
//
// Per task shape, the placer keeps a heap of (score, rank) over the feasible classes, brought
// up to date from CellState's log of class changes, so a decision costs O(changes since the
// shape was last placed x log classes) rather than a scan of every class. Explanations of
// why nodes were dropped need the scan: they are computed when nothing fits, or always in
// explain mode.
//
// The result separates retry-later (Pending: nothing fits now, but would on an empty cell)
// from never (Infeasible: no node could host it even if empty).
//
// Thread-safety: none; a Placer belongs to one scheduler worker, like its CellState.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/rng.h"
#include "sched/cell_state.h"
#include "sched/explain.h"
#include "sched/filter.h"
#include "sched/scorer.h"
#include "sched/task_shape.h"

namespace tessera {

enum class PlaceOutcome { kPlaced, kPending, kInfeasible };

struct PlaceResult {
  PlaceOutcome outcome = PlaceOutcome::kPending;
  Placement placement;  // set when placed
  double score = 0;
  Explanation why;  // filter counts over all nodes
  // In explain mode: the scorer's parts of the chosen node's score ("why here").
  std::vector<std::pair<std::string, double>> parts;
};

// Whether the node could host the task if it were empty and healthy.
bool FitsEmpty(const CellState& cell, uint32_t node, const TaskShape& shape);

class Placer {
 public:
  // `filters` must outlive the placer.
  explicit Placer(Scorer& scorer, const FilterChain& filters = DefaultFilters())
      : scorer_(scorer), filters_(filters) {}

  // Chooses a node and devices for one task. `shape.id` must come from a ShapeTable (it keys
  // the cache). `rng` is used only by uniform policies and may be null otherwise.
  PlaceResult Place(const CellState& cell, const TaskShape& shape, Rng* rng = nullptr);

  // Restricts candidates to nodes for which `allow(node)` is true (gang topology domains).
  // Classes are then evaluated member by member; the cache still serves filter and score.
  PlaceResult PlaceWithin(const CellState& cell, const TaskShape& shape,
                          const std::vector<uint32_t>& nodes, Rng* rng = nullptr);

  Scorer& scorer() { return scorer_; }
  const FilterChain& filters() const { return filters_; }
  // Computes the filter counts for every decision, not only failed ones.
  void set_explain(bool explain) { explain_ = explain; }

 private:
  struct HeapEntry {
    double score;
    uint32_t rank;
    uint32_t slot;
    uint32_t generation;
    uint32_t stamp;
    // std::priority_queue keeps the greatest on top: the higher score, then the lower rank.
    bool operator<(const HeapEntry& o) const {
      return score < o.score || (score == o.score && rank > o.rank);
    }
  };
  struct ShapeIndex {
    bool built = false;
    uint64_t cursor = 0;
    std::vector<HeapEntry> heap;
  };
  // A set of nodes that share one evaluation (a class's members, or a single node).
  struct Candidate {
    std::span<const uint32_t> nodes;
    uint32_t slot;
  };
  // Drops every cached score when the scorer's epoch changed (Scorer::Epoch).
  void Refresh(const CellState& cell);
  PlaceResult PlaceByScan(const CellState& cell, const TaskShape& shape, Rng* rng);
  // The one selection loop: filter counts, the best score (ties to the lower rank), or for a
  // uniform policy a random feasible node; `total` nodes are in the explanation.
  PlaceResult Select(const CellState& cell, const TaskShape& shape,
                     const std::vector<Candidate>& candidates, uint32_t total, Rng* rng);
  PlaceResult PlaceByIndex(const CellState& cell, const TaskShape& shape, Rng* rng);
  void Push(const CellState& cell, ShapeIndex& index, uint32_t slot, const TaskShape& shape);

  struct Evaluation {
    uint32_t generation = 0;
    uint32_t shape = 0;
    bool feasible = false;
    Reason reason = Reason::kUnschedulable;
    double score = 0;
    std::vector<DeviceUse> pick;
  };
  const Evaluation& Evaluate(const CellState& cell, uint32_t slot, const TaskShape& shape);
  PlaceResult Finish(const CellState& cell, const TaskShape& shape, uint32_t node,
                     const Evaluation& e, Rng* rng);
  PlaceResult NotPlaced(const CellState& cell, const TaskShape& shape, Explanation why);

  Scorer& scorer_;
  const FilterChain& filters_;
  bool explain_ = false;
  std::vector<std::vector<Evaluation>> cache_;  // by class slot
  std::vector<ShapeIndex> index_;               // by shape id
  uint64_t epoch_ = 0;                          // the scorer's epoch the caches hold
};

}  // namespace tessera
