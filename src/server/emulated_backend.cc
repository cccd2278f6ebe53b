#include "server/emulated_backend.h"

#include <algorithm>

namespace tessera {

void EmulatedBackend::Launch(const JobRecord& job, TimeMs now) {
  if (sink_ == nullptr || !job.job.runtime) return;
  Event e;
  e.kind = EventKind::kFinish;
  e.job = job.id;
  e.generation = job.generation;
  // What is left of the declared runtime after earlier runs' kept progress.
  Millis left = std::max<Millis>(0, *job.job.runtime - job.kept_ms);
  // An elastic gang short of tasks goes at its members' share of the pace.
  const double share = MembersShare(job.placements.size(), job.task_count);
  if (share < 1.0) left = static_cast<Millis>(static_cast<double>(left) / share);
  e.time = std::max(now, job.last_start) + left;
  sink_->Post(e);
}

}  // namespace tessera
