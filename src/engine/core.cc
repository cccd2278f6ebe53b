#include "engine/core.h"

namespace tessera {

Status MakeEngineCore(EngineCore& core, std::shared_ptr<const Spec> spec,
                      const EngineChoice& choice, const ScorerRegistry& scorers,
                      const OrderingRegistry& orderings, Store& store, Backend& backend,
                      const Clock& clock, Rng& rng, TimeMs now) {
  core.spec = std::move(spec);
  const Spec& s = *core.spec;
  core.target = DeclaredTarget(s);
  auto scorer = scorers.Create(choice.placement, ScorerContext{&core.target});
  if (!scorer.ok()) return scorer.status();
  core.scorer = std::move(*scorer);
  auto ordering = orderings.Create(choice.ordering);
  if (!ordering.ok()) return ordering.status();
  core.ordering = std::move(*ordering);
  auto cell = CellState::FromSpec(s);
  if (!cell.ok()) return cell.status();
  core.engine = std::make_unique<Engine>(s, std::move(*cell), *core.scorer, *core.ordering, store,
                                         backend, clock, rng, choice.options);
  core.services = std::make_unique<ServiceDriver>(s, now, kNever, choice.scale_interval,
                                                  choice.replica_separator);
  return Status::Ok();
}

}  // namespace tessera
