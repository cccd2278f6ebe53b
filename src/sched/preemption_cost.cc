#include "sched/preemption_cost.h"

#include <algorithm>

namespace tessera {

double StopCost(const StopCostInput& in) {
  const double lost = static_cast<double>(std::max<Millis>(0, in.since_checkpoint) +
                                          std::max<Millis>(0, in.restart_cost));
  return static_cast<double>(in.devices) / kMilliPerUnit * lost *
         (1.0 + static_cast<double>(std::max(0, in.preemptions)));
}

Millis ProtectedFor(Millis min_run, int32_t preemptions) {
  return min_run << std::clamp(preemptions, 0, kMaxProtectionDoublings);
}

Millis SearchBackoff(int32_t failures) {
  return std::min(kSearchBackoff << std::clamp(failures - 1, 0, kSearchBackoffDoublings),
                  kMaxSearchBackoff);
}

double PreemptionGain(Milli devices, Millis wait_avoided, int32_t priority_gap) {
  const double weight = 1.0 + static_cast<double>(std::max(0, priority_gap)) / 100.0;
  return static_cast<double>(devices) / kMilliPerUnit *
         static_cast<double>(std::max<Millis>(0, wait_avoided)) * weight;
}

Millis WaitForCheckpoints(Milli devices, const std::vector<VictimProgress>& victims) {
  Millis wait = 0;
  double lost = 0;
  for (const VictimProgress& v : victims) {
    if (v.since_checkpoint <= 0) continue;  // loses nothing now
    if (v.checkpoint_interval <= 0) return 0;
    wait = std::max(wait, v.checkpoint_interval - v.since_checkpoint);
    lost += static_cast<double>(v.devices) * static_cast<double>(v.since_checkpoint);
  }
  return static_cast<double>(devices) * static_cast<double>(wait) < lost ? wait : 0;
}

}  // namespace tessera
