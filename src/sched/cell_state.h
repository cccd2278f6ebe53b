// CellState: the scheduler's view of a cell (one cluster, or several): nodes with free CPU and
// memory, and their devices as individual instances with a free milli-share each.
//
// Versioned for shared-state concurrency (docs/architecture.md, Omega-style): every node carries
// the version of its last change, and a Placement records the version it was computed against;
// Commit rejects it as stale if the node changed since.
//
// Equivalence classes: nodes whose whole state is identical (same cluster and static type, free
// CPU, free memory, per-device free shares and health, kinds of tasks placed) share a class, so
// filtering and scoring run once per class and the cost of a decision grows with the number
// of distinct node states, not nodes. Members of a class are kept sorted by rank, the
// tie-breaker (lower wins).
//
// Thread-safety: none. One scheduler worker owns a CellState; proposals computed elsewhere
// are committed by the owner.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "model/spec.h"
#include "model/topology.h"
#include "sched/task_shape.h"

namespace tessera {

struct DeviceSlot {
  uint16_t model = 0;    // DeviceModelId value
  uint16_t island = 0;   // island index within the node
  uint16_t free = 1000;  // free milli-share
  bool healthy = true;
};

struct NodeState {
  Milli cpu_total = 0;
  Milli cpu_free = 0;
  MiB mem_total = 0;
  MiB mem_free = 0;
  uint64_t version = 0;
  ModelMask models = 0;       // device models present on the node
  uint32_t first_device = 0;  // index into the device array
  uint16_t device_count = 0;
  uint16_t type = 0;        // nodes with equal capacity and device layout share a type
  uint32_t cluster = 0;     // ClusterId value
  int32_t leaf = 0;         // cluster-local leaf switch
  int32_t spine = 0;        // cluster-local spine
  uint32_t rank = 0;        // tie-breaker: the lower rank wins
  uint32_t kinds = 0;       // bit mask of TaskShape::kind() of the tasks placed
  uint32_t tasks = 0;       // tasks placed
  uint32_t klass = 0;       // equivalence class slot
  bool schedulable = true;  // not cordoned, healthy
  bool retired = false;     // removed from the fleet; keeps its index
};

// One device of a placement and the share it takes.
struct DeviceUse {
  uint16_t index = 0;  // device index within the node
  Milli milli = 0;
};

// Which task of which job a placement is for (index in the job's own task order).
struct TaskRef {
  JobId job;
  int32_t index = -1;
  bool operator==(const TaskRef&) const = default;
};

// Where one task goes: a proposal until committed.
struct Placement {
  uint32_t node = 0;
  uint64_t node_version = 0;
  Milli cpu = 0;
  MiB memory = 0;
  uint32_t kind = 0;
  std::vector<DeviceUse> devices;
  TaskRef task;
};

struct NodeClass {
  uint32_t generation = 0;        // bumped whenever the slot is reused
  uint32_t stamp = 0;             // bumped whenever the members change
  std::vector<uint32_t> members;  // node indices, sorted by (rank, index)
  uint64_t hash = 0;
  bool live() const { return !members.empty(); }
};

class CellState {
 public:
  class Proposal;

  // Nodes of the whole spec, or of one cluster. Ranks default to the node order.
  static Result<CellState> FromSpec(const Spec& spec, std::optional<ClusterId> only = {});

  size_t node_count() const { return nodes_.size(); }
  const NodeState& node(uint32_t i) const { return nodes_[i]; }
  std::span<const DeviceSlot> devices(uint32_t i) const {
    return {devices_.data() + nodes_[i].first_device, nodes_[i].device_count};
  }
  const std::string& node_name(uint32_t i) const { return names_[i]; }
  // The ledger of a node: the tasks committed to it, in commit order (what preemption and a
  // lost node must stop).
  std::span<const TaskRef> tasks_on(uint32_t i) const { return ledger_[i]; }
  NodeId spec_node(uint32_t i) const { return spec_ids_[i]; }
  MiB model_memory(uint16_t model) const { return model_memory_[model]; }
  size_t model_count() const { return model_memory_.size(); }
  uint64_t version() const { return version_; }

  // Equivalence classes, by slot; dead slots have no members.
  size_t class_slots() const { return classes_.size(); }
  const NodeClass& klass(uint32_t slot) const { return classes_[slot]; }
  size_t live_classes() const { return live_classes_; }

  // The log of class changes (a class born, or its members changed), as slot numbers, so a
  // placer can maintain per-shape indexes incrementally. Positions are absolute; the log is
  // trimmed from the front, and a reader whose position is below events_begin() must rebuild.
  uint64_t events_begin() const { return events_base_; }
  uint64_t events_end() const { return events_base_ + events_.size(); }
  uint32_t event(uint64_t position) const { return events_[position - events_base_]; }

  // Applies a placement; FailedPrecondition if the node changed since it was computed,
  // InvalidArgument if it does not fit (a bug in the proposer, reported rather than applied).
  Status Commit(const Placement& p);
  // Returns a committed placement's resources (a task ended or was preempted).
  void Release(const Placement& p);
  void SetRanks(const std::vector<uint32_t>& rank_of_node);
  // Node indices are stable for the life of the cell: a node registered while the daemon runs
  // is appended (AddNode, for a node already in `spec`; errors for an unknown or present
  // node), and a node that leaves the fleet is retired, never removed: it keeps its index and
  // ledger, takes nothing new and no longer counts as capacity.
  Result<uint32_t> AddNode(const Spec& spec, NodeId id);
  void RetireNode(uint32_t node);
  void SetSchedulable(uint32_t node, bool schedulable);

  // Bytes held per node (state, devices, name, class membership), for the memory target.
  size_t MemoryBytes() const;

  // Topology domains above the node — leaf switches, spines, clusters (`level` is one of
  // kLeaf, kSpine, kCluster) — with their free capacity kept current by Commit, Release and
  // SetSchedulable, so that a gang finds the domains that can hold it in O(domains x
  // models) rather than O(nodes). Free counts healthy devices on schedulable nodes;
  // capacity counts every healthy device and all CPU, as if the cell were empty.
  size_t domain_count(TopologyLevel level) const { return domains_[DomainLevel(level)].size(); }
  const std::vector<uint32_t>& domain_nodes(TopologyLevel level, size_t d) const {
    return domains_[DomainLevel(level)][d].nodes;
  }
  // The domain of `level` that holds `node`.
  size_t domain_of(TopologyLevel level, uint32_t node) const {
    return node_domain_[DomainLevel(level)][node];
  }
  // Free milli of the devices whose model is in `mask`, and free CPU.
  Milli DomainFreeDevices(TopologyLevel level, size_t d, ModelMask mask) const;
  Milli DomainFreeCpu(TopologyLevel level, size_t d) const {
    return domains_[DomainLevel(level)][d].cpu_free;
  }
  Milli DomainDeviceCapacity(TopologyLevel level, size_t d, ModelMask mask) const;
  // The kCluster domain of a cluster (ClusterId value); nullopt when it has no node here.
  std::optional<size_t> ClusterDomain(uint32_t cluster) const;
  Milli DomainCpuCapacity(TopologyLevel level, size_t d) const {
    return domains_[DomainLevel(level)][d].cpu_total;
  }
  // The most devices (milli) and the most CPU (milli) any one node has.
  Milli max_node_device_milli() const { return max_node_device_milli_; }
  Milli max_node_cpu() const { return max_node_cpu_; }
  // Devices of each model in the cell, and of all models, as declared (healthy or not).
  int64_t model_devices(uint16_t model) const { return model_devices_[model]; }
  int64_t device_total() const { return device_total_; }

 private:
  friend class Proposal;
  struct NodeSnapshot {
    uint32_t node;
    NodeState state;
    std::vector<DeviceSlot> devices;
    std::vector<TaskRef> ledger;
  };
  void Restore(const NodeSnapshot& snap);

  struct Builder;
  void Classify(uint32_t node);
  void Unclassify(uint32_t node);
  uint64_t Hash(uint32_t node) const;
  bool SameState(uint32_t a, uint32_t b) const;
  void Touch(uint32_t node);
  void LogEvent(uint32_t slot);
  static size_t DomainLevel(TopologyLevel level);
  void AppendNode(const Node& n, NodeId id);
  void BuildDomains();
  void PlaceInDomains(uint32_t node);
  // Adds (sign +1) or removes (-1) a node's free capacity from its domains' totals.
  void AccountDomains(uint32_t node, int sign);
  // Adds (sign +1, a release) or removes (-1, a commit) one placement's share.
  void ShiftDomains(const Placement& p, int sign);
  Milli SumModels(const std::vector<Milli>& per_model, size_t d, ModelMask mask) const;

  struct Domain {
    std::vector<uint32_t> nodes;
    Milli cpu_free = 0;
    Milli cpu_total = 0;
  };
  static constexpr size_t kDomainLevels = 3;  // leaf, spine, cluster
  std::vector<Domain> domains_[kDomainLevels];
  std::map<std::pair<uint32_t, int32_t>, uint32_t> domain_index_[kDomainLevels];
  std::vector<uint32_t> node_domain_[kDomainLevels];   // node -> domain index
  std::vector<Milli> domain_free_[kDomainLevels];      // domain x model
  std::vector<Milli> domain_capacity_[kDomainLevels];  // domain x model
  Milli max_node_device_milli_ = 0;
  Milli max_node_cpu_ = 0;
  std::vector<int64_t> model_devices_;
  int64_t device_total_ = 0;

  std::vector<NodeState> nodes_;
  std::vector<DeviceSlot> devices_;
  std::vector<std::string> names_;
  std::vector<std::vector<TaskRef>> ledger_;  // by node
  std::vector<NodeId> spec_ids_;
  std::vector<MiB> model_memory_;
  std::vector<NodeClass> classes_;
  std::vector<uint32_t> free_slots_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> by_hash_;
  size_t live_classes_ = 0;
  uint64_t version_ = 0;
  std::vector<uint32_t> events_;
  uint64_t events_base_ = 0;
  std::map<std::tuple<uint32_t, Milli, MiB, std::vector<std::pair<uint32_t, int32_t>>>, uint16_t>
      types_;
};

// A gang's placements, proposed together: each is applied to the cell as it is added (so the
// gang's later tasks see its earlier ones), then the whole set is kept, or undone exactly —
// free capacity, task counts and kinds, domain totals and node versions return to what they
// were, so an aborted proposal leaves nothing a later proposer could see as a conflict. The
// destructor aborts a proposal that was not kept.
//
// Thread-safety: as CellState; at most one open proposal per cell.
class CellState::Proposal {
 public:
  explicit Proposal(CellState& cell) : cell_(cell), version_(cell.version_) {}
  ~Proposal() { Abort(); }
  Proposal(const Proposal&) = delete;
  Proposal& operator=(const Proposal&) = delete;

  // Applies one placement (CellState::Commit's checks and errors).
  Status Add(const Placement& p);
  void Keep() { open_ = false; }
  void Abort();
  const std::vector<Placement>& placements() const { return placements_; }

 private:
  CellState& cell_;
  uint64_t version_;
  bool open_ = true;
  std::vector<NodeSnapshot> touched_;
  std::vector<Placement> placements_;
};

}  // namespace tessera
