// EASY backfill's two pure parts (sched/backfill.h): the head's reservation from what is free
// and what ends when, and whether a later job may pass it.
#include "sched/backfill.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

namespace tessera {
namespace {

constexpr ModelMask kH800 = 1, kA800 = 2;

// Running jobs by estimated end, and the devices of the head's models each gives back.
struct Running {
  std::set<std::pair<TimeMs, uint32_t>> ends;
  std::map<uint32_t, Milli> frees;
  void Add(uint32_t id, TimeMs end, Milli on_mask) {
    ends.insert({end, id});
    frees[id] = on_mask;
  }
  std::optional<Reservation> For(ModelMask mask, Milli need, Milli free, TimeMs now) const {
    return ReserveForHead(7, mask, need, free, now, ends, [&](uint32_t id) {
      ++asked;
      return frees.at(id);
    });
  }
  mutable int asked = 0;
};

TEST(Backfill, TheShadowIsTheEndThatFreesEnoughDevices) {
  Running r;
  r.Add(1, 100'000, 8'000);
  r.Add(2, 200'000, 8'000);
  r.Add(3, 300'000, 16'000);
  // 4 free, 16 needed: 4 + 8 + 8 = 20 at job 2's end, 4 spare.
  auto res = r.For(kH800, 16'000, 4'000, 50'000);
  ASSERT_TRUE(res.has_value());
  EXPECT_EQ(*res, (Reservation{7, 200'000, kH800, 4'000}));
  EXPECT_EQ(r.asked, 2);  // job 3's end is not looked at
}

TEST(Backfill, EnoughFreeDevicesThatDoNotFitExpectRoomAtTheNextEnd) {
  Running r;
  r.Add(1, 100'000, 8'000);
  auto res = r.For(kH800, 16'000, 20'000, 50'000);
  ASSERT_TRUE(res.has_value());
  EXPECT_EQ(res->shadow, 100'000);
  EXPECT_EQ(res->extra, 4'000);
  // An end already past (an estimate overrun) is now.
  EXPECT_EQ(r.For(kH800, 16'000, 20'000, 150'000)->shadow, 150'000);
  // Nothing running: no end to wait for.
  EXPECT_EQ(Running{}.For(kH800, 16'000, 20'000, 0)->shadow, kNever);
}

TEST(Backfill, NotEnoughEverPromisesNoTimeAndACpuOnlyHeadReservesNothing) {
  Running r;
  r.Add(1, 100'000, 8'000);
  auto res = r.For(kH800, 64'000, 0, 0);
  ASSERT_TRUE(res.has_value());
  EXPECT_EQ(res->shadow, kNever);
  EXPECT_EQ(res->extra, 0);
  EXPECT_FALSE(r.For(0, 0, 0, 0).has_value());
}

TEST(Backfill, ALaterJobPassesByEndingFirstOrByTakingOnlyTheExtra) {
  const Reservation res{7, 100'000, kH800, 8'000};
  // Other models only: nothing the head needs.
  EXPECT_EQ(MayBackfill(res, kA800, 16'000, std::nullopt, 0).pass, BackfillPass::kInExtra);
  EXPECT_EQ(MayBackfill(res, kA800, 16'000, std::nullopt, 0).on_mask, 0);
  // Ends by the shadow (exactly at it counts).
  auto v = MayBackfill(res, kH800, 16'000, 60'000, 40'000);
  EXPECT_EQ(v.pass, BackfillPass::kBeforeShadow);
  EXPECT_EQ(v.on_mask, 16'000);
  // Ends after it, but within the extra.
  v = MayBackfill(res, kH800 | kA800, 8'000, 70'000, 40'000);
  EXPECT_EQ(v.pass, BackfillPass::kInExtra);
  EXPECT_EQ(v.on_mask, 8'000);
  // Neither: it would delay the head. No estimate cannot end first.
  EXPECT_EQ(MayBackfill(res, kH800, 16'000, 70'000, 40'000).pass, BackfillPass::kRefused);
  EXPECT_EQ(MayBackfill(res, kH800, 16'000, std::nullopt, 0).pass, BackfillPass::kRefused);
  // A run that kept more than its estimate has nothing left: it passes at once.
  EXPECT_EQ(MayBackfill(res, kH800, 16'000, -5'000, 100'000).pass, BackfillPass::kBeforeShadow);
  // A head that may wait for ever lets pass only the extra.
  const Reservation never{7, kNever, kH800, 0};
  EXPECT_EQ(MayBackfill(never, kH800, 1'000, 1, 0).pass, BackfillPass::kRefused);
}

}  // namespace
}  // namespace tessera
