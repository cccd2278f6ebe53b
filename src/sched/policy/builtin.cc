#include "sched/policy/builtin.h"

namespace tessera {

void RegisterBuiltinScorers(ScorerRegistry& r) {
  using Made = Result<std::unique_ptr<Scorer>>;
  r.Register("random", [](const ScorerContext&) -> Made { return policy::MakeRandom(); });
  r.Register("first-fit", [](const ScorerContext&) -> Made { return policy::MakeFirstFit(); });
  r.Register("best-fit", [](const ScorerContext&) -> Made { return policy::MakeBestFit(); });
  r.Register("dot-product", [](const ScorerContext&) -> Made { return policy::MakeDotProduct(); });
  r.Register("gpu-packing", [](const ScorerContext&) -> Made { return policy::MakeGpuPacking(); });
  r.Register("gpu-clustering",
             [](const ScorerContext&) -> Made { return policy::MakeGpuClustering(); });
  r.Register("fgd", [](const ScorerContext& ctx) -> Made {
    if (ctx.workload == nullptr || ctx.workload->empty()) {
      return InvalidArgument("the fgd policy needs a target workload (typical task shapes)");
    }
    return policy::MakeFgd(*ctx.workload);
  });
  r.Register("tessera",
             [](const ScorerContext& ctx) -> Made { return policy::MakeTessera(ctx.workload); });
}

namespace policy {

size_t FreeShares(const CellState& cell, uint32_t node, uint16_t* out) {
  auto devs = cell.devices(node);
  size_t n = std::min<size_t>(devs.size(), 64);
  for (size_t k = 0; k < n; ++k)
    out[k] = devs[k].free;
  return n;
}

}  // namespace policy
}  // namespace tessera
