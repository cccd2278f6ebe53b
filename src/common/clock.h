// The Clock port. The scheduler core never reads the wall clock: the engine passes time in,
// and whoever composes the engine chooses SystemClock (the daemon), a ManualClock (tests) or
// the simulator's clock.
//
// Thread-safety: SystemClock is thread-safe; ManualClock is not (tests own it on one thread).
#pragma once

#include <limits>

#include "common/quantity.h"

namespace tessera {

// Milliseconds since the Unix epoch (or since the start of a simulation).
using TimeMs = int64_t;
// A time that never comes (no estimated end, no reservation).
inline constexpr TimeMs kNever = std::numeric_limits<TimeMs>::max();

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimeMs Now() const override;
};

// A clock that only moves when told to.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimeMs start = 0) : now_(start) {}
  TimeMs Now() const override { return now_; }
  void Set(TimeMs t);
  void Advance(Millis d);

 private:
  TimeMs now_;
};

}  // namespace tessera
