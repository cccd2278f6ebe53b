#include "sched/room_bound.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "sched/scorer.h"

namespace tessera {

RoomBound::RoomBound(const CellState& cell, const GangRequest& gang, ModelMask mask,
                     std::vector<bool> allowed, bool one_cluster)
    : cell_(cell), allowed_(std::move(allowed)), one_cluster_(one_cluster) {
  for (const GangGroup& g : gang.groups) {
    Group group{g.shape, g.count};
    if (!group.shape.cpu_only()) group.shape.models &= mask;
    groups_.push_back(group);
  }
  size_t domains = 1;
  for (uint32_t n = 0; one_cluster_ && n < cell_.node_count(); ++n)
    domains = std::max<size_t>(domains, cell_.node(n).cluster + 1);
  fit_.assign(domains * groups_.size(), 0);
  // A node without a device of the groups' models holds none of their device tasks.
  ModelMask models = 0;
  bool cpu_tasks = false;
  for (const Group& g : groups_) {
    if (g.shape.cpu_only())
      cpu_tasks = true;
    else
      models |= g.shape.models;
  }
  // The nodes of one class are alike (type, cluster, free resources): one count for them all.
  for (uint32_t slot = 0; slot < cell_.class_slots(); ++slot) {
    const NodeClass& k = cell_.klass(slot);
    if (!k.live()) continue;
    const uint32_t n = k.members.front();
    if (!Counts(n) || (!cpu_tasks && (cell_.node(n).models & models) == 0)) continue;
    const auto members = static_cast<int64_t>(k.members.size());
    for (size_t g = 0; g < groups_.size(); ++g)
      fit_[Domain(n) * groups_.size() + g] += TasksOn(n, groups_[g], nullptr) * members;
  }
}

bool RoomBound::Counts(uint32_t node) const {
  const NodeState& n = cell_.node(node);
  return n.schedulable && !n.retired && (allowed_.empty() || allowed_[n.cluster]);
}

int64_t RoomBound::TasksOn(uint32_t node, const Group& g, const Freed* freed) const {
  const NodeState& n = cell_.node(node);
  const TaskShape& s = g.shape;
  int64_t fit = g.tasks;  // more than the group asks for counts as its whole
  if (s.cpu > 0) fit = std::min<int64_t>(fit, (n.cpu_free + (freed ? freed->cpu : 0)) / s.cpu);
  if (s.memory > 0)
    fit = std::min<int64_t>(fit, (n.mem_free + (freed ? freed->memory : 0)) / s.memory);
  if (s.cpu_only() || fit == 0) return fit;
  auto devices = cell_.devices(node);
  int64_t whole = 0, shares = 0;
  for (size_t k = 0; k < devices.size(); ++k) {
    if (!DeviceEligible(cell_, devices[k], s)) continue;
    Milli free = devices[k].free;
    if (freed)
      for (const auto& [index, milli] : freed->devices)
        if (index == k) free += milli;
    if (s.fractional())
      shares += free / s.milli;
    else if (free >= 1000)
      ++whole;
  }
  return std::min(fit, s.fractional() ? shares : whole / s.count);
}

void RoomBound::Release(const Placement& p) {
  if (!Counts(p.node)) return;
  auto [it, fresh] = freed_.try_emplace(p.node);
  Freed& f = it->second;
  const size_t base = Domain(p.node) * groups_.size();
  for (size_t g = 0; g < groups_.size(); ++g)
    fit_[base + g] -= TasksOn(p.node, groups_[g], fresh ? nullptr : &f);
  f.cpu += p.cpu;
  f.memory += p.memory;
  for (const DeviceUse& u : p.devices)
    f.devices.emplace_back(u.index, u.milli);
  for (size_t g = 0; g < groups_.size(); ++g)
    fit_[base + g] += TasksOn(p.node, groups_[g], &f);
}

bool RoomBound::Fits() const {
  const size_t n = groups_.size();
  for (size_t d = 0; n > 0 && d < fit_.size() / n; ++d) {
    bool all = true;
    for (size_t g = 0; g < n && all; ++g)
      all = fit_[d * n + g] >= groups_[g].tasks;
    if (all) return true;
  }
  return n == 0;
}

}  // namespace tessera
