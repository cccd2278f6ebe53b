#include "sim/sim_backend.h"

#include <algorithm>
#include <cmath>

namespace tessera {

void SimBackend::SetWork(JobId id, Millis work) {
  if (id.value() >= remaining_.size()) {
    remaining_.resize(id.value() + 1, 0);
    rate_.resize(id.value() + 1, 0);
    since_.resize(id.value() + 1, 0);
  }
  remaining_[id.value()] = static_cast<double>(work);
}

void SimBackend::SetIdleAfter(JobId id, Millis after) {
  if (id.value() >= idle_after_.size()) idle_after_.resize(id.value() + 1, 0);
  idle_after_[id.value()] = after;
}

double SimBackend::Rate(const JobRecord& job) const {
  return RunSpeed(spec_, *cell_, job);
}

void SimBackend::Launch(const JobRecord& job, TimeMs now) {
  size_t i = job.id.value();
  CHECK(i < remaining_.size()) << "job " << job.job.name << " has no work in the simulation";
  rate_[i] = Rate(job);
  double ms = remaining_[i] * kMilliPerUnit / rate_[i];
  const TimeMs begins = std::max(now, job.last_start);
  // A resumed run reloads its checkpoint first (JobRecord::run_overhead).
  since_[i] = begins + job.run_overhead;
  Event e;
  e.time = since_[i] + std::max<Millis>(1, static_cast<Millis>(std::ceil(ms)));
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

void SimBackend::Resize(const JobRecord& job, TimeMs now) {
  size_t i = job.id.value();
  const TimeMs at = std::max(now, job.last_start);
  const double done = static_cast<double>(std::max<TimeMs>(0, at - since_[i])) * rate_[i];
  remaining_[i] = std::max(0.0, remaining_[i] - done / kMilliPerUnit);
  rate_[i] = Rate(job);
  since_[i] = std::max(at, job.progress_start());  // what is left of a reload carries on
  Event e;
  e.time =
      since_[i] +
      std::max<Millis>(1, static_cast<Millis>(std::ceil(remaining_[i] * kMilliPerUnit / rate_[i])));
  e.kind = EventKind::kFinish;
  e.job = job.id;
  e.generation = job.generation;
  sink_.Post(e);
}

void SimBackend::Stop(const JobRecord& job, TimeMs now) {
  size_t i = job.id.value();
  // Progress began once the run had reloaded its checkpoint. With a grace period the run
  // checkpoints on the signal and keeps all it did.
  Millis progressed = std::max<Millis>(0, now - job.progress_start());
  Millis kept = job.stop_grace > 0 ? progressed
                                   : progressed - LostSinceCheckpoint(job.progress_start(), now,
                                                                      job.job.checkpoint_interval);
  remaining_[i] =
      std::max(0.0, remaining_[i] - static_cast<double>(kept) * rate_[i] / kMilliPerUnit);
}

}  // namespace tessera
