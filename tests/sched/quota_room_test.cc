// What a tenant's quota admits of a job now (sched/quota.h, QuotaRoomFor), on the base fleet
// (tests/testutil/spec_fixture.cc): acme/prod may hold up to 32 H800 (limit), the Ascend
// NPUs have no quota. A model takes the job whole when its headroom holds all of it; split,
// each model takes whole tasks only.
#include <gtest/gtest.h>

#include "sched/quota.h"
#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

class QuotaRoomTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = std::make_unique<Spec>(testing::BaseSpec());
    quotas_ = std::make_unique<QuotaTracker>(*spec_);
    prod_ = *spec_->FindTenant("acme/prod");
    h800_ = spec_->FindModel("H800")->value();
    ascend_ = spec_->FindModel("Ascend910B")->value();
  }
  uint64_t Bit(size_t m) const { return uint64_t{1} << m; }
  void Use(Milli h800) {
    std::vector<Milli> per(quotas_->model_count(), 0);
    per[h800_] = h800;
    quotas_->Charge(prod_, per);
  }

  std::unique_ptr<Spec> spec_;
  std::unique_ptr<QuotaTracker> quotas_;
  TenantId prod_;
  size_t h800_ = 0, ascend_ = 0;
};

TEST_F(QuotaRoomTest, AModelTakesTheJobWholeWhenItsHeadroomHoldsAllOfIt) {
  EXPECT_EQ(quotas_->Headroom(prod_, h800_), 32'000);
  EXPECT_EQ(QuotaRoomFor(*quotas_, prod_, Bit(h800_), 16'000, 8'000),
            (QuotaRoom{Bit(h800_), true}));
  EXPECT_EQ(QuotaRoomFor(*quotas_, prod_, Bit(h800_), 32'000, 8'000),
            (QuotaRoom{Bit(h800_), true}));
  // 40 H800 are over prod's limit on H800 alone.
  EXPECT_EQ(QuotaRoomFor(*quotas_, prod_, Bit(h800_), 40'000, 8'000), (QuotaRoom{0, false}));
  // The Ascend NPUs have no quota: they take it whole.
  EXPECT_EQ(QuotaRoomFor(*quotas_, prod_, Bit(h800_) | Bit(ascend_), 40'000, 8'000),
            (QuotaRoom{Bit(ascend_), true}));
}

TEST_F(QuotaRoomTest, SplitAcrossModelsEachTakesWholeTasksOnly) {
  Use(12'000);  // 20 H800 of headroom left
  EXPECT_EQ(quotas_->Headroom(prod_, h800_), 20'000);
  // 3 tasks of 8: 24 do not fit whole; split, H800 takes 2 tasks (16), not 20.
  EXPECT_EQ(QuotaRoomFor(*quotas_, prod_, Bit(h800_), 24'000, 8'000), (QuotaRoom{0, false}));
  // Tasks of 4: H800 takes 5 of 6 whole tasks (20 of 24): still not all.
  EXPECT_EQ(QuotaRoomFor(*quotas_, prod_, Bit(h800_), 24'000, 4'000), (QuotaRoom{0, false}));
  // Within the headroom in tasks of 4: whole.
  EXPECT_EQ(QuotaRoomFor(*quotas_, prod_, Bit(h800_), 20'000, 4'000),
            (QuotaRoom{Bit(h800_), true}));
  // A model outside the mask is not counted.
  EXPECT_EQ(QuotaRoomFor(*quotas_, prod_, 0, 8'000, 8'000), (QuotaRoom{0, false}));
}

}  // namespace
}  // namespace tessera
