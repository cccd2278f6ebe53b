#include "engine/job_record.h"

namespace tessera {

std::string_view JobStateName(JobState s) {
  switch (s) {
    case JobState::kPending:
      return "pending";
    case JobState::kAdmitted:
      return "admitted";
    case JobState::kPlaced:
      return "placed";
    case JobState::kRunning:
      return "running";
    case JobState::kSucceeded:
      return "succeeded";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "?";
}

std::string_view PendingReasonCode(PendingReason r) {
  switch (r) {
    case PendingReason::kNone:
      return "";
    case PendingReason::kNew:
      return "New";
    case PendingReason::kQuota:
      return "QuotaExceeded";
    case PendingReason::kResources:
      return "InsufficientResources";
    case PendingReason::kInfeasible:
      return "Infeasible";
    case PendingReason::kReservation:
      return "BehindReservation";
    case PendingReason::kBackfillDepth:
      return "NotConsidered";
    case PendingReason::kIdle:
      return "IdleReclaimed";
    case PendingReason::kPreempted:
      return "Preempted";
    case PendingReason::kNodeLost:
      return "NodeLost";
    case PendingReason::kBudget:
      return "BudgetExceeded";
  }
  return "?";
}

Millis LostSinceCheckpoint(TimeMs start, TimeMs now, Millis checkpoint_interval) {
  Millis ran = now > start ? now - start : 0;
  if (checkpoint_interval <= 0) return ran;
  return ran % checkpoint_interval;
}

}  // namespace tessera
