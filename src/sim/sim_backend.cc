#include "sim/sim_backend.h"

#include <algorithm>
#include <cmath>

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

void SimBackend::SetWork(JobId id, Millis work) {
  if (id.value() >= remaining_.size()) {
    remaining_.resize(id.value() + 1, 0);
    rate_.resize(id.value() + 1, 0);
  }
  remaining_[id.value()] = static_cast<double>(work);
}

void SimBackend::SetIdleAfter(JobId id, Millis after) {
  if (id.value() >= idle_after_.size()) idle_after_.resize(id.value() + 1, 0);
  idle_after_[id.value()] = after;
}

double SimBackend::Rate(const JobRecord& job) const {
  double speed = kMilliPerUnit;
  bool any = false;
  size_t task = 0;
  for (const TaskGroup& g : job.job.task_groups) {
    for (int32_t i = 0; i < g.count; ++i, ++task) {
      if (task >= job.placements.size()) break;
      const Placement& p = job.placements[task];
      if (p.devices.empty()) continue;
      uint16_t model = cell_->devices(p.node)[p.devices[0].index].model;
      DeviceModelId id(model);
      Milli s = g.request.devices.models.empty()
                    ? spec_.model(id).speed[static_cast<size_t>(job.job.job_class)]
                    : g.request.devices.SpeedOn(id);
      speed = any ? std::min(speed, static_cast<double>(s)) : static_cast<double>(s);
      any = true;
    }
  }
  if (job.placements.empty()) return speed;
  const Cluster& cluster =
      spec_.cluster(spec_.node(cell_->spec_node(job.placements[0].node)).cluster);
  return std::max(1.0, speed * CommunicationFactor(cluster.interconnect, job.level,
                                                   job.job.job_class, job.task_count));
}

void SimBackend::Launch(const JobRecord& job, TimeMs now) {
  size_t i = job.id.value();
  CHECK(i < remaining_.size()) << "job " << job.job.name << " has no work in the simulation";
  rate_[i] = Rate(job);
  double ms = remaining_[i] * kMilliPerUnit / rate_[i];
  const TimeMs begins = std::max(now, job.last_start);
  Event e;
  e.time = begins + std::max<Millis>(1, static_cast<Millis>(std::ceil(ms)));
  e.kind = EventKind::kFinish;
  e.job = job.id;
  e.generation = job.generation;
  sink_.Post(e);
  if (i < idle_after_.size() && idle_after_[i] > 0) {
    Event idle;
    idle.time = begins + idle_after_[i];
    idle.kind = EventKind::kUtilization;
    idle.job = job.id;
    idle.generation = job.generation;
    idle.value = 0;
    sink_.Post(idle);
  }
}

void SimBackend::Stop(const JobRecord& job, TimeMs now) {
  size_t i = job.id.value();
  Millis elapsed = std::max<Millis>(0, now - job.last_start);
  // With a grace period the run checkpoints on the signal and keeps all it did.
  Millis kept = job.stop_grace > 0 ? elapsed
                                   : elapsed - LostSinceCheckpoint(job.last_start, now,
                                                                   job.job.checkpoint_interval);
  remaining_[i] =
      std::max(0.0, remaining_[i] - static_cast<double>(kept) * rate_[i] / kMilliPerUnit);
}

}  // namespace tessera
