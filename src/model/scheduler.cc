#include "model/scheduler.h"

namespace tessera {

const std::vector<SchedulingPolicy>& SchedulingPolicies() {
  static const std::vector<SchedulingPolicy> kPolicies = {{"fifo", "fifo", false},
                                                          {"backfill", "fifo", true},
                                                          {"las", "las", true},
                                                          {"hetero", "hetero", true}};
  return kPolicies;
}

const SchedulingPolicy* FindSchedulingPolicy(std::string_view name) {
  for (const SchedulingPolicy& p : SchedulingPolicies())
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string_view> SchedulingPolicyNames() {
  std::vector<std::string_view> out;
  for (const SchedulingPolicy& p : SchedulingPolicies())
    out.push_back(p.name);
  return out;
}

const std::vector<std::string_view>& BuiltinScorerNames() {
  static const std::vector<std::string_view> kNames = {
      "random",      "first-fit",      "best-fit", "dot-product",
      "gpu-packing", "gpu-clustering", "fgd",      "tessera"};
  return kNames;
}

}  // namespace tessera
