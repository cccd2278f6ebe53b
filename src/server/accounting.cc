// The daemon's accounting: what each run costs where (cost rows in the store, opened at a
// run's start and closed at its end), spending by tenant, project, cluster or model over a
// period, and the tenants' quotas against what they use now.
#include <fmt/format.h>

#include "server/daemon.h"

namespace tessera {

using json = nlohmann::ordered_json;

void Daemon::OpenCosts(const DecisionChange& d, int64_t id) {
  CloseCosts(id, d.time);  // a run that restarts without stopping (a migration)
  for (const RunRate::Part& part : d.rate.parts) {
    CostRow row;
    row.id = ++last_cost_;
    row.job = id;
    row.tenant = jobs_[id - 1].tenant;
    row.cluster = spec_->clusters[part.cluster].name;
    row.model = part.model < 0 ? "cpu" : spec_->model(DeviceModelId(part.model)).name;
    row.start = d.time;
    row.per_hour = part.per_hour;
    open_costs_[id].push_back(row.id);
    store_->InsertCost(std::move(row));
  }
}

void Daemon::CloseCosts(int64_t id, TimeMs end) {
  auto it = open_costs_.find(id);
  if (it == open_costs_.end()) return;
  for (int64_t row : it->second)
    store_->EndCost(row, end);
  open_costs_.erase(it);
}

Result<json> Daemon::Costs(const Caller& caller, const std::string& by, TimeMs since,
                           TimeMs until) {
  static const std::vector<std::string> kBy = {"tenant", "project", "cluster", "model"};
  if (std::find(kBy.begin(), kBy.end(), by) == kBy.end()) {
    return InvalidArgument("\"by\" must be tenant, project, cluster or model, not \"" + by + "\"");
  }
  if (since >= until) return InvalidArgument("the period is empty: since must be before until");
  TimeMs now = clock_.Now();
  // Open rows are committed as the writer gets to them; read after everything queued.
  if (Status s = store_->Flush().get(); !s.ok()) return s;
  auto rows = store_->QueryCosts(since, until, now);
  if (!rows.ok()) return rows.status();
  std::map<std::string, double> totals;
  double total = 0;
  for (const CostTotal& c : *rows) {
    if (!caller.MaySee(c.tenant)) continue;
    std::string key = by == "tenant"    ? c.tenant.substr(0, c.tenant.find('/'))
                      : by == "project" ? c.tenant
                      : by == "cluster" ? c.cluster
                                        : c.model;
    totals[key] += c.amount;
    total += c.amount;
  }
  json items = json::array();
  auto round4 = [](double v) { return std::round(v * 10000) / 10000; };
  for (const auto& [key, amount] : totals)
    items.push_back({{by, key}, {"amount", round4(amount)}});
  return json{{"by", by},
              {"since_ms", since},
              {"until_ms", until},
              {"currency", spec_->currency},
              {"total", round4(total)},
              {"items", items}};
}

json Daemon::Tenants(const Caller& caller) const {
  auto lock = LockView();
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
