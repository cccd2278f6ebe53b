#include <gtest/gtest.h>

#include <set>

#include "common/clock.h"
#include "common/rng.h"
#include "common/status.h"
#include "common/text.h"

namespace tessera {
namespace {

TEST(SeededRng, SameSeedSameStream) {
  SeededRng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
}

TEST(SeededRng, KnownFirstValueIsStableAcrossPlatforms) {
  // Pinned so that a change to the generator (which would change every simulation) is seen.
  SeededRng r(1);
  EXPECT_EQ(r.Next(), 0xb3f2af6d0fc710c5ULL);
}

TEST(SeededRng, UniformStaysInRangeAndCoversIt) {
  SeededRng r(7);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    uint64_t v = r.Uniform(10);
    ASSERT_LT(v, 10u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 10u);
  for (int i = 0; i < 1000; ++i) {
    double d = r.UniformDouble();
    ASSERT_GE(d, 0.0);
    ASSERT_LT(d, 1.0);
  }
}

TEST(SeededRng, ShuffleIsAPermutationAndDeterministic) {
  std::vector<int> v(50), w;
  for (int i = 0; i < 50; ++i)
    v[i] = i;
  w = v;
  SeededRng a(3), b(3);
  a.Shuffle(v);
  b.Shuffle(w);
  EXPECT_EQ(v, w);
  std::set<int> s(v.begin(), v.end());
  EXPECT_EQ(s.size(), 50u);
  EXPECT_NE(v[0] + v[1] * 100, 0 + 100);
}

TEST(ManualClock, MovesOnlyWhenTold) {
  ManualClock c(1000);
  EXPECT_EQ(c.Now(), 1000);
  c.Advance(500);
  EXPECT_EQ(c.Now(), 1500);
  c.Set(2000);
  EXPECT_EQ(c.Now(), 2000);
  EXPECT_DEATH(c.Set(10), "backwards");
}

TEST(SystemClock, IsAfter2020) {
  EXPECT_GT(SystemClock().Now(), 1577836800000);
}

TEST(Result, HoldsValueOrStatus) {
  Result<int> ok = 5;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  Result<int> bad = InvalidArgument("nope");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().ToString(), "INVALID_ARGUMENT: nope");
  EXPECT_DEATH((void)bad.value(), "nope");
}

TEST(Text, ClosestMatchSuggestsTyposOnly) {
  std::vector<std::string_view> c = {"memory", "cpu", "devices", "labels"};
  EXPECT_EQ(ClosestMatch("memroy", c), "memory");
  EXPECT_EQ(ClosestMatch("devcies", c), "devices");
  EXPECT_EQ(ClosestMatch("zzzzzzzz", c), "");
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace tessera
