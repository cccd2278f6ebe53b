// Placement scopes: where a job may run under the configuration's hard rules, as one verdict
// per cluster — allowed, or excluded with the Reason that names the rule kind (a region or
// cluster a `constrain` rule denies, a tier the tier order leaves out, a dataset's
// residency). A TaskShape names its scope by id; scope 0 allows every cluster.
//
// The scope filters (MakeScopedFilters) run first in the chain, so a node a job may never use
// is explained by the policy, not by its momentary load, and a task whose every candidate is
// excluded is Infeasible rather than Pending. They depend only on the node's cluster, which
// is part of a node's equivalence class (CellState), so they are class-safe.
//
// Thread-safety: Intern mutates; Excluded and the filters only read. Intern every scope
// before placing on other threads.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sched/explain.h"
#include "sched/filter.h"

namespace tessera {

class ScopeTable {
 public:
  using Verdicts = std::vector<std::optional<Reason>>;  // by ClusterId value

  // Returns the id of the scope with these verdicts (equal verdicts, equal ids). A verdict
  // list that excludes nothing is scope 0.
  uint32_t Intern(const Verdicts& by_cluster);
  // Why `cluster` is excluded from `scope`; nullopt when it is allowed.
  std::optional<Reason> Excluded(uint32_t scope, uint32_t cluster) const {
    if (scope == 0) return std::nullopt;
    const Verdicts& v = scopes_[scope - 1];
    return cluster < v.size() ? v[cluster] : std::nullopt;
  }
  size_t size() const { return scopes_.size() + 1; }

 private:
  std::vector<Verdicts> scopes_;  // scope id - 1
  std::map<Verdicts, uint32_t> ids_;
};

// Whether a node of `cluster` is in the task's scope (true when the chain has no scopes).
inline bool InScope(const FilterChain& chain, const TaskShape& shape, uint32_t cluster) {
  return chain.scopes() == nullptr || !chain.scopes()->Excluded(shape.scope, cluster);
}

// The policy filters over `scopes` (which must outlive the chain), then the default chain.
FilterChain MakeScopedFilters(const ScopeTable& scopes);

}  // namespace tessera
