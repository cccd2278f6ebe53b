#include "model/policy.h"

namespace tessera {

std::string_view ReclaimActionName(ReclaimAction a) {
  switch (a) {
    case ReclaimAction::kNotify:
      return "notify";
    case ReclaimAction::kPreempt:
      return "preempt";
    case ReclaimAction::kShrink:
      return "shrink";
  }
  return "?";
}

std::optional<ReclaimAction> ParseReclaimAction(std::string_view s) {
  for (auto a : {ReclaimAction::kNotify, ReclaimAction::kPreempt, ReclaimAction::kShrink}) {
    if (ReclaimActionName(a) == s) return a;
  }
  return std::nullopt;
}

std::string_view RuleKindName(RuleKind k) {
  switch (k) {
    case RuleKind::kConstrain:
      return "constrain";
    case RuleKind::kWeights:
      return "weights";
    case RuleKind::kPreemption:
      return "preemption";
    case RuleKind::kBurst:
      return "burst";
    case RuleKind::kReservation:
      return "reservation";
    case RuleKind::kFallback:
      return "fallback";
    case RuleKind::kIdleReclaim:
      return "idleReclaim";
  }
  return "?";
}

std::optional<RuleKind> ParseRuleKind(std::string_view s) {
  for (int i = 0; i < kRuleKindCount; ++i) {
    auto k = static_cast<RuleKind>(i);
    if (RuleKindName(k) == s) return k;
  }
  return std::nullopt;
}

}  // namespace tessera
