#include "sched/communication.h"

#include <algorithm>

namespace tessera {

double CommunicationFactor(const Interconnect& ic, TopologyLevel level, WorkloadClass c,
                           int32_t tasks) {
  if (tasks <= 1) return 1.0;
  double share = c == WorkloadClass::kTraining ? 0.30 : c == WorkloadClass::kFinetune ? 0.20 : 0;
  if (share == 0 || ic.leaf_bandwidth <= 0) return 1.0;
  auto bw = [&](TopologyLevel l) -> double {
    Mbps v = 0;
    switch (l) {
      case TopologyLevel::kIsland:
        v = ic.island_bandwidth > 0 ? ic.island_bandwidth : ic.node_bandwidth;
        break;
      case TopologyLevel::kNode:
        v = ic.node_bandwidth > 0 ? ic.node_bandwidth : ic.island_bandwidth;
        break;
      case TopologyLevel::kLeaf:
        v = ic.leaf_bandwidth;
        break;
      case TopologyLevel::kSpine:
        v = ic.spine_bandwidth;
        break;
      default:
        v = ic.core_bandwidth > 0 ? ic.core_bandwidth : ic.spine_bandwidth;
        break;
    }
    return static_cast<double>(v > 0 ? v : ic.leaf_bandwidth);
  };
  double leaf = static_cast<double>(ic.leaf_bandwidth);
  auto step = [&](TopologyLevel l) { return (1 - share) + share * leaf / bw(l); };
  TopologyLevel tight =
      level == TopologyLevel::kIsland ? TopologyLevel::kIsland : TopologyLevel::kNode;
  return std::min(1.0, step(tight) / step(level));
}

}  // namespace tessera
