#include "sched/migration.h"

#include <algorithm>

namespace tessera {

void OrderMoveCandidates(std::vector<MoveCandidate>& candidates) {
  std::sort(candidates.begin(), candidates.end(),
            [](const MoveCandidate& a, const MoveCandidate& b) {
              return a.gain != b.gain ? a.gain > b.gain : a.key < b.key;
            });
}

double MoveSaving(std::optional<Millis> runtime, Millis kept, Milli speed, Milli faster) {
  // The rest of the run at today's speed, by the estimate.
  double rest = runtime ? static_cast<double>(std::max<Millis>(0, *runtime - kept)) : 1e18;
  rest *= static_cast<double>(kMilliPerUnit) / static_cast<double>(speed);
  return rest * (1.0 - static_cast<double>(speed) / static_cast<double>(faster));
}

}  // namespace tessera
