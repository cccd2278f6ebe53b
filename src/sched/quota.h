// Hierarchical quotas per device model (the tenant tree of model/tenant.h), and the
// dominant-resource shares that order tenants fairly.
//
// Semantics:
//  * usage counts milli-devices of running jobs, charged to the job's tenant and every
//    ancestor;
//  * a tenant never exceeds its `limit` for a model;
//  * up to its `guaranteed` share it needs nobody's consent; beyond it, it is *borrowing*:
//    allowed only if it may borrow, and if its parent's pool still has room once every
//    sibling's claim is counted — a sibling that may lend claims only what it uses, one that
//    may not lend claims its whole guarantee. The parent's pool is its own guarantee (a
//    parent with none imposes no pool: the check moves up);
//  * a job whose tenant is within its guarantee may reclaim borrowed capacity by preempting
//    jobs of borrowing tenants (the engine's preemption step).
//
// Thread-safety: none; owned by the engine.
#pragma once

#include <string>
#include <vector>

#include "common/quantity.h"
#include "model/spec.h"

namespace tessera {

struct QuotaVerdict {
  bool ok = true;
  bool borrowing = false;  // admitted beyond the tenant's own guarantee
  std::string why;         // when refused: "acme/research: limit 16 H800 reached"
};

class QuotaTracker {
 public:
  explicit QuotaTracker(const Spec& spec);

  // `per_model[m]` = milli-devices of model m the run would add.
  QuotaVerdict Check(TenantId tenant, const std::vector<Milli>& per_model) const;
  // The most milli-devices of `model` a run of the tenant could add now (Check admits r > 0
  // of that model alone exactly when r <= Headroom); kUnlimitedRoom when nothing caps it.
  static constexpr Milli kUnlimitedRoom = Milli{1} << 60;
  Milli Headroom(TenantId tenant, size_t model) const;
  void Charge(TenantId tenant, const std::vector<Milli>& per_model);
  void Refund(TenantId tenant, const std::vector<Milli>& per_model);

  Milli usage(TenantId t, size_t model) const { return usage_[Index(t, model)]; }
  Milli guaranteed(TenantId t, size_t model) const { return guaranteed_[Index(t, model)]; }
  // Whether the tenant uses more of `model` than it is guaranteed (capacity it borrowed).
  bool Borrowing(TenantId t, size_t model) const;
  // Whether adding `per_model` keeps the tenant within its own guarantee on every model.
  bool WithinGuarantee(TenantId t, const std::vector<Milli>& per_model) const;
  // The same for `request` of one model.
  bool WithinGuarantee(TenantId t, size_t model, Milli request) const;
  // The tightest limit of `model` on the tenant and its ancestors; -1 when none.
  Milli Limit(TenantId t, size_t model) const;
  // Whether any tenant declares a guarantee for the model (otherwise nobody reclaims it).
  bool Guarded(size_t model) const { return guarded_[model]; }

  // The dominant share of a tenant: its largest usage / (guarantee, or the fleet's capacity
  // when it has none) over the models, in parts per million.
  int64_t DominantShare(TenantId t) const;
  // Shares along the path root -> tenant: hierarchical DRF compares these lexicographically.
  std::vector<int64_t> PathShares(TenantId t) const;

  size_t model_count() const { return models_; }
  // Changes with every Charge and Refund: shares computed at one version stay valid.
  uint64_t version() const { return version_; }

 private:
  size_t Index(TenantId t, size_t m) const { return t.value() * models_ + m; }
  const Spec& spec_;
  size_t models_ = 0;
  std::vector<Milli> capacity_;  // by model, whole fleet
  std::vector<Milli> usage_;     // tenant x model
  std::vector<Milli> guaranteed_;
  std::vector<Milli> limit_;  // -1 = none
  std::vector<uint8_t> has_quota_, borrow_, lend_;
  std::vector<bool> guarded_;
  uint64_t version_ = 0;
};

// What a tenant's quota admits of a job now: the models that take it whole, and whether it
// fits at all (whole, or split across models, each taking whole tasks).
struct QuotaRoom {
  uint64_t whole = 0;  // a ModelMask
  bool split = false;
  bool operator==(const QuotaRoom&) const = default;
};

// The room for a job of `devices` milli-devices whose smallest device task takes `smallest`
// (both > 0: a CPU-only job needs no device quota), on the models of `mask` (a ModelMask).
QuotaRoom QuotaRoomFor(const QuotaTracker& quotas, TenantId tenant, uint64_t mask, Milli devices,
                       Milli smallest);

}  // namespace tessera
