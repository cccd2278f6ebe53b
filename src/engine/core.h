// One scheduler built from a configuration, the same way wherever it runs: the daemon builds
// its engine with it (and again on a reload), and `tessera place` builds the one it asks, so
// that both give the same answer for the same state. The scorer and the ordering come by name
// from registries the composition root fills.
#pragma once

#include <memory>
#include <string>

#include "engine/engine.h"
#include "engine/ordering.h"
#include "engine/ports.h"
#include "engine/services.h"
#include "sched/fragmentation.h"
#include "sched/scorer.h"

namespace tessera {

struct EngineChoice {
  std::string policy = std::string(kDefaultPolicy);  // a SchedulingPolicy's name
  std::string placement = std::string(kDefaultScorer);
  std::string ordering = "fifo";  // the policy's ordering (options.backfill: its backfill)
  EngineOptions options;
  Millis scale_interval = 5 * 60 * 1000;  // the services' autoscaling step
  std::string replica_separator = "-r";   // replicas are named SERVICE-rN
};

// The scorers of the weights rules: those made for them, and the engine's map of every name.
struct RuleScorerSet {
  std::vector<std::unique_ptr<Scorer>> owned;
  RuleScorers map;
};

struct EngineCore {
  std::shared_ptr<const Spec> spec;
  EngineChoice choice;    // what it was built with
  TargetWorkload target;  // FGD's target: the configuration's declared jobs
  std::unique_ptr<Scorer> scorer;
  RuleScorerSet rule_scorers;  // the weights rules' beside the scheduler's
  std::unique_ptr<OrderingPolicy> ordering;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<ServiceDriver> services;  // the services' replicas on this engine, from `now`
};

// `base` with the policy and scorer `settings` name (the defaults where it names none).
// Errors: an unknown policy.
Result<EngineChoice> ChoiceFor(const SchedulerSettings& settings, EngineChoice base = {});

// The scorers `spec`'s weights rules name (`placement`), made by `scorers` in `ctx`; a name
// equal to `main_name` is `main` itself. Errors: an unknown scorer.
Result<RuleScorerSet> MakeRuleScorers(const Spec& spec, const ScorerRegistry& scorers,
                                      const ScorerContext& ctx, std::string_view main_name,
                                      Scorer& main);

// Errors: an unknown scorer or ordering, a fleet the cell cannot be built from.
Status MakeEngineCore(EngineCore& core, std::shared_ptr<const Spec> spec,
                      const EngineChoice& choice, const ScorerRegistry& scorers,
                      const OrderingRegistry& orderings, Store& store, Backend& backend,
                      const Clock& clock, Rng& rng, TimeMs now);

}  // namespace tessera
