#include "sched/scope.h"

#include <algorithm>
#include <memory>
#include <string>

namespace tessera {

uint32_t ScopeTable::Intern(const Verdicts& by_cluster) {
  if (std::none_of(by_cluster.begin(), by_cluster.end(),
                   [](const std::optional<Reason>& r) { return r.has_value(); })) {
    return 0;
  }
  auto [it, fresh] = ids_.emplace(by_cluster, static_cast<uint32_t>(scopes_.size() + 1));
  if (fresh) scopes_.push_back(by_cluster);
  return it->second;
}

namespace {

// Drops the nodes of the clusters the task's scope excludes for one reason.
class ScopeFilter final : public NodeFilter {
 public:
  ScopeFilter(const ScopeTable& scopes, Reason reason, std::string name)
      : scopes_(scopes), reason_(reason), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  Reason reason() const override { return reason_; }
  bool Keep(const CellState& cell, uint32_t node, const TaskShape& shape) const override {
    return scopes_.Excluded(shape.scope, cell.node(node).cluster) != reason_;
  }

 private:
  const ScopeTable& scopes_;
  Reason reason_;
  std::string name_;
};

}  // namespace

FilterChain MakeScopedFilters(const ScopeTable& scopes) {
  FilterChain c;
  c.Add(std::make_unique<ScopeFilter>(scopes, Reason::kRegionNotAllowed, "policy-region"));
  c.Add(std::make_unique<ScopeFilter>(scopes, Reason::kClusterNotAllowed, "policy-cluster"));
  c.Add(std::make_unique<ScopeFilter>(scopes, Reason::kTierNotAllowed, "policy-tier"));
  c.Add(std::make_unique<ScopeFilter>(scopes, Reason::kDataResidency, "data-residency"));
  c.Add(std::make_unique<ScopeFilter>(scopes, Reason::kLaterPreference, "preference"));
  c.Append(MakeDefaultFilters());
  c.set_scopes(&scopes);
  return c;
}

}  // namespace tessera
