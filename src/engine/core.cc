#include "engine/core.h"

namespace tessera {

Result<EngineChoice> ChoiceFor(const SchedulerSettings& settings, EngineChoice base) {
  const std::string_view name = settings.policy_or_default();
  const SchedulingPolicy* policy = FindSchedulingPolicy(name);
  if (policy == nullptr) {
    return InvalidArgument("unknown scheduling policy \"" + std::string(name) +
                           "\" (known: fifo, backfill, las, hetero)");
  }
  base.policy = std::string(policy->name);
  base.ordering = std::string(policy->ordering);
  base.options.backfill = policy->backfill;
  base.placement = std::string(settings.placement_or_default());
  return base;
}

Result<RuleScorerSet> MakeRuleScorers(const Spec& spec, const ScorerRegistry& scorers,
                                      const ScorerContext& ctx, std::string_view main_name,
                                      Scorer& main) {
  RuleScorerSet out;
  for (const PolicyRule& rule : spec.policies) {
    const WeightsRule* w = std::get_if<WeightsRule>(&rule.body);
    if (w == nullptr || w->placement.empty() || out.map.count(w->placement)) continue;
    if (w->placement == main_name) {
      out.map[w->placement] = &main;
      continue;
    }
    auto scorer = scorers.Create(w->placement, ctx);
    if (!scorer.ok()) return scorer.status();
    out.owned.push_back(std::move(*scorer));
    out.map[w->placement] = out.owned.back().get();
  }
  return out;
}

Status MakeEngineCore(EngineCore& core, std::shared_ptr<const Spec> spec,
                      const EngineChoice& choice, const ScorerRegistry& scorers,
                      const OrderingRegistry& orderings, Store& store, Backend& backend,
                      const Clock& clock, Rng& rng, TimeMs now) {
  core.spec = std::move(spec);
  core.choice = choice;
  const Spec& s = *core.spec;
  core.target = DeclaredTarget(s);
  auto scorer = scorers.Create(choice.placement, ScorerContext{&core.target});
  if (!scorer.ok()) return scorer.status();
  core.scorer = std::move(*scorer);
  auto rule_scorers =
      MakeRuleScorers(s, scorers, ScorerContext{&core.target}, choice.placement, *core.scorer);
  if (!rule_scorers.ok()) return rule_scorers.status();
  core.rule_scorers = std::move(*rule_scorers);
  auto ordering = orderings.Create(choice.ordering);
  if (!ordering.ok()) return ordering.status();
  core.ordering = std::move(*ordering);
  auto cell = CellState::FromSpec(s);
  if (!cell.ok()) return cell.status();
  core.engine =
      std::make_unique<Engine>(s, std::move(*cell), *core.scorer, *core.ordering, store, backend,
                               clock, rng, choice.options, core.rule_scorers.map);
  core.services = std::make_unique<ServiceDriver>(s, now, kNever, choice.scale_interval,
                                                  choice.replica_separator);
  return Status::Ok();
}

}  // namespace tessera
