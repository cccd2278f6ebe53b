#include "sched/backfill.h"

namespace tessera {

BackfillVerdict MayBackfill(const Reservation& r, ModelMask mask, Milli devices,
                            std::optional<Millis> left, TimeMs now) {
  const Milli on_mask = (mask & r.mask) ? devices : 0;
  if (on_mask == 0) return {BackfillPass::kInExtra, 0};
  if (left && r.shadow != kNever && now + std::max<Millis>(0, *left) <= r.shadow)
    return {BackfillPass::kBeforeShadow, on_mask};
  if (on_mask <= r.extra) return {BackfillPass::kInExtra, on_mask};
  return {BackfillPass::kRefused, on_mask};
}

}  // namespace tessera
