// Per-cluster summaries for the global layer (docs/global.md): what one cluster offers right
// now, as a handful of numbers per device model, kept current as placements are committed and
// released:
//   free and capacity per model  — the cell's cluster-domain totals (exact);
//   the largest free share on one node per model, and the most free CPU on one node — a
//                                  sorted multiset per cluster, updated when a node changes;
//   the most free devices of a model under one leaf switch — the leaves' totals, and a
//                                  sorted multiset of them per cluster, moved by a node's
//                                  change;
//   health                       — schedulable nodes out of the cluster's nodes;
//   price per device-hour        — from the fleet configuration, and per CPU core-hour;
//   free and total CPU of the nodes without devices — for CPU-only work;
//   queue pressure per model     — the device demand of the pending jobs that may run there,
//                                  each job's demand shared evenly over the (cluster, model)
//                                  pairs it may use (kept by the engine: AddPressure).
// The global layer ranks clusters on these numbers, never on nodes, so a decision costs
// O(clusters x models). A summary can still promise what no placement finds (the free devices
// sit on nodes whose CPU is taken, or too few of them share a leaf switch): the caller then
// falls back to the next candidate.
//
// Thread-safety: none; owned by the engine next to its CellState.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "model/spec.h"
#include "sched/cell_state.h"

namespace tessera {

class ClusterSummaries {
 public:
  // `cell` must outlive the summaries; its clusters are the spec's.
  ClusterSummaries(const Spec& spec, const CellState& cell);

  // Brings the node's share of its cluster's summary up to date (after a commit, a release,
  // or a change of schedulability).
  void Touch(uint32_t node);

  size_t size() const { return clusters_.size(); }
  // Free and healthy capacity (milli) of the devices of `mask` in the cluster.
  Milli Free(uint32_t cluster, ModelMask mask) const;
  Milli Capacity(uint32_t cluster, ModelMask mask) const;
  // The most free milli of one model on one schedulable node of the cluster.
  Milli LargestNodeFree(uint32_t cluster, uint16_t model) const;
  Milli LargestNodeCpu(uint32_t cluster) const;
  // The most free milli of one model under one leaf switch of the cluster.
  Milli LargestLeafFree(uint32_t cluster, uint16_t model) const;
  // Schedulable nodes / nodes; 0 for a cluster without nodes.
  double Health(uint32_t cluster) const;
  ModelMask models(uint32_t cluster) const { return clusters_[cluster].models; }
  // Milli currency per device-hour of the model there; 0 when unpriced.
  Milli Price(uint32_t cluster, uint16_t model) const;
  Milli max_price() const { return max_price_; }
  // Milli currency per CPU core-hour there; 0 when unpriced. And the most of any cluster.
  Milli CpuPrice(uint32_t cluster) const { return clusters_[cluster].cpu_price; }
  Milli max_cpu_price() const { return max_cpu_price_; }
  // Free and total CPU (milli) of the cluster's schedulable nodes without devices.
  Milli CpuNodeFree(uint32_t cluster) const { return clusters_[cluster].cpu_node_free; }
  Milli CpuNodeCapacity(uint32_t cluster) const { return clusters_[cluster].cpu_node_capacity; }
  // Pending demand (milli) on the models of `mask` in the cluster; and its upkeep.
  Milli Pressure(uint32_t cluster, ModelMask mask) const;
  void AddPressure(uint32_t cluster, uint16_t model, Milli milli);

 private:
  struct Summary {
    std::optional<size_t> domain;  // the cell's kCluster domain
    ModelMask models = 0;
    uint32_t nodes = 0;
    uint32_t schedulable = 0;
    std::vector<std::multiset<Milli>> node_free;  // by model: one entry per schedulable node
    std::vector<std::multiset<Milli>> leaf_free;  // by model: one entry per leaf with some free
    std::multiset<Milli> node_cpu;
    std::vector<Milli> price;     // by model
    std::vector<Milli> pressure;  // by model
    Milli cpu_price = 0;
    Milli cpu_node_free = 0, cpu_node_capacity = 0;  // schedulable nodes without devices
  };
  // What one node contributes: per model present, its free milli; and its free CPU.
  struct Share {
    bool counted = false;
    std::vector<std::pair<uint16_t, Milli>> free;
    Milli cpu = 0;
  };
  void Add(uint32_t node, int sign);
  // The node's leaf: its index in leaf_totals_ (assigned on first sight).
  uint32_t LeafOf(uint32_t node);
  // Moves the leaf's free total of the model by `delta` in its cluster's multiset.
  void MoveLeaf(uint32_t node, uint16_t model, Milli delta);

  const CellState& cell_;
  std::vector<Summary> clusters_;
  std::vector<Share> shares_;                                    // by node
  std::map<std::pair<uint32_t, int32_t>, uint32_t> leaf_index_;  // (cluster, leaf) -> index
  std::vector<uint32_t> node_leaf_;                              // by node; kNoLeaf unset
  std::vector<std::vector<Milli>> leaf_totals_;                  // by leaf index, by model
  Milli max_price_ = 0;
  Milli max_cpu_price_ = 0;
};

}  // namespace tessera
