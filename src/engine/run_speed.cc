#include "engine/run_speed.h"

#include <algorithm>

#include "sched/policy_match.h"

namespace tessera {

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
  // An elastic gang short of tasks goes at its members' share of the pace.
  return std::max(1.0, speed *
                           CommunicationFactor(cluster.interconnect, job.level, job.job.job_class,
                                               static_cast<int32_t>(job.placements.size())) *
                           MembersShare(job.placements.size(), job.task_count));
}

}  // namespace tessera
