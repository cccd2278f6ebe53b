// Gang placement: all tasks of a gang, or none. The gang's topology rule names the loosest
// level its tasks may spread over (require); Tessera tries the tightest level first and, at each
// level, the domains (islands, nodes, leaf switches, spines, clusters) that can hold the whole
// gang, fullest first — the tightest fit fragments least and leaves large domains free for large
// gangs. A job's preferred level (Job::gang.prefer) therefore needs no rule of its own here: it is
// met whenever any domain of that level holds the gang; callers report whether the result's level
// met it.
//
// Each domain tried gets a CellState::Proposal: the gang's tasks are applied to it one by one
// (so later tasks see earlier ones) and the proposal is kept when the whole gang fits, or
// aborted without a trace. PlaceGang therefore commits the placements to the cell when the
// whole gang fits and leaves the cell exactly as it was otherwise.
//
// Cost: a single task is the placer's indexed choice over the whole cell; a gang looks for
// domains through the equivalence classes (node, island) or the cell's per-domain free totals
// (leaf, spine, cluster), never a scan of every node, and tries at most 8 domains per level.
#pragma once

#include <vector>

#include "model/topology.h"
#include "sched/placer.h"

namespace tessera {

struct GangGroup {
  TaskShape shape;
  int32_t count = 1;
};

struct GangRequest {
  std::vector<GangGroup> groups;  // every group's shape has the job's placement scope
  TopologyLevel require = TopologyLevel::kCluster;  // kAny is treated as kCluster
  JobId job;  // stamped on every placement (TaskRef), with the task's index in group order
  // For a single task: node sets tried in order before the placer's own choice over its scope
  // (a service replica's nodes away from its siblings). Ignored for gangs.
  std::vector<std::vector<uint32_t>> prefer_within;
};

struct GangResult {
  PlaceOutcome outcome = PlaceOutcome::kPending;
  // One placement per task, group by group, in task order; set when placed.
  std::vector<Placement> placements;
  // In explain mode (Placer::set_explain), each placement's score parts, aligned with it.
  std::vector<std::vector<std::pair<std::string, double>>> parts;
  TopologyLevel level = TopologyLevel::kAny;  // the level the gang landed within
  Explanation why;                            // when not placed
  std::string detail;                         // e.g. "no leaf holds 256 free devices"
};

GangResult PlaceGang(CellState& cell, Placer& placer, const GangRequest& gang, Rng* rng = nullptr);

}  // namespace tessera
