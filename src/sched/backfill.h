// EASY backfill (Lifka, 1995; Slurm's sched/backfill): the first job of the queue that cannot
// start holds a reservation at the time enough devices of its models free up, by the running
// jobs' estimated ends (the shadow time); a later job passes it only if it ends by then, or
// takes only devices the head will not need there (the extra). Pure: the engine hands in
// what is free and what ends when.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "common/clock.h"
#include "common/quantity.h"
#include "sched/task_shape.h"

namespace tessera {

struct Reservation {
  uint32_t head = 0;       // the job it is for
  TimeMs shadow = kNever;  // when the head can start, by the estimates
  ModelMask mask = 0;      // the head's models
  Milli extra = 0;         // devices on those models spare at the shadow time
  bool operator==(const Reservation&) const = default;
};

// The reservation of job `head`, which needs `need` devices of the models in `mask` while
// `free` of them are free now. `ends` holds the running jobs as (estimated end, id) in end
// order; `frees(id)` is what the end of job `id` gives back on the mask. None for a CPU-only
// head: it reserves no devices. Enough free devices that do not fit (topology,
// fragmentation) are expected to fit at the next end; running jobs without estimates promise
// no time (shadow kNever). With a `horizon`, the walk stops at the first end after it: a
// shadow past the horizon is reported as kNever.
template <typename Ends, typename Frees>
std::optional<Reservation> ReserveForHead(uint32_t head, ModelMask mask, Milli need, Milli free,
                                          TimeMs now, const Ends& ends, Frees&& frees,
                                          TimeMs horizon = kNever) {
  if (mask == 0) return std::nullopt;
  Reservation r{head, kNever, mask, 0};
  if (free >= need) {
    r.shadow = ends.empty() ? kNever : std::max(now, ends.begin()->first);
    r.extra = free - need;
    return r;
  }
  for (const auto& [end, id] : ends) {
    if (end > horizon) return r;
    free += frees(id);
    if (free >= need) {
      r.shadow = std::max(now, end);
      r.extra = free - need;
      return r;
    }
  }
  return r;
}

// How a later job may start while a reservation holds.
enum class BackfillPass : uint8_t {
  kBeforeShadow,  // it ends by the shadow time
  kInExtra,       // it takes only devices the head will not need (`on_mask` of the extra)
  kRefused,       // it would delay the head
};
struct BackfillVerdict {
  BackfillPass pass = BackfillPass::kRefused;
  Milli on_mask = 0;  // its devices on the head's models
};

// A job of `mask` that takes `devices` and has `left` to run (none: no estimate), at `now`.
BackfillVerdict MayBackfill(const Reservation& r, ModelMask mask, Milli devices,
                            std::optional<Millis> left, TimeMs now);

}  // namespace tessera
