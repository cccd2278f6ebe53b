#include "sched/quota.h"

#include <algorithm>

#include "common/quantity.h"

namespace tessera {

QuotaTracker::QuotaTracker(const Spec& spec) : spec_(spec), models_(spec.device_models.size()) {
  capacity_.assign(models_, 0);
  for (const Node& n : spec.nodes) {
    for (const Device& d : n.devices)
      capacity_[d.model.value()] += kMilliPerUnit;
  }
  size_t cells = spec.tenants.size() * models_;
  usage_.assign(cells, 0);
  guaranteed_.assign(cells, 0);
  limit_.assign(cells, -1);
  has_quota_.assign(cells, 0);
  borrow_.assign(cells, 1);
  lend_.assign(cells, 1);
  guarded_.assign(models_, false);
  for (size_t t = 0; t < spec.tenants.size(); ++t) {
    for (const Quota& q : spec.tenants[t].quotas) {
      size_t i = t * models_ + q.model.value();
      has_quota_[i] = 1;
      guaranteed_[i] = q.guaranteed;
      borrow_[i] = q.borrow;
      lend_[i] = q.lend;
      if (q.limit) limit_[i] = *q.limit;
      if (q.guaranteed > 0) guarded_[q.model.value()] = true;
    }
  }
  // An unset limit is the parent's limit: resolve top-down (parents precede children in the
  // spec only by convention, so walk each tenant's ancestry).
  for (size_t t = 0; t < spec.tenants.size(); ++t) {
    for (size_t m = 0; m < models_; ++m) {
      if (limit_[t * models_ + m] >= 0) continue;
      for (auto p = spec.tenants[t].parent; p; p = spec.tenant(*p).parent) {
        Milli l = limit_[p->value() * models_ + m];
        if (l >= 0) {
          limit_[t * models_ + m] = l;
          break;
        }
      }
    }
  }
}

QuotaVerdict QuotaTracker::Check(TenantId tenant, const std::vector<Milli>& per_model) const {
  QuotaVerdict v;
  for (size_t m = 0; m < models_ && m < per_model.size(); ++m) {
    Milli r = per_model[m];
    if (r <= 0) continue;
    const std::string& model = spec_.device_models[m].name;
    bool leaf = true;
    for (std::optional<TenantId> c = tenant; c; c = spec_.tenant(*c).parent, leaf = false) {
      size_t i = Index(*c, m);
      const std::string& path = spec_.tenant(*c).path;
      if (limit_[i] >= 0 && usage_[i] + r > limit_[i]) {
        v.ok = false;
        v.why = path + ": limit " + FormatMilli(limit_[i]) + " " + model + " reached";
        return v;
      }
      if (usage_[i] + r <= guaranteed_[i]) continue;
      if (leaf && guarded_[m]) v.borrowing = true;
      if (has_quota_[i] && !borrow_[i]) {
        v.ok = false;
        v.why = path + ": guarantee " + FormatMilli(guaranteed_[i]) + " " + model +
                " reached and it may not borrow";
        return v;
      }
      std::optional<TenantId> p = spec_.tenant(*c).parent;
      if (!p) continue;
      size_t pi = Index(*p, m);
      if (!has_quota_[pi] || guaranteed_[pi] <= 0) continue;  // no pool at this level
      Milli claims = usage_[i] + r;
      for (TenantId s : spec_.tenant(*p).children) {
        if (s == *c) continue;
        size_t si = Index(s, m);
        claims += lend_[si] ? usage_[si] : std::max(usage_[si], guaranteed_[si]);
      }
      if (claims > guaranteed_[pi]) {
        v.ok = false;
        v.why = spec_.tenant(*p).path + ": no " + model + " left to lend (" +
                FormatMilli(claims - r) + " of " + FormatMilli(guaranteed_[pi]) + " claimed)";
        return v;
      }
    }
  }
  return v;
}

Milli QuotaTracker::Headroom(TenantId tenant, size_t m) const {
  // The admitted amounts at each level form a down-set (Check above): r <= limit - usage, and
  // r <= guarantee - usage unless the level may borrow, in which case its parent's pool caps r.
  Milli room = kUnlimitedRoom;
  for (std::optional<TenantId> c = tenant; c; c = spec_.tenant(*c).parent) {
    size_t i = Index(*c, m);
    if (limit_[i] >= 0) room = std::min(room, limit_[i] - usage_[i]);
    Milli beyond = kUnlimitedRoom;  // what borrowing admits at this level
    if (has_quota_[i] && !borrow_[i]) {
      beyond = 0;
    } else if (std::optional<TenantId> p = spec_.tenant(*c).parent) {
      size_t pi = Index(*p, m);
      if (has_quota_[pi] && guaranteed_[pi] > 0) {
        Milli claims = usage_[i];
        for (TenantId s : spec_.tenant(*p).children) {
          if (s == *c) continue;
          size_t si = Index(s, m);
          claims += lend_[si] ? usage_[si] : std::max(usage_[si], guaranteed_[si]);
        }
        beyond = guaranteed_[pi] - claims;
      }
    }
    room = std::min(room, std::max(guaranteed_[i] - usage_[i], beyond));
  }
  return std::max<Milli>(room, 0);
}

void QuotaTracker::Charge(TenantId tenant, const std::vector<Milli>& per_model) {
  ++version_;
  for (std::optional<TenantId> c = tenant; c; c = spec_.tenant(*c).parent) {
    for (size_t m = 0; m < models_ && m < per_model.size(); ++m)
      usage_[Index(*c, m)] += per_model[m];
  }
}

void QuotaTracker::Refund(TenantId tenant, const std::vector<Milli>& per_model) {
  ++version_;
  for (std::optional<TenantId> c = tenant; c; c = spec_.tenant(*c).parent) {
    for (size_t m = 0; m < models_ && m < per_model.size(); ++m) {
      Milli& u = usage_[Index(*c, m)];
      u -= per_model[m];
      CHECK(u >= 0) << "quota refund below zero for " << spec_.tenant(*c).path;
    }
  }
}

Milli QuotaTracker::Limit(TenantId t, size_t model) const {
  Milli tightest = -1;
  for (std::optional<TenantId> c = t; c; c = spec_.tenant(*c).parent) {
    Milli l = limit_[Index(*c, model)];
    if (l >= 0 && (tightest < 0 || l < tightest)) tightest = l;
  }
  return tightest;
}

bool QuotaTracker::Borrowing(TenantId t, size_t model) const {
  size_t i = Index(t, model);
  return guarded_[model] && usage_[i] > guaranteed_[i];
}

bool QuotaTracker::WithinGuarantee(TenantId t, const std::vector<Milli>& per_model) const {
  for (size_t m = 0; m < models_ && m < per_model.size(); ++m) {
    if (!WithinGuarantee(t, m, per_model[m])) return false;
  }
  return true;
}

bool QuotaTracker::WithinGuarantee(TenantId t, size_t model, Milli request) const {
  return request <= 0 || usage_[Index(t, model)] + request <= guaranteed_[Index(t, model)];
}

int64_t QuotaTracker::DominantShare(TenantId t) const {
  int64_t best = 0;
  for (size_t m = 0; m < models_; ++m) {
    size_t i = Index(t, m);
    if (usage_[i] == 0) continue;
    Milli denom = guaranteed_[i] > 0 ? guaranteed_[i] : capacity_[m];
    if (denom <= 0) continue;
    best = std::max(best, usage_[i] * 1000000 / denom);
  }
  return best;
}

std::vector<int64_t> QuotaTracker::PathShares(TenantId t) const {
  std::vector<int64_t> shares;
  for (std::optional<TenantId> c = t; c; c = spec_.tenant(*c).parent)
    shares.push_back(DominantShare(*c));
  std::reverse(shares.begin(), shares.end());
  return shares;
}

QuotaRoom QuotaRoomFor(const QuotaTracker& quotas, TenantId tenant, uint64_t mask, Milli devices,
                       Milli smallest) {
  QuotaRoom room;
  Milli split = 0;
  for (size_t m = 0; m < quotas.model_count(); ++m) {
    if (!((mask >> m) & 1)) continue;
    const Milli headroom = quotas.Headroom(tenant, m);
    if (headroom >= devices) room.whole |= uint64_t{1} << m;
    split += std::min(headroom, devices) / smallest * smallest;
  }
  room.split = room.whole != 0 || split >= devices;
  return room;
}

}  // namespace tessera
