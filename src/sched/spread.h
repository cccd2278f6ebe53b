// Where each service's running replicas are, so that the next replica goes elsewhere
// (docs/global.md#spreading-a-services-replicas).
//
// A replica job carries its service's name in the label `tessera.io/service`; the replicas of
// one service form a group. A failure takes down a node, or a leaf switch with every node under
// it, or a whole cluster; replicas spread over them survive it. So, for a job of a group with
// replicas running:
//   * the global layer ranks a cluster lower by the share of the group's replicas already
//     there (weighted by the `spread` weight: GlobalRequest::w_spread);
//   * within the chosen cluster the replica goes first to a node under a leaf switch that hosts
//     none of its siblings, else to a node that hosts none, else wherever the placer chooses.
// These are preferences: a replica never waits because only a sibling's node has room.
//
// Thread-safety: none; owned by the engine.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/job.h"
#include "sched/cell_state.h"

namespace tessera {

class ReplicaSpread {
 public:
  ReplicaSpread(const CellState& cell, size_t clusters);

  // The job's group (interned from its service label), or nullopt for a job of no service.
  std::optional<uint32_t> GroupOf(const Job& job);
  // A run of the group starts (sign +1) or stops (-1) on these placements.
  void Track(uint32_t group, const std::vector<Placement>& placements, int sign);
  // Running replicas of the group, in all and by cluster (ClusterId value).
  int32_t running(uint32_t group) const { return groups_[group].running; }
  const std::vector<int32_t>& by_cluster(uint32_t group) const { return groups_[group].by_cluster; }
  // The node sets to try, in order, before the placer's own choice: the nodes (of `cluster`,
  // or of the whole cell) under leaf switches that host no sibling, then the nodes that host
  // none. Empty sets are left out; nothing when the group has no replica running.
  std::vector<std::vector<uint32_t>> Tiers(uint32_t group, std::optional<uint32_t> cluster) const;

 private:
  struct Group {
    int32_t running = 0;
    std::vector<int32_t> by_cluster;
    std::unordered_map<uint32_t, int32_t> by_node;
    std::map<std::pair<uint32_t, int32_t>, int32_t> by_leaf;  // (cluster, leaf)
  };

  const CellState& cell_;
  size_t clusters_;
  std::unordered_map<std::string, uint32_t> index_;  // service name -> group
  std::vector<Group> groups_;
};

}  // namespace tessera
