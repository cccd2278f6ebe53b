// Gang placement: all tasks of a gang, or none. The gang's topology rule names the loosest
// level its tasks may spread over (require) and the level it would like (prefer); Tessera
// tries the tightest level first and, at each level, the domains (islands, nodes, leaf
// switches, spines, clusters) that can hold the whole gang, fullest first — the tightest fit
// fragments least and leaves large domains free for large gangs.
//
// PlaceGang commits the placements to the cell when the whole gang fits and leaves the cell
// as it was otherwise (tentative commits are rolled back).
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
  std::vector<GangGroup> groups;
  TopologyLevel require = TopologyLevel::kCluster;  // kAny is treated as kCluster
  TopologyLevel prefer = TopologyLevel::kAny;
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
