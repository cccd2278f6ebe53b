#include "engine/run_speed.h"

#include <algorithm>

#include "sched/policy_match.h"

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

double RunSpeed(const Spec& spec, const CellState& cell, const JobRecord& job) {
  double speed = kMilliPerUnit;
  bool any = false;
  size_t task = 0;
  const FallbackRule* fallback = nullptr;
  bool looked = false;  // for the fallback rule, once: only groups that list no models need it
  for (const TaskGroup& g : job.job.task_groups) {
    for (int32_t i = 0; i < g.count; ++i, ++task) {
      if (task >= job.placements.size()) break;
      const Placement& p = job.placements[task];
      if (p.devices.empty()) continue;
      uint16_t model = cell.devices(p.node)[p.devices[0].index].model;
      DeviceModelId id(model);
      if (g.request.devices.models.empty() && !looked) {
        fallback = FirstFallback(spec, job.job);
        looked = true;
      }
      Milli s = GroupSpeedOn(spec, job.job, g, id, fallback);
      speed = any ? std::min(speed, static_cast<double>(s)) : static_cast<double>(s);
      any = true;
    }
  }
  if (job.placements.empty()) return speed;
  const Cluster& cluster = spec.cluster(spec.node(cell.spec_node(job.placements[0].node)).cluster);
  return std::max(1.0, speed * CommunicationFactor(cluster.interconnect, job.level,
                                                   job.job.job_class, job.task_count));
}

}  // namespace tessera
