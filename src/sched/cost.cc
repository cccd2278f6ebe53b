#include "sched/cost.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera {
namespace {

constexpr Millis kDay = 24 * 3600 * 1000;

int64_t DayOf(TimeMs t) {
  return t >= 0 ? t / kDay : (t - kDay + 1) / kDay;
}

std::string Money(Micro v, const std::string& currency) {
  return fmt::format("{:.0f} {}", MicroUnits(v), currency);
}

}  // namespace

TimeMs NextMidnight(TimeMs now) {
  return (DayOf(now) + 1) * kDay;
}

CostLedger::CostLedger(const Spec& spec, const CellState& cell) : spec_(spec), cell_(cell) {
  price_.assign(spec.clusters.size(), std::vector<Milli>(spec.device_models.size(), 0));
  cpu_price_.assign(spec.clusters.size(), 0);
  for (size_t c = 0; c < spec.clusters.size(); ++c) {
    for (const auto& [model, price] : spec.clusters[c].price_per_device_hour)
      if (model.value() < price_[c].size()) price_[c][model.value()] = price;
    if (spec.clusters[c].price_per_cpu_core_hour)
      cpu_price_[c] = *spec.clusters[c].price_per_cpu_core_hour;
    priced_ = priced_ || !spec.clusters[c].price_per_device_hour.empty() ||
              spec.clusters[c].price_per_cpu_core_hour.has_value();
  }
  tenant_slot_.assign(spec.tenants.size(), std::nullopt);
  for (size_t t = 0; t < spec.tenants.size(); ++t) {
    if (!spec.tenants[t].budget_per_day) continue;
    tenant_slot_[t] = slots_.size();
    const Micro per_day = *spec.tenants[t].budget_per_day * (kMicroPerUnit / kMilliPerUnit);
    slots_.push_back({spec.tenants[t].path, per_day, {}});
    budgets_[spec.tenants[t].path].per_day = per_day;
  }
}

RunRate CostLedger::Rate(const std::vector<Placement>& placements) const {
  RunRate rate;
  if (!priced_) return rate;  // an unpriced fleet: every run is free
  for (const Placement& p : placements) {
    const uint32_t cluster = cell_.node(p.node).cluster;
    rate.elastic = rate.elastic || spec_.clusters[cluster].tier == ClusterTier::kElastic;
    // Milli-units per hour times milli-devices (or milli-cores): micro-units per hour.
    auto add = [&](int32_t model, Micro per_hour) {
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
      add(-1, p.cpu * cpu_price_[cluster]);
      continue;
    }
    auto devices = cell_.devices(p.node);
    for (const DeviceUse& u : p.devices) {
      const uint16_t model = devices[u.index].model;
      add(model, u.milli * price_[cluster][model]);
    }
  }
  return rate;
}

void CostLedger::Register(const BudgetKey& key) {
  if (key.burst_rule < 0) return;
  auto [it, added] = burst_slot_.try_emplace({key.burst_rule, key.tenant.value()}, slots_.size());
  if (!added) return;
  const PolicyRule& rule = spec_.policies[static_cast<size_t>(key.burst_rule)];
  const Micro per_day =
      std::get<BurstRule>(rule.body).budget_per_day * (kMicroPerUnit / kMilliPerUnit);
  std::string name = "burst:" + rule.name + ":" + spec_.tenant(key.tenant).path;
  slots_.push_back({name, per_day, {}});
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

CostLedger::Projection CostLedger::Project(const Run& run) const {
  Projection p;
  const TimeMs from = std::max(run.start, day_ * kDay);
  const TimeMs end = run.end == kNever ? (day_ + 1) * kDay : run.end;
  p.first_day = DayOf(from);
  for (TimeMs t = from; t < end;) {
    const TimeMs to = std::min(end, (DayOf(t) + 1) * kDay);
    p.by_day.push_back(CostOver(run.rate.per_hour, to - t));
    t = to;
  }
  return p;
}

void CostLedger::Commit(const Run& run, int sign) {
  for (size_t s : Slots(run.key, run.rate.elastic)) {
    for (size_t k = 0; k < run.projected.by_day.size(); ++k)
      slots_[s].committed[run.projected.first_day + static_cast<int64_t>(k)] +=
          sign * run.projected.by_day[k];
  }
}

void CostLedger::Roll(TimeMs now) {
  // A run past its estimated end is still running: it is committed until midnight now.
  while (!ends_.empty() && ends_.begin()->first <= now) {
    Run& run = runs_.at(ends_.begin()->second);
    ends_.erase(ends_.begin());
    Commit(run, -1);
    run.end = kNever;
    run.projected = Project(run);
    Commit(run, +1);
  }
  const int64_t day = DayOf(now);
  if (day == day_) return;
  // A new day: the runs without an estimate are committed until the next midnight.
  day_ = day;
  for (Slot& s : slots_)
    s.committed.clear();
  for (auto& [id, run] : runs_) {
    run.projected = Project(run);
    Commit(run, +1);
  }
}

BudgetVerdict CostLedger::Check(const BudgetKey& key, const RunRate& rate, TimeMs now,
                                TimeMs end) const {
  Run run{key, rate, now, end, {}};
  const Projection adds = Project(run);
  for (size_t s : Slots(key, rate.elastic)) {
    const Slot& slot = slots_[s];
    for (size_t k = 0; k < adds.by_day.size(); ++k) {
      const int64_t day = adds.first_day + static_cast<int64_t>(k);
      const Micro committed = slot.On(day);
      if (committed + adds.by_day[k] <= slot.per_day) continue;
      const std::string when = day == day_       ? "today"
                               : day == day_ + 1 ? "for tomorrow"
                                                 : fmt::format("for {} days from now", day - day_);
      return {false,
              fmt::format("{}: budget {}/day; {} committed {}, this run adds {}", slot.name,
                          Money(slot.per_day, spec_.currency), Money(committed, spec_.currency),
                          when, Money(adds.by_day[k], spec_.currency))};
    }
  }
  return {};
}

bool CostLedger::BurstSpent(const BudgetKey& key) const {
  auto it = burst_slot_.find({key.burst_rule, key.tenant.value()});
  if (it == burst_slot_.end()) return false;
  const Slot& slot = slots_[it->second];
  return slot.On(day_) >= slot.per_day;
}

void CostLedger::Begin(uint64_t id, const BudgetKey& key, const RunRate& rate, TimeMs now,
                       TimeMs end) {
  if (rate.per_hour <= 0) return;  // free: nothing to account or commit
  Roll(now);
  Register(key);
  Run& run = runs_[id];
  run = {key, rate, now, end, {}};
  run.projected = Project(run);
  Commit(run, +1);
  if (end != kNever) ends_.insert({end, id});
}

void CostLedger::End(uint64_t id, TimeMs now) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  Roll(now);
  Run run = std::move(it->second);
  runs_.erase(it);
  ends_.erase({run.end, id});
  // The projection gives way to what the run really spent today.
  const TimeMs today = day_ * kDay;
  const Micro spent_today =
      CostOver(run.rate.per_hour, std::max<Millis>(0, now - std::max(run.start, today)));
  Commit(run, -1);
  const std::vector<size_t> slots = Slots(run.key, run.rate.elastic);
  for (size_t s : slots)
    slots_[s].committed[day_] += spent_today;

  const Millis ran = std::max<Millis>(0, now - run.start);
  const Micro cost = CostOver(run.rate.per_hour, ran);
  total_ += cost;
  for (std::optional<TenantId> t = run.key.tenant; t; t = spec_.tenant(*t).parent)
    by_tenant_[spec_.tenant(*t).path] += cost;
  for (const RunRate::Part& part : run.rate.parts) {
    const Micro spent = CostOver(part.per_hour, ran);
    by_cluster_[spec_.clusters[part.cluster].name] += spent;
    by_model_[part.model < 0 ? "cpu" : spec_.device_models[static_cast<size_t>(part.model)].name] +=
        spent;
  }
  // Spend by calendar day, for every budget the run is charged to.
  for (TimeMs from = run.start; from < now;) {
    const int64_t day = DayOf(from);
    const TimeMs to = std::min(now, (day + 1) * kDay);
    const Micro spent = CostOver(run.rate.per_hour, to - from);
    for (size_t s : slots) {
      BudgetUse& use = budgets_[slots_[s].name];
      use.by_day[day] += spent;
      use.max_day = std::max(use.max_day, use.by_day[day]);
    }
    from = to;
  }
}

}  // namespace tessera
