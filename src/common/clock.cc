#include "common/clock.h"

#include <chrono>

#include "common/check.h"

namespace tessera {

TimeMs SystemClock::Now() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

void ManualClock::Set(TimeMs t) {
  CHECK(t >= now_) << "ManualClock moved backwards from " << now_ << " to " << t;
  now_ = t;
}

void ManualClock::Advance(Millis d) {
  CHECK(d >= 0) << "ManualClock::Advance by negative " << d;
  now_ += d;
}

}  // namespace tessera
