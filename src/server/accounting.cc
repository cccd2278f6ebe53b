// The daemon's accounting (accounting.h).
#include "server/accounting.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tessera {

void Accounting::Open(int64_t job, const std::string& tenant, TimeMs start, const RunRate& rate,
                      const Spec& spec) {
  Close(job, start);  // a run that restarts without stopping (a migration)
  for (const RunRate::Part& part : rate.parts) {
    CostRow row;
    row.id = ++last_row_;
    row.job = job;
    row.tenant = tenant;
    row.cluster = spec.clusters[part.cluster].name;
    row.model = part.model < 0 ? "cpu" : spec.model(DeviceModelId(part.model)).name;
    row.start = start;
    row.per_hour = part.per_hour;
    open_[job].push_back(row.id);
    store_.InsertCost(std::move(row));
  }
}

void Accounting::Reopen(int64_t job, const RunRate& rate, std::vector<ResumedRuns::Cost>& into) {
  for (const RunRate::Part& part : rate.parts) {
    into.push_back({++last_row_, part.cluster, part.model, part.per_hour});
    open_[job].push_back(last_row_);
  }
}

void Accounting::Close(int64_t job, TimeMs end) {
  auto it = open_.find(job);
  if (it == open_.end()) return;
  for (int64_t row : it->second)
    store_.EndCost(row, end);
  open_.erase(it);
}

std::vector<int64_t> Accounting::open(int64_t job) const {
  auto it = open_.find(job);
  return it == open_.end() ? std::vector<int64_t>() : it->second;
}

Result<SpendingReport> Accounting::Spending(DurableStore& store, const Caller& caller,
                                            const std::string& by, TimeMs since, TimeMs until,
                                            TimeMs now, const std::string& currency) {
  static const std::vector<std::string> kBy = {"tenant", "project", "cluster", "model"};
  if (std::find(kBy.begin(), kBy.end(), by) == kBy.end()) {
    return InvalidArgument("\"by\" must be tenant, project, cluster or model, not \"" + by + "\"");
  }
  if (since >= until) return InvalidArgument("the period is empty: since must be before until");
  // Open rows are committed as the writer gets to them; read after everything queued.
  if (Status s = store.Flush().get(); !s.ok()) return s;
  auto rows = store.QueryCosts(since, until, now);
  if (!rows.ok()) return rows.status();
  std::map<std::string, Micro> totals;
  SpendingReport report{by, since, until, currency, 0, {}};
  for (const CostTotal& c : *rows) {
    if (!caller.MaySee(c.tenant)) continue;
    std::string key = by == "tenant"    ? c.tenant.substr(0, c.tenant.find('/'))
                      : by == "project" ? c.tenant
                      : by == "cluster" ? c.cluster
                                        : c.model;
    totals[key] += c.amount;
    report.total += c.amount;
  }
  report.items.assign(totals.begin(), totals.end());
  return report;
}

}  // namespace tessera
