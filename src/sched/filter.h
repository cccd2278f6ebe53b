// The placer's filter chain: named node filters, each dropping the nodes that cannot host a
// task for one reason of its own, applied in order; the first that drops a node names the
// reason in explanations ("0/1213 nodes fit: 1002 insufficient free devices, ...").
//
// Contract of a filter: its verdict depends only on the task shape and the node state that
// an equivalence class of CellState shares (capacity type, free CPU, memory and device
// shares, health and schedulability), because the placer evaluates it once per class. A
// filter that needs more — a node's cluster or labels for policy rules, a tenant's quota —
// must be made class-safe first (by the class key) or applied outside the placer.
//
// Thread-safety: filters are immutable after construction; a chain may be shared by placers
// on several threads.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "sched/cell_state.h"
#include "sched/explain.h"
#include "sched/task_shape.h"

namespace tessera {

class ScopeTable;

class NodeFilter {
 public:
  virtual ~NodeFilter() = default;
  virtual std::string_view name() const = 0;
  // The reason recorded for the nodes this filter drops.
  virtual Reason reason() const = 0;
  virtual bool Keep(const CellState& cell, uint32_t node, const TaskShape& shape) const = 0;
};

class FilterChain {
 public:
  // Appends a filter; filters run in the order they were added.
  void Add(std::unique_ptr<NodeFilter> filter) { filters_.push_back(std::move(filter)); }
  // Appends every filter of `other`, in its order.
  void Append(FilterChain other);
  // The reason of the first filter that drops the node; nullopt = the node can host the task.
  std::optional<Reason> Check(const CellState& cell, uint32_t node, const TaskShape& shape) const;
  std::vector<std::string_view> names() const;

  // The placement scopes the chain's policy filters read (sched/scope.h), if it has them: the
  // gang search uses them to skip whole topology domains a job may not use.
  const ScopeTable* scopes() const { return scopes_; }
  void set_scopes(const ScopeTable* scopes) { scopes_ = scopes; }

 private:
  std::vector<std::unique_ptr<NodeFilter>> filters_;
  const ScopeTable* scopes_ = nullptr;
};

// The chain every placer starts from: schedulable, device model, device memory, CPU, memory,
// free devices. MakeDefaultFilters returns a fresh copy to extend (quota, reservation,
// health filters go after these).
const FilterChain& DefaultFilters();
FilterChain MakeDefaultFilters();

}  // namespace tessera
