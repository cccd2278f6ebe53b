// The waits of recent starts by class and size, as the preemption cost model reads them.
#include "sched/typical_waits.h"

#include <gtest/gtest.h>

#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::kMin;
using testing::kSec;

TEST(TypicalWaits, NoneBeforeTheFirstStartOfAClassAndSize) {
  TypicalWaits waits;
  EXPECT_EQ(waits.Of(500, 1000), std::nullopt);
  waits.Observe(500, 1000, 10 * kMin);
  EXPECT_EQ(waits.Of(500, 1000), 10 * kMin);     // the first start is the average
  EXPECT_EQ(waits.Of(800, 1000), std::nullopt);  // another class
  EXPECT_EQ(waits.Of(500, 2000), std::nullopt);  // another size
}

TEST(TypicalWaits, SizesGoByPowersOfTwoAndShareOfADeviceCountsAsOne) {
  TypicalWaits waits;
  waits.Observe(200, 250, kMin);
  EXPECT_EQ(waits.Of(200, 1000), kMin);  // a quarter and a whole device alike
  waits.Observe(500, 5000, 2 * kMin);
  EXPECT_EQ(waits.Of(500, 8000), 2 * kMin);  // 5-8 devices alike
  EXPECT_EQ(waits.Of(500, 4000), std::nullopt);
  EXPECT_EQ(waits.Of(500, 9000), std::nullopt);
}

TEST(TypicalWaits, EachStartMovesTheAverageBy1Over16OfItsDifference) {
  TypicalWaits waits;
  waits.Observe(500, 1000, 0);
  waits.Observe(500, 1000, 160 * kSec);
  EXPECT_EQ(waits.Of(500, 1000), 10 * kSec);
  for (int k = 0; k < 200; ++k)
    waits.Observe(500, 1000, 160 * kSec);
  EXPECT_NEAR(static_cast<double>(*waits.Of(500, 1000)), 160.0 * kSec, 1.0 * kSec);
  waits.Observe(500, 1000, -kMin);  // a negative wait (a clock set back) counts as none
  EXPECT_LT(*waits.Of(500, 1000), 160 * kSec);
}

}  // namespace
}  // namespace tessera
