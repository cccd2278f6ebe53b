// Money in fixed point: what a rate costs over a time, exact to the micro-unit.
#include "sched/cost.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

constexpr Millis kHour = 3600 * 1000;

TEST(CostOver, AnHourAtARateCostsTheRate) {
  EXPECT_EQ(CostOver(2500 * 1000, kHour), 2500 * 1000);  // 2.5 units an hour (milli x milli)
  EXPECT_EQ(CostOver(2500 * 1000, 2 * kHour), 5 * kMicroPerUnit);
  EXPECT_EQ(CostOver(0, kHour), 0);
  EXPECT_EQ(CostOver(kMicroPerUnit, 0), 0);
}

TEST(CostOver, PartsOfAMicroUnitRoundHalfUp) {
  // 1 micro-unit an hour: 1,799,999 ms is less than half of one, 1,800,000 is half.
  EXPECT_EQ(CostOver(1, 1799999), 0);
  EXPECT_EQ(CostOver(1, 1800000), 1);
  EXPECT_EQ(CostOver(3, kHour / 3), 1);
  // One unit an hour for a second: 277.77… micro-units.
  EXPECT_EQ(CostOver(kMicroPerUnit, 1000), 278);
}

TEST(CostOver, LargeRatesOverLongTimesDoNotOverflow) {
  // 10,000 devices at 1,000 units a device-hour, for a year: 8.76 x 10^10 units.
  const Micro rate = Micro{10000} * 1000 * kMicroPerUnit;
  const Millis year = 365LL * 24 * kHour;
  EXPECT_EQ(CostOver(rate, year), rate * 365 * 24);
}

TEST(CostOver, SumsOfWholeHoursAreExact) {
  // What floating point loses (0.1 + 0.2 != 0.3) fixed point keeps.
  Micro total = 0;
  for (int i = 0; i < 1000; ++i)
    total += CostOver(100000, kHour);  // 0.1 a unit an hour
  EXPECT_EQ(total, 100 * kMicroPerUnit);
}

}  // namespace
}  // namespace tessera
