#include "engine/ports.h"

namespace tessera {

std::string_view DecisionKindName(DecisionKind k) {
  switch (k) {
    case DecisionKind::kStart:
      return "start";
    case DecisionKind::kPreempt:
      return "preempt";
    case DecisionKind::kRequeue:
      return "requeue";
    case DecisionKind::kMigrate:
      return "migrate";
    case DecisionKind::kFinish:
      return "finish";
    case DecisionKind::kIdle:
      return "idle";
    case DecisionKind::kFail:
      return "fail";
    case DecisionKind::kCancel:
      return "cancel";
    case DecisionKind::kGrow:
      return "grow";
    case DecisionKind::kShrink:
      return "shrink";
  }
  return "?";
}

void MemoryStore::PutJob(const JobRecord& job) {
  if (job.id.value() >= states_.size()) states_.resize(job.id.value() + 1, JobState::kPending);
  states_[job.id.value()] = job.state;
  ++writes_;
}

}  // namespace tessera
