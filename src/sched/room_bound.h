// A count of room node by node: whether a gang could be placed once some running tasks are
// released, by each node's free devices, CPU and memory alone. It ignores topology, guards,
// scopes, quotas and scoring, so it is a necessary condition only: when it says no, no
// placement exists; when it says yes, the placer decides. The preemption search asks it which
// victim sets are worth a trial release (DESIGN.md §3, step 5).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "sched/cell_state.h"
#include "sched/gang.h"

namespace tessera {

class RoomBound {
 public:
  // `gang`'s groups with their models narrowed to `mask`; only nodes of the clusters for which
  // `allowed[cluster]` holds count (empty: every cluster). With `one_cluster`, every group must
  // fit within one cluster (a gang stays within one); otherwise the whole fleet counts as one.
  RoomBound(const CellState& cell, const GangRequest& gang, ModelMask mask,
            std::vector<bool> allowed, bool one_cluster);

  // Counts `p`'s resources as free again (a task released).
  void Release(const Placement& p);
  // Whether some cluster (or the fleet) holds every group's tasks by count.
  bool Fits() const;

 private:
  struct Freed {
    Milli cpu = 0;
    MiB memory = 0;
    std::vector<std::pair<uint16_t, Milli>> devices;  // (index, milli)
  };
  struct Group {
    TaskShape shape;
    int64_t tasks = 0;
  };
  // How many of group g's tasks node `node` holds, with `freed` (null: nothing) added.
  int64_t TasksOn(uint32_t node, const Group& g, const Freed* freed) const;
  bool Counts(uint32_t node) const;
  size_t Domain(uint32_t node) const { return one_cluster_ ? cell_.node(node).cluster : 0; }

  const CellState& cell_;
  std::vector<Group> groups_;
  std::vector<bool> allowed_;
  bool one_cluster_ = false;
  std::vector<int64_t> fit_;  // [domain * groups + group]: tasks that fit
  std::unordered_map<uint32_t, Freed> freed_;
};

}  // namespace tessera
