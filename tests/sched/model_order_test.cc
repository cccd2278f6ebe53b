// The order of a job's device models at placement, alone: speed-aware and agnostic.
#include "sched/model_order.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera {
namespace {

constexpr ModelMask M(int m) {
  return ModelMask{1} << m;
}

TEST(ModelOrder, SpeedAwareTriesEachModelApartFastestFirstThenAllTogether) {
  ModelOrder o = SpeedOrder({2, 0, 1}, M(0) | M(2), /*contended=*/false);
  EXPECT_EQ(o.masks, (std::vector<ModelMask>{M(2), M(0), M(0) | M(2)}));
  ASSERT_EQ(o.whys.size(), 2u);
  EXPECT_EQ(std::string(o.whys[0]), "each model is tried apart, the job's fastest first");
  EXPECT_TRUE(o.mixed_last);
}

TEST(ModelOrder, SpeedAwareUnderContentionSaysWhereTheJobGainsMost) {
  ModelOrder o = SpeedOrder({1, 0}, M(1), /*contended=*/true);
  EXPECT_EQ(o.masks, (std::vector<ModelMask>{M(1)}));  // one model: no mixed attempt
  EXPECT_FALSE(o.mixed_last);
  EXPECT_EQ(std::string(o.whys[0]), "each model is tried apart, where the job gains most first");
}

TEST(ModelOrder, AgnosticTriesTheGuaranteeThenWhatTheQuotaAdmitsThenAll) {
  const ModelMask mine = M(0) | M(1) | M(2);
  ModelOrder o = AgnosticOrder(mine, /*whole=*/M(0) | M(1), /*own=*/M(0), /*single_task=*/true);
  EXPECT_EQ(o.masks, (std::vector<ModelMask>{M(0), M(0) | M(1), mine}));
  ASSERT_EQ(o.whys.size(), 3u);
  EXPECT_EQ(std::string(o.whys[0]), "the models within the tenant's guarantee are tried first");
  EXPECT_EQ(o.whys[2], nullptr);
  EXPECT_TRUE(o.mixed_last);  // a single task on all models: only to tell the infeasible apart
}

TEST(ModelOrder, AgnosticGangsMayUseTheMixedAttemptForReal) {
  const ModelMask mine = M(0) | M(1);
  ModelOrder o = AgnosticOrder(mine, /*whole=*/M(1), /*own=*/0, /*single_task=*/false);
  EXPECT_EQ(o.masks, (std::vector<ModelMask>{M(1), mine}));
  EXPECT_FALSE(o.mixed_last);
}

TEST(ModelOrder, AgnosticWithTheWholeJobAdmittedEverywhereIsOneAttempt) {
  const ModelMask mine = M(0) | M(1);
  // The guarantee covering everything the quota admits adds no attempt of its own.
  ModelOrder o = AgnosticOrder(mine, mine, mine, true);
  EXPECT_EQ(o.masks, (std::vector<ModelMask>{mine}));
  EXPECT_FALSE(o.mixed_last);
  // Nothing admitted: only the attempt that tells why.
  ModelOrder none = AgnosticOrder(mine, 0, 0, true);
  EXPECT_EQ(none.masks, (std::vector<ModelMask>{mine}));
  EXPECT_FALSE(none.mixed_last);
}

}  // namespace
}  // namespace tessera
