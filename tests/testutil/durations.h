// Durations in milliseconds, as the engine and the simulator count time, for the tests.
#pragma once

#include "common/quantity.h"

namespace tessera::testing {

inline constexpr Millis kSec = 1000;
inline constexpr Millis kMin = 60 * kSec;
inline constexpr Millis kHour = 60 * kMin;

}  // namespace tessera::testing
