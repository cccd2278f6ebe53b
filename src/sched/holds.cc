#include "sched/holds.h"

#include <algorithm>

#include "sched/policy_match.h"

namespace tessera {

std::vector<bool> ReservationScope(const Spec& spec, const ReservationRule& r) {
  std::vector<bool> in_scope(spec.clusters.size(), false);
  for (size_t c = 0; c < spec.clusters.size(); ++c) {
    const bool named = std::find(r.clusters.begin(), r.clusters.end(),
                                 ClusterId(static_cast<uint32_t>(c))) != r.clusters.end();
    const bool in_region =
        std::find(r.regions.begin(), r.regions.end(), spec.clusters[c].region) != r.regions.end();
    in_scope[c] = (r.clusters.empty() && r.regions.empty()) || named || in_region;
  }
  return in_scope;
}

DeviceHolds::DeviceHolds(const Spec& spec, const CellState& cell) : spec_(spec), cell_(cell) {
  for (const PolicyRule& rule : spec.policies) {
    if (rule.kind() != RuleKind::kReservation || holds_.size() == 64) continue;
    const auto& r = std::get<ReservationRule>(rule.body);
    Hold h;
    h.rule = &rule;
    h.model = static_cast<uint16_t>(r.model.value());
    h.count = static_cast<Milli>(r.count) * kMilliPerUnit;
    h.lend = r.lend_preemptibly;
    h.in_scope = ReservationScope(spec, r);
    for (uint32_t n = 0; n < cell.node_count(); ++n) {
      if (!h.in_scope[cell.node(n).cluster]) continue;
      for (const DeviceSlot& d : cell.devices(n))
        if (d.model == h.model) h.capacity += kMilliPerUnit;
    }
    holds_.push_back(std::move(h));
  }
}

uint64_t DeviceHolds::OwnedBy(const Job& job) const {
  uint64_t owned = 0;
  for (size_t i = 0; i < holds_.size(); ++i)
    if (MatchesJob(spec_, holds_[i].rule->match, job)) owned |= uint64_t{1} << i;
  return owned;
}

Milli DeviceHolds::Use(const Hold& h, const std::vector<Placement>& placements) const {
  Milli use = 0;
  for (const Placement& p : placements) {
    if (!h.in_scope[cell_.node(p.node).cluster]) continue;
    auto devices = cell_.devices(p.node);
    for (const DeviceUse& u : p.devices)
      if (devices[u.index].model == h.model) use += u.milli;
  }
  return use;
}

std::string DeviceHolds::Refuses(const std::vector<Placement>& placements, uint64_t owned,
                                 bool preemptible) const {
  for (size_t i = 0; i < holds_.size(); ++i) {
    const Hold& h = holds_[i];
    if ((owned >> i) & 1) continue;
    if (h.lend && preemptible) continue;  // it may borrow held devices
    const Milli use = Use(h, placements);
    if (use == 0 || h.counted + use <= h.capacity - h.count) continue;
    return "reservation " + h.rule->name + ": " + FormatMilli(h.count) + " " +
           spec_.device_models[h.model].name + " held (" +
           FormatMilli(std::max<Milli>(0, h.capacity - h.count - h.counted)) + " left to others" +
           (h.lend ? ", more only preemptibly)" : ")");
  }
  return "";
}

void DeviceHolds::Charge(const std::vector<Placement>& placements, uint64_t owned, bool preemptible,
                         int sign) {
  for (size_t i = 0; i < holds_.size(); ++i) {
    Hold& h = holds_[i];
    const Milli use = Use(h, placements) * sign;
    if (use == 0) continue;
    if ((owned >> i) & 1) {
      h.owners += use;
      continue;
    }
    h.others += use;
    if (!(h.lend && preemptible)) h.counted += use;
  }
}

uint64_t DeviceHolds::Reclaimable(uint64_t owned) const {
  uint64_t out = 0;
  for (size_t i = 0; i < holds_.size(); ++i) {
    const Hold& h = holds_[i];
    if (((owned >> i) & 1) && h.owners < h.count && h.others > h.capacity - h.count)
      out |= uint64_t{1} << i;
  }
  return out;
}

bool DeviceHolds::Borrows(const std::vector<Placement>& placements, uint64_t owned,
                          uint64_t holds) const {
  for (size_t i = 0; i < holds_.size(); ++i)
    if (((holds >> i) & 1) && !((owned >> i) & 1) && Use(holds_[i], placements) > 0) return true;
  return false;
}

ModelMask DeviceHolds::Models(uint64_t holds) const {
  ModelMask mask = 0;
  for (size_t i = 0; i < holds_.size(); ++i)
    if ((holds >> i) & 1) mask |= ModelMask{1} << holds_[i].model;
  return mask;
}

}  // namespace tessera
