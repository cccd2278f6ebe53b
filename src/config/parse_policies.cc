// Parser for policy rules: `kind` selects which fields a rule may have.
#include "config/parse.h"

namespace tessera::config_internal {
namespace {

const std::vector<std::string_view> kClasses = {"training", "finetune", "batch", "eval",
                                                "inference"};

std::vector<WorkloadClass> ParseClasses(YamlMap& m, std::string_view key) {
  std::vector<WorkloadClass> out;
  std::vector<std::string> names = m.StrList(key);
  for (size_t i = 0; i < names.size(); ++i) {
    if (auto c = ParseWorkloadClass(names[i])) {
      out.push_back(*c);
    } else {
      FieldPath p = m.path().Field(key).Index(i);
      m.builder().ErrorAt(p.merged, "unknown workload class \"" + names[i] +
                                        "\"; expected one of training, finetune, batch, eval, "
                                        "inference");
    }
  }
  return out;
}

Match ParseMatch(YamlMap& rule) {
  Match out;
  auto n = rule.Node("match", Need::kOptional);
  if (!n) return out;
  YamlMap m(rule.builder(), rule.file(), *n, rule.path().Field("match"), "a match");
  if (!m.ok()) return out;
  out.classes = ParseClasses(m, "classes");
  out.tenants = m.StrList("tenants");
  out.min_priority = m.Str("minPriority");
  out.max_priority = m.Str("maxPriority");
  out.labels = m.Labels("labels");
  out.jobs = m.StrList("jobs");
  return out;
}

template <class Id, class Getter>
void RefList(YamlMap& m, std::string_view key, RefKind kind, size_t pi, Getter get) {
  size_t n = 0;
  ParseRefList(
      m, key, kind, [pi, get](Spec& s, size_t k, uint32_t id) { get(s, pi)[k] = Id(id); }, &n);
  get(m.builder().spec, pi).resize(n);
}

template <class T>
T& Body(Spec& s, size_t pi) {
  return std::get<T>(s.policies[pi].body);
}

void ParseConstrain(YamlMap& m, size_t pi) {
  Spec& s = m.builder().spec;
  s.policies[pi].body = ConstrainRule{};
  RefList<RegionId>(
      m, "allowRegions", RefKind::kRegion, pi,
      [](Spec & sp, size_t i) -> auto& { return Body<ConstrainRule>(sp, i).allow_regions; });
  RefList<RegionId>(
      m, "denyRegions", RefKind::kRegion, pi,
      [](Spec & sp, size_t i) -> auto& { return Body<ConstrainRule>(sp, i).deny_regions; });
  RefList<ClusterId>(
      m, "allowClusters", RefKind::kCluster, pi,
      [](Spec & sp, size_t i) -> auto& { return Body<ConstrainRule>(sp, i).allow_clusters; });
  RefList<ClusterId>(
      m, "denyClusters", RefKind::kCluster, pi,
      [](Spec & sp, size_t i) -> auto& { return Body<ConstrainRule>(sp, i).deny_clusters; });
  ConstrainRule& r = Body<ConstrainRule>(s, pi);
  r.cross_region = m.Bool("crossRegion");
  std::vector<std::string> tiers = m.StrList("tiers");
  for (size_t i = 0; i < tiers.size(); ++i) {
    if (auto t = ParseClusterTier(tiers[i])) {
      r.tier_order.push_back(*t);
    } else {
      m.builder().ErrorAt(
          m.path().Field("tiers").Index(i).merged,
          "unknown tier \"" + tiers[i] + "\"; expected dedicated, shared or elastic");
    }
  }
}

void ParseWeights(YamlMap& m, size_t pi) {
  WeightsRule r;
  r.placement = m.Enum("placement", BuiltinScorerNames()).value_or("");
  if (m.Node("fragmentation", Need::kOptional)) {
    m.ErrorAt("fragmentation",
              "fragmentation is not a weight: a fragmentation-aware scorer (placement: tessera or "
              "fgd) weighs it");
  }
  r.locality = m.MilliValue("locality").value_or(r.locality);
  r.cost = m.MilliValue("cost").value_or(r.cost);
  r.speed = m.MilliValue("speed").value_or(r.speed);
  r.spread = m.MilliValue("spread").value_or(r.spread);
  r.balance = m.MilliValue("balance").value_or(r.balance);
  m.builder().spec.policies[pi].body = r;
}

void ParsePreemption(YamlMap& m, size_t pi) {
  Spec& s = m.builder().spec;
  PreemptionRule r;
  r.allow = m.Bool("allow").value_or(true);
  r.victim_classes = ParseClasses(m, "victimClasses");
  r.victim_max_priority = m.Str("victimMaxPriority");
  r.victims_preemptible_only = m.Bool("victimsPreemptibleOnly").value_or(true);
  r.grace_period = m.Duration("gracePeriod").value_or(r.grace_period);
  s.policies[pi].body = r;
  RefList<ClusterId>(
      m, "clusters", RefKind::kCluster, pi,
      [](Spec & sp, size_t i) -> auto& { return Body<PreemptionRule>(sp, i).clusters; });
  RefList<RegionId>(
      m, "regions", RefKind::kRegion, pi,
      [](Spec & sp, size_t i) -> auto& { return Body<PreemptionRule>(sp, i).regions; });
}

void ParseBurst(YamlMap& m, size_t pi) {
  BurstRule r;
  r.after = m.Duration("after", Need::kRequired).value_or(0);
  r.budget_per_day = m.MilliValue("budgetPerDay", Need::kRequired).value_or(0);
  m.builder().spec.policies[pi].body = r;
  RefList<ClusterId>(
      m, "clusters", RefKind::kCluster, pi,
      [](Spec & sp, size_t i) -> auto& { return Body<BurstRule>(sp, i).clusters; });
}

void ParseReservation(YamlMap& m, size_t pi) {
  ReservationRule r;
  r.count = static_cast<int32_t>(m.Int("count", 1, 10000000, Need::kRequired).value_or(0));
  r.lend_preemptibly = m.Bool("lendPreemptibly").value_or(true);
  m.builder().spec.policies[pi].body = r;
  ParseRef(m, "model", RefKind::kDeviceModel, Need::kRequired,
           [pi](Spec& s, uint32_t id) { Body<ReservationRule>(s, pi).model = DeviceModelId(id); });
  RefList<ClusterId>(
      m, "clusters", RefKind::kCluster, pi,
      [](Spec & sp, size_t i) -> auto& { return Body<ReservationRule>(sp, i).clusters; });
  RefList<RegionId>(
      m, "regions", RefKind::kRegion, pi,
      [](Spec & sp, size_t i) -> auto& { return Body<ReservationRule>(sp, i).regions; });
}

void ParseFallback(YamlMap& m, size_t pi) {
  SpecBuilder& b = m.builder();
  b.spec.policies[pi].body = FallbackRule{};
  m.List("order", Need::kRequired, [&](const YAML::Node& n, const FieldPath& p, size_t k) {
    // The model is set when its name resolves; no speed given: the catalog's for the job's
    // class (FallbackRule::order).
    ModelChoice choice;
    choice.speed = 0;
    Body<FallbackRule>(b.spec, pi).order.push_back(choice);
    auto assign = [pi, k](Spec& s, uint32_t id) {
      Body<FallbackRule>(s, pi).order[k].model = DeviceModelId(id);
    };
    if (n.IsScalar()) {
      b.AddRef(RefKind::kDeviceModel, n.Scalar(), p, PosOf(m.file(), n), assign);
      return;
    }
    YamlMap cm(b, m.file(), n, p, "a model choice ({model, speed})");
    if (!cm.ok()) return;
    ParseRef(cm, "model", RefKind::kDeviceModel, Need::kRequired, assign);
    if (auto sp = cm.MilliValue("speed", Need::kOptional, 100000)) {
      if (*sp == 0) cm.ErrorAt("speed", "speed must be positive");
      Body<FallbackRule>(b.spec, pi).order[k].speed = *sp;
    }
  });
}

void ParseIdleReclaim(YamlMap& m, size_t pi) {
  IdleReclaimRule r;
  r.after = m.Duration("after", Need::kRequired).value_or(0);
  r.utilization_below =
      m.MilliValue("utilizationBelow", Need::kOptional, 1000).value_or(r.utilization_below);
  if (auto a = m.Enum("action", {"notify", "preempt", "shrink"})) {
    r.action = *ParseReclaimAction(*a);
  }
  m.builder().spec.policies[pi].body = r;
}

}  // namespace

void ParseScheduler(YamlMap& m) {
  SpecBuilder& b = m.builder();
  if (b.scheduler_declared) {
    m.Error("the scheduler section is declared in another file too; declare it once");
    m.SkipUnknownCheck();
    return;
  }
  b.scheduler_declared = true;
  SchedulerSettings& s = b.spec.scheduler;
  s.ordering = m.Enum("ordering", SchedulingPolicyNames()).value_or("");
  s.placement = m.Enum("placement", BuiltinScorerNames()).value_or("");
  s.restart_cost = m.Duration("restartCost").value_or(kDefaultRestartCost);
  s.reclaim_after = m.Duration("reclaimAfter").value_or(kDefaultReclaimAfter);
}

void ParsePolicyRule(YamlMap& m, size_t pi) {
  Spec& s = m.builder().spec;
  s.policies[pi].name = m.Str("name", Need::kRequired).value_or("");
  s.policies[pi].description = m.Str("description").value_or("");
  s.policies[pi].match = ParseMatch(m);
  auto kind = m.Enum(
      "kind",
      {"constrain", "weights", "preemption", "burst", "reservation", "fallback", "idleReclaim"},
      Need::kRequired);
  if (!kind) {
    // Without a kind the other fields cannot be checked; do not report them as unknown.
    m.SkipUnknownCheck();
    return;
  }
  switch (*ParseRuleKind(*kind)) {
    case RuleKind::kConstrain:
      ParseConstrain(m, pi);
      break;
    case RuleKind::kWeights:
      ParseWeights(m, pi);
      break;
    case RuleKind::kPreemption:
      ParsePreemption(m, pi);
      break;
    case RuleKind::kBurst:
      ParseBurst(m, pi);
      break;
    case RuleKind::kReservation:
      ParseReservation(m, pi);
      break;
    case RuleKind::kFallback:
      ParseFallback(m, pi);
      break;
    case RuleKind::kIdleReclaim:
      ParseIdleReclaim(m, pi);
      break;
  }
}

}  // namespace tessera::config_internal
