// The daemon's views of money and shares: spending over a period (Accounting), and each
// tenant's quotas against what it uses now.
#include "server/daemon.h"

namespace tessera {

using json = nlohmann::ordered_json;

Result<json> Daemon::Costs(const Caller& caller, const std::string& by, TimeMs since,
                           TimeMs until) {
  return Accounting::Spending(*store_, caller, by, since, until, clock_.Now(), spec()->currency);
}

json Daemon::Tenants(const Caller& caller) const {
  ViewLock lock(*this);
  const QuotaTracker& q = engine_->quotas();
  json out = json::array();
  for (size_t t = 0; t < spec_->tenants.size(); ++t) {
    const Tenant& tenant = spec_->tenants[t];
    if (!caller.MaySee(tenant.path)) continue;
    TenantId id(static_cast<uint32_t>(t));
    json quotas = json::array();
    for (size_t m = 0; m < spec_->device_models.size(); ++m) {
      Milli used = q.usage(id, m);
      const Quota* declared = tenant.QuotaFor(DeviceModelId(static_cast<uint32_t>(m)));
      if (used == 0 && declared == nullptr) continue;
      Milli limit = q.Limit(id, m);
      json row = {{"model", spec_->device_models[m].name},
                  {"used", static_cast<double>(used) / kMilliPerUnit},
                  {"guaranteed", static_cast<double>(q.guaranteed(id, m)) / kMilliPerUnit}};
      row["limit"] = limit >= QuotaTracker::kUnlimitedRoom
                         ? json(nullptr)
                         : json(static_cast<double>(limit) / kMilliPerUnit);
      row["borrowing"] = q.Borrowing(id, m);
      quotas.push_back(row);
    }
    json entry = {{"tenant", tenant.path}, {"quotas", quotas}};
    if (tenant.budget_per_day) {
      entry["budget_per_day"] = static_cast<double>(*tenant.budget_per_day) / kMilliPerUnit;
    }
    out.push_back(entry);
  }
  return out;
}

}  // namespace tessera
