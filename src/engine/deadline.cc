#include "engine/deadline.h"

#include <algorithm>

namespace tessera {

std::string_view DeadlineStateName(DeadlineState s) {
  switch (s) {
    case DeadlineState::kOnTrack:
      return "on-track";
    case DeadlineState::kAtRisk:
      return "at-risk";
    case DeadlineState::kUnknown:
      return "unknown";
    case DeadlineState::kMet:
      return "met";
    case DeadlineState::kMissed:
      return "missed";
  }
  return "unknown";
}

DeadlineOutlook ForecastDeadline(TimeMs deadline, TimeMs start, Millis left, TimeMs now) {
  DeadlineOutlook o{deadline, DeadlineState::kUnknown, start, kNever};
  if (start != kNever) o.start = std::max(start, now);
  if (left < 0) return o;
  if (o.start != kNever) {
    o.end = o.start + left;
    o.state = o.end > deadline ? DeadlineState::kAtRisk : DeadlineState::kOnTrack;
  } else if (now + left > deadline) {
    o.state = DeadlineState::kAtRisk;  // even a start now ends too late
  }
  return o;
}

}  // namespace tessera
