// How long jobs wait in the queue before they start, by priority class and size: the
// preemption cost model's check on the estimates' shadow (sched/preemption_cost.h). The
// running jobs' estimates overstate their ends (users ask for more time than they use), so the
// wait they promise a preemptor overstates what it would wait; the starts of its class and size
// say what jobs like it do wait.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "common/quantity.h"

namespace tessera {

class TypicalWaits {
 public:
  // The starts an average spans: each new start weighs 1/kSpan.
  static constexpr double kSpan = 16;

  // A job of `priority` and `devices` (milli) started after waiting `waited`.
  void Observe(int32_t priority, Milli devices, Millis waited);
  // The moving average of those waits for jobs of that class and size (devices rounded up to a
  // power of two); none before the first such start.
  std::optional<Millis> Of(int32_t priority, Milli devices) const;

 private:
  static int64_t Key(int32_t priority, Milli devices);

  std::unordered_map<int64_t, double> average_;
};

}  // namespace tessera
