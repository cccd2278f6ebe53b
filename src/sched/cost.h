// Cost accounting and daily budgets (docs/governance.md), in fixed point: rates and what is
// spent in micro-units of the currency (common/quantity.h), so that sums and budget checks
// are exact and the same on every machine.
//
// A run costs, per hour, the sum over its devices of share x the cluster's price per
// device-hour of the model (CPU-only tasks: cores x the cluster's price per core-hour; CPU on
// device nodes is in the device price). The ledger accrues every run's cost when it stops, by
// tenant (and every ancestor), project path, cluster and device model, and by calendar day
// (UTC days of the engine clock) for the tenants and burst rules that have a budget.
//
// Budgets are enforced at admission, not by stopping work. A budget's day is committed by
// what its runs already spent that day plus what its running runs will spend in it, up to
// their estimated end (a run without an estimate, or past it, until the coming midnight). A
// new run is admitted only if its own cost fits what is left on every day until its estimated
// end (today only, without an estimate), for the tenant and every ancestor with a budget,
// and, on an elastic cluster, for its burst rule's budget (kept per rule and tenant). So a run
// admitted at 23:00 for five hours cannot crowd out tomorrow's budget. Only runs that outlive
// their estimate, or have none and run past midnight, can spend beyond a budget: nothing
// running is stopped for money.
//
// Thread-safety: none; owned by the engine.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "model/spec.h"
#include "sched/cell_state.h"

namespace tessera {

// The first midnight (of the engine clock's UTC days) after `now`.
TimeMs NextMidnight(TimeMs now);

// What one run costs per hour (micro-units of the currency), and where.
struct RunRate {
  Micro per_hour = 0;
  struct Part {
    uint32_t cluster = 0;
    int32_t model = -1;  // -1: CPU
    Micro per_hour = 0;
  };
  std::vector<Part> parts;
  bool elastic = false;  // it runs on an elastic cluster
};

// Budgets a run is charged against: its tenant's path, and its burst rule on elastic clusters.
struct BudgetKey {
  TenantId tenant;
  int32_t burst_rule = -1;  // index in spec.policies; -1 = none
};

struct BudgetVerdict {
  bool ok = true;
  std::string why;  // when refused
};

class CostLedger {
 public:
  CostLedger(const Spec& spec, const CellState& cell);

  RunRate Rate(const std::vector<Placement>& placements) const;

  // Makes the budget slot of `key`'s burst rule, if it has one (before Check or BurstSpent).
  void Register(const BudgetKey& key);
  // Starts a new day's commitments when `now` is past midnight, and commits runs that outlived
  // their estimate until midnight: they keep spending (before Check or BurstSpent).
  void Roll(TimeMs now);
  // Whether a run of `rate` starting at `now` and ending (by its estimate) at `end` fits the
  // budgets of `key`. `end` may be kNever.
  BudgetVerdict Check(const BudgetKey& key, const RunRate& rate, TimeMs now, TimeMs end) const;
  // Whether the burst rule's budget for the tenant is spent for today (nothing more fits).
  bool BurstSpent(const BudgetKey& key) const;

  // A run starts (`id` names it until End) and stops.
  void Begin(uint64_t id, const BudgetKey& key, const RunRate& rate, TimeMs now, TimeMs end);
  void End(uint64_t id, TimeMs now);

  // Totals of ended runs (micro-units, each run's cost rounded to one).
  Micro total() const { return total_; }
  const std::map<std::string, Micro>& by_tenant() const { return by_tenant_; }  // every level
  const std::map<std::string, Micro>& by_cluster() const { return by_cluster_; }
  const std::map<std::string, Micro>& by_model() const { return by_model_; }
  // Per budget (tenant path, or "burst:<rule>:<tenant path>"): its daily budget and the most
  // it spent on one day.
  struct BudgetUse {
    Micro per_day = 0;
    Micro max_day = 0;
    std::map<int64_t, Micro> by_day;
  };
  const std::map<std::string, BudgetUse>& budgets() const { return budgets_; }

 private:
  // What a run will spend on each day from `first_day` on (counted in those days' commitments).
  struct Projection {
    int64_t first_day = 0;
    std::vector<Micro> by_day;
  };
  struct Run {
    BudgetKey key;
    RunRate rate;
    TimeMs start = 0, end = 0;
    Projection projected;
  };
  // Budget slots: a tenant with a budget, or a (burst rule, tenant) pair.
  struct Slot {
    std::string name;
    Micro per_day = 0;
    std::map<int64_t, Micro> committed;  // by day, today on
    Micro On(int64_t day) const {
      auto it = committed.find(day);
      return it == committed.end() ? 0 : it->second;
    }
  };
  // The slots a run of `key` is charged to (elastic: with its burst slot, once registered).
  std::vector<size_t> Slots(const BudgetKey& key, bool elastic) const;
  // Its cost on each day from today until its end (until midnight when it has none).
  Projection Project(const Run& run) const;
  void Commit(const Run& run, int sign);

  const Spec& spec_;
  const CellState& cell_;
  std::vector<std::vector<Milli>> price_;  // [cluster][model], milli-units per device-hour
  std::vector<Milli> cpu_price_;           // [cluster], per core-hour
  bool priced_ = false;                    // any cluster declares a price
  int64_t day_ = 0;
  std::map<uint64_t, Run> runs_;
  std::set<std::pair<TimeMs, uint64_t>> ends_;  // (estimated end, run) of runs with an estimate
  std::vector<Slot> slots_;
  std::vector<std::optional<size_t>> tenant_slot_;             // by tenant
  std::map<std::pair<int32_t, uint32_t>, size_t> burst_slot_;  // (rule, tenant)
  Micro total_ = 0;
  std::map<std::string, Micro> by_tenant_, by_cluster_, by_model_;
  std::map<std::string, BudgetUse> budgets_;
};

}  // namespace tessera
