// How a job with a deadline stands against it: a pending job's estimated start and end, a
// running job's estimated end, a finished job's end. The estimate of a pending job is a lower
// bound: the time enough devices of its models free up by the running jobs' estimated ends, as
// if it were next in the queue (jobs ahead of it, its quota and topology may delay it more).
#pragma once

#include <cstdint>
#include <string_view>

#include "common/clock.h"

namespace tessera {

enum class DeadlineState : uint8_t {
  kOnTrack,  // its estimated end is by the deadline
  kAtRisk,   // its estimated end (or even a start now) passes the deadline
  kUnknown,  // no runtime estimate, or no running job's estimate says when room frees up
  kMet,      // it succeeded by the deadline
  kMissed,   // it succeeded after the deadline, or failed
};
std::string_view DeadlineStateName(DeadlineState s);

struct DeadlineOutlook {
  TimeMs deadline = 0;
  DeadlineState state = DeadlineState::kUnknown;
  TimeMs start = kNever;  // the (estimated) start of the run that counts; kNever: unknown
  TimeMs end = kNever;    // its (estimated) end; kNever: unknown
};

// The outlook of a job that has `left` to run (-1: no estimate) and could start at `start`
// (kNever: unknown), at `now`, against `deadline`.
DeadlineOutlook ForecastDeadline(TimeMs deadline, TimeMs start, Millis left, TimeMs now);

}  // namespace tessera
