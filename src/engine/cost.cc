#include "engine/cost.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera {
namespace {

constexpr Millis kDay = 24 * 3600 * 1000;
constexpr double kHour = 3600.0 * 1000.0;

int64_t DayOf(TimeMs t) {
  return t >= 0 ? t / kDay : (t - kDay + 1) / kDay;
}

std::string Money(double v, const std::string& currency) {
  return fmt::format("{:.0f} {}", v, currency);
}

}  // namespace

TimeMs NextMidnight(TimeMs now) {
  return (DayOf(now) + 1) * kDay;
}

CostLedger::CostLedger(const Spec& spec, const CellState& cell) : spec_(spec), cell_(cell) {
  price_.assign(spec.clusters.size(), std::vector<double>(spec.device_models.size(), 0.0));
  cpu_price_.assign(spec.clusters.size(), 0.0);
  for (size_t c = 0; c < spec.clusters.size(); ++c) {
    for (const auto& [model, price] : spec.clusters[c].price_per_device_hour)
      if (model.value() < price_[c].size())
        price_[c][model.value()] = static_cast<double>(price) / kMilliPerUnit;
    if (spec.clusters[c].price_per_cpu_core_hour)
      cpu_price_[c] =
          static_cast<double>(*spec.clusters[c].price_per_cpu_core_hour) / kMilliPerUnit;
    priced_ = priced_ || !spec.clusters[c].price_per_device_hour.empty() ||
              spec.clusters[c].price_per_cpu_core_hour.has_value();
  }
  tenant_slot_.assign(spec.tenants.size(), std::nullopt);
  for (size_t t = 0; t < spec.tenants.size(); ++t) {
    if (!spec.tenants[t].budget_per_day) continue;
    tenant_slot_[t] = slots_.size();
    double per_day = static_cast<double>(*spec.tenants[t].budget_per_day) / kMilliPerUnit;
    slots_.push_back({spec.tenants[t].path, per_day, 0});
    budgets_[spec.tenants[t].path].per_day = per_day;
  }
}

RunRate CostLedger::Rate(const std::vector<Placement>& placements) const {
  RunRate rate;
  if (!priced_) return rate;  // an unpriced fleet: every run is free
  for (const Placement& p : placements) {
    const uint32_t cluster = cell_.node(p.node).cluster;
    rate.elastic = rate.elastic || spec_.clusters[cluster].tier == ClusterTier::kElastic;
    auto add = [&](int32_t model, double per_hour) {
      if (per_hour <= 0) return;
      rate.per_hour += per_hour;
      for (RunRate::Part& part : rate.parts) {
        if (part.cluster == cluster && part.model == model) {
          part.per_hour += per_hour;
          return;
        }
      }
      rate.parts.push_back({cluster, model, per_hour});
    };
    if (p.devices.empty()) {
      add(-1, static_cast<double>(p.cpu) / kMilliPerUnit * cpu_price_[cluster]);
      continue;
    }
    auto devices = cell_.devices(p.node);
    for (const DeviceUse& u : p.devices) {
      const uint16_t model = devices[u.index].model;
      add(model, static_cast<double>(u.milli) / kMilliPerUnit * price_[cluster][model]);
    }
  }
  return rate;
}

void CostLedger::Register(const BudgetKey& key) {
  if (key.burst_rule < 0) return;
  auto [it, added] = burst_slot_.try_emplace({key.burst_rule, key.tenant.value()}, slots_.size());
  if (!added) return;
  const PolicyRule& rule = spec_.policies[static_cast<size_t>(key.burst_rule)];
  double per_day =
      static_cast<double>(std::get<BurstRule>(rule.body).budget_per_day) / kMilliPerUnit;
  std::string name = "burst:" + rule.name + ":" + spec_.tenant(key.tenant).path;
  slots_.push_back({name, per_day, 0});
  budgets_[name].per_day = per_day;
}

std::vector<size_t> CostLedger::Slots(const BudgetKey& key, bool elastic) const {
  std::vector<size_t> out;
  for (std::optional<TenantId> t = key.tenant; t; t = spec_.tenant(*t).parent)
    if (tenant_slot_[t->value()]) out.push_back(*tenant_slot_[t->value()]);
  if (elastic && key.burst_rule >= 0) {
    auto it = burst_slot_.find({key.burst_rule, key.tenant.value()});
    if (it != burst_slot_.end()) out.push_back(it->second);
  }
  return out;
}

double CostLedger::Projection(const Run& run) const {
  const TimeMs from = std::max(run.start, day_ * kDay);
  const TimeMs to = std::min(run.end, (day_ + 1) * kDay);
  return to > from ? run.rate.per_hour * static_cast<double>(to - from) / kHour : 0.0;
}

void CostLedger::Roll(TimeMs now) {
  // A run past its estimated end is still running: it is committed until midnight now.
  while (!ends_.empty() && ends_.begin()->first <= now) {
    Run& run = runs_.at(ends_.begin()->second);
    ends_.erase(ends_.begin());
    const double before = run.projected;
    run.end = kNever;
    run.projected = Projection(run);
    for (size_t s : Slots(run.key, run.rate.elastic))
      slots_[s].committed += run.projected - before;
  }
  const int64_t day = DayOf(now);
  if (day == day_) return;
  day_ = day;
  for (Slot& s : slots_)
    s.committed = 0;
  for (auto& [id, run] : runs_) {
    run.projected = Projection(run);
    for (size_t s : Slots(run.key, run.rate.elastic))
      slots_[s].committed += run.projected;
  }
}

BudgetVerdict CostLedger::Check(const BudgetKey& key, const RunRate& rate, TimeMs now,
                                TimeMs end) const {
  Run run{key, rate, now, end, 0};
  const double adds = Projection(run);
  for (size_t s : Slots(key, rate.elastic)) {
    const Slot& slot = slots_[s];
    if (slot.committed + adds <= slot.per_day + 1e-9) continue;
    return {false, fmt::format("{}: budget {}/day; {} committed today, this run adds {}", slot.name,
                               Money(slot.per_day, spec_.currency),
                               Money(slot.committed, spec_.currency), Money(adds, spec_.currency))};
  }
  return {};
}

bool CostLedger::BurstSpent(const BudgetKey& key) const {
  auto it = burst_slot_.find({key.burst_rule, key.tenant.value()});
  if (it == burst_slot_.end()) return false;
  const Slot& slot = slots_[it->second];
  return slot.committed >= slot.per_day;
}

void CostLedger::Begin(uint64_t id, const BudgetKey& key, const RunRate& rate, TimeMs now,
                       TimeMs end) {
  if (rate.per_hour <= 0) return;  // free: nothing to account or commit
  Roll(now);
  Register(key);
  Run& run = runs_[id];
  run = {key, rate, now, end, 0};
  run.projected = Projection(run);
  for (size_t s : Slots(key, rate.elastic))
    slots_[s].committed += run.projected;
  if (end != kNever) ends_.insert({end, id});
}

void CostLedger::End(uint64_t id, TimeMs now) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  Roll(now);
  Run run = std::move(it->second);
  runs_.erase(it);
  ends_.erase({run.end, id});
  // Today's commitment: the projection gives way to what the run really spent today.
  const TimeMs today = day_ * kDay;
  const double spent_today =
      run.rate.per_hour * static_cast<double>(now - std::max(run.start, today)) / kHour;
  const std::vector<size_t> slots = Slots(run.key, run.rate.elastic);
  for (size_t s : slots)
    slots_[s].committed += std::max(0.0, spent_today) - run.projected;

  const double hours = static_cast<double>(std::max<Millis>(0, now - run.start)) / kHour;
  const double cost = run.rate.per_hour * hours;
  total_ += cost;
  for (std::optional<TenantId> t = run.key.tenant; t; t = spec_.tenant(*t).parent)
    by_tenant_[spec_.tenant(*t).path] += cost;
  for (const RunRate::Part& part : run.rate.parts) {
    by_cluster_[spec_.clusters[part.cluster].name] += part.per_hour * hours;
    by_model_[part.model < 0 ? "cpu" : spec_.device_models[static_cast<size_t>(part.model)].name] +=
        part.per_hour * hours;
  }
  // Spend by calendar day, for every budget the run is charged to.
  for (TimeMs from = run.start; from < now;) {
    const int64_t day = DayOf(from);
    const TimeMs to = std::min(now, (day + 1) * kDay);
    const double spent = run.rate.per_hour * static_cast<double>(to - from) / kHour;
    for (size_t s : slots) {
      BudgetUse& use = budgets_[slots_[s].name];
      use.by_day[day] += spent;
      use.max_day = std::max(use.max_day, use.by_day[day]);
    }
    from = to;
  }
}

}  // namespace tessera
