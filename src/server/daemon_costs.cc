// The daemon's views of money and shares: spending over a period (Accounting), and each
// tenant's quotas against what it uses now.
#include "server/daemon.h"

namespace tessera {

Result<SpendingReport> Daemon::Costs(const Caller& caller, const std::string& by, TimeMs since,
                                     TimeMs until) {
  return Accounting::Spending(*store_, caller, by, since, until, clock_.Now(), spec()->currency);
}

std::vector<TenantView> Daemon::Tenants(const Caller& caller) const {
  ViewLock lock(*this);
  const QuotaTracker& q = engine_->quotas();
  std::vector<TenantView> out;
  for (size_t t = 0; t < spec_->tenants.size(); ++t) {
    const Tenant& tenant = spec_->tenants[t];
    if (!caller.MaySee(tenant.path)) continue;
    TenantId id(static_cast<uint32_t>(t));
    TenantView v{tenant.path, {}, tenant.budget_per_day};
    for (size_t m = 0; m < spec_->device_models.size(); ++m) {
      Milli used = q.usage(id, m);
      const Quota* declared = tenant.QuotaFor(DeviceModelId(static_cast<uint32_t>(m)));
      if (used == 0 && declared == nullptr) continue;
      Milli limit = q.Limit(id, m);
      v.quotas.push_back(
          {spec_->device_models[m].name, used, q.guaranteed(id, m),
           limit >= QuotaTracker::kUnlimitedRoom ? std::nullopt : std::optional<Milli>(limit),
           q.Borrowing(id, m)});
    }
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace tessera
