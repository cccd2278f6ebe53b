// Policies: an ordered list of declarative rules. Each rule matches jobs (by class, tenant,
// priority, labels) and carries one kind of instruction. Where several rules of one kind
// match a job, the first in order wins, except for constraints, which all apply.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/ids.h"
#include "common/quantity.h"
#include "model/catalog.h"
#include "model/fleet.h"
#include "model/job.h"

namespace tessera {

// Which jobs a rule applies to. Every field that is set must match; an empty Match matches all.
struct Match {
  std::vector<WorkloadClass> classes;
  std::vector<std::string> tenants;         // tenant paths; a path matches itself and its subtree
  std::optional<std::string> min_priority;  // PriorityClass names
  std::optional<std::string> max_priority;
  std::map<std::string, std::string> labels;
  std::vector<std::string> jobs;  // job or service names
};

// Hard constraints and tier order.
struct ConstrainRule {
  std::vector<RegionId> allow_regions;  // empty = all
  std::vector<RegionId> deny_regions;
  std::vector<ClusterId> allow_clusters;  // empty = all
  std::vector<ClusterId> deny_clusters;
  std::optional<bool> cross_region;     // may one job's tasks span regions
  std::vector<ClusterTier> tier_order;  // e.g. dedicated, shared (elastic excluded)
};

// Weights of the cluster choice (milli), and the node-level scorer of the jobs the rule
// matches (`placement`).
struct WeightsRule {
  std::string placement;  // a built-in scorer's name; "" = the scheduler's
  Milli locality = 1000;
  Milli cost = 1000;
  Milli speed = 1000;
  Milli spread = 1000;
  Milli balance = 1000;
};

// Who may preempt whom (the rule's match selects the preemptors).
struct PreemptionRule {
  bool allow = true;                          // false: matching jobs may never preempt
  std::vector<WorkloadClass> victim_classes;  // empty = any
  std::optional<std::string> victim_max_priority;
  bool victims_preemptible_only = true;
  std::vector<ClusterId> clusters;  // pools where it applies; empty = everywhere
  std::vector<RegionId> regions;
  Millis grace_period = 30000;
};

// Elastic (cloud) burst for jobs that waited too long.
struct BurstRule {
  Millis after = 0;                 // queueing time before bursting is allowed
  Milli budget_per_day = 0;         // per tenant, milli currency units
  std::vector<ClusterId> clusters;  // elastic clusters it may use; empty = all elastic
};

// Devices held for a class of work; others may use them only preemptibly.
struct ReservationRule {
  DeviceModelId model;
  int32_t count = 0;
  std::vector<ClusterId> clusters;  // where to hold them; empty = anywhere
  std::vector<RegionId> regions;
  bool lend_preemptibly = true;  // lower classes may borrow them, preemptibly
};

// Device-model fallback order with speed factors ("H800, else A800, else 910B at 0.6").
struct FallbackRule {
  std::vector<ModelChoice> order;  // a speed of 0: none given, the catalog's for the job's class
};

enum class ReclaimAction { kNotify, kPreempt, kShrink };
std::string_view ReclaimActionName(ReclaimAction a);
std::optional<ReclaimAction> ParseReclaimAction(std::string_view s);

// Devices allocated but idle for longer than `after` are reclaimed.
struct IdleReclaimRule {
  Millis after = 0;
  Milli utilization_below = 50;  // milli-fraction: 50 = 5% utilisation
  ReclaimAction action = ReclaimAction::kNotify;
};

enum class RuleKind {
  kConstrain,
  kWeights,
  kPreemption,
  kBurst,
  kReservation,
  kFallback,
  kIdleReclaim
};
inline constexpr int kRuleKindCount = 7;
std::string_view RuleKindName(RuleKind k);
std::optional<RuleKind> ParseRuleKind(std::string_view s);

using RuleBody = std::variant<ConstrainRule, WeightsRule, PreemptionRule, BurstRule,
                              ReservationRule, FallbackRule, IdleReclaimRule>;

struct PolicyRule {
  std::string name;
  std::string description;
  Match match;
  RuleBody body;

  RuleKind kind() const { return static_cast<RuleKind>(body.index()); }
};

}  // namespace tessera
