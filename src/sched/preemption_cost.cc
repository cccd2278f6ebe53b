#include "sched/preemption_cost.h"

#include <algorithm>

namespace tessera {

namespace {

double Times(int32_t preemptions) {
  return 1.0 + static_cast<double>(std::max(0, preemptions));
}

}  // namespace

double StopCost(const StopCostInput& in) {
  const double lost = static_cast<double>(std::max<Millis>(0, in.since_checkpoint) +
                                          std::max<Millis>(0, in.restart_cost));
  return lost * Times(in.preemptions);
}

double StopCostPerDevice(const StopCostInput& in, Milli devices) {
  return StopCost(in) / (static_cast<double>(std::max<Milli>(1, devices)) / kMilliPerUnit);
}

double ClassWeight(int32_t priority_gap) {
  return 1.0 + static_cast<double>(std::max(0, priority_gap)) / 100.0;
}

void PreemptionBill::Add(const StopCostInput& victim) {
  AddWaste(victim);
  requeues += Times(victim.preemptions);
}

void PreemptionBill::AddWaste(const StopCostInput& victim) {
  lost += StopCost(victim);
  ++stops;
}

bool DisplacementBilled(const PreemptionBill& displaced) {
  return displaced.stops > kFreeDisplacements;
}

std::optional<Millis> BreakEvenWait(const PreemptionBill& bill, int32_t priority_gap) {
  const double margin = ClassWeight(priority_gap) - bill.requeues;
  if (margin <= 0) return std::nullopt;
  // Bounded so that the cast holds: a wait of a million years pays only in theory.
  return static_cast<Millis>(std::min(bill.lost / margin, 3.2e16));
}

bool PreemptionPays(Millis wait_avoided, const PreemptionBill& bill, int32_t priority_gap) {
  const double margin = ClassWeight(priority_gap) - bill.requeues;
  return margin > 0 && static_cast<double>(std::max<Millis>(0, wait_avoided)) * margin > bill.lost;
}

Millis ProtectedFor(Millis min_run, int32_t preemptions) {
  return min_run << std::clamp(preemptions, 0, kMaxProtectionDoublings);
}

TimeMs SearchTick(TimeMs again) {
  if (again <= 0 || again > kNever - kSearchBackoff) return again;
  const TimeMs rest = again % kSearchBackoff;
  return rest == 0 ? again : again - rest + kSearchBackoff;
}

Millis SearchBackoff(int32_t failures) {
  return std::min(kSearchBackoff << std::clamp(failures - 1, 0, kSearchBackoffDoublings),
                  kMaxSearchBackoff);
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
