// StableVector: elements keep their address while it grows, index and iterate in order, and
// each is built and destroyed exactly once (moved out of with the vector, never copied).
#include "common/stable_vector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

namespace tessera {
namespace {

// Counts the live instances.
struct Counted {
  explicit Counted(int v, int* live) : value(v), live_(live) { ++*live_; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  ~Counted() { --*live_; }
  int value;
  std::string text = std::string(40, 'x');  // heap memory, which ASan watches

 private:
  int* live_;
};

TEST(StableVector, ElementsKeepTheirAddressWhileItGrowsAcrossChunks) {
  int live = 0;
  {
    StableVector<Counted, 3> v;  // chunks of 8
    std::vector<const Counted*> at;
    for (int i = 0; i < 100; ++i)
      at.push_back(&v.emplace_back(i, &live));
    ASSERT_EQ(v.size(), 100u);
    EXPECT_EQ(live, 100);
    for (int i = 0; i < 100; ++i) {
      EXPECT_EQ(&v[static_cast<size_t>(i)], at[static_cast<size_t>(i)]);
      EXPECT_EQ(v[static_cast<size_t>(i)].value, i);
    }
    EXPECT_EQ(v.back().value, 99);
    int expected = 0;
    for (const Counted& c : v)
      EXPECT_EQ(c.value, expected++);
    EXPECT_EQ(expected, 100);
    EXPECT_EQ(v.end() - v.begin(), 100);
  }
  EXPECT_EQ(live, 0);
}

TEST(StableVector, AMoveHandsTheElementsOverAndLeavesAnEmptyVector) {
  int live = 0;
  {
    StableVector<Counted, 2> a;
    a.reserve(10);  // room, no elements
    EXPECT_TRUE(a.empty());
    for (int i = 0; i < 10; ++i)
      a.emplace_back(i, &live);
    const Counted* fifth = &a[5];
    StableVector<Counted, 2> b(std::move(a));
    EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): the moved-from state is defined
    ASSERT_EQ(b.size(), 10u);
    EXPECT_EQ(&b[5], fifth);
    StableVector<Counted, 2> c;
    c.emplace_back(-1, &live);
    c = std::move(b);  // c's own element destroyed
    EXPECT_EQ(live, 10);
    EXPECT_EQ(c[9].value, 9);
    c.clear();
    EXPECT_EQ(live, 0);
    c.emplace_back(7, &live);  // usable again after clear
    EXPECT_EQ(c[0].value, 7);
  }
  EXPECT_EQ(live, 0);
}

TEST(StableVector, IteratorsWorkWithTheStandardAlgorithms) {
  StableVector<int, 2> v;
  for (int i = 0; i < 11; ++i)
    v.push_back(10 - i);
  EXPECT_EQ(std::accumulate(v.begin(), v.end(), 0), 55);
  EXPECT_EQ(std::count_if(v.begin(), v.end(), [](int x) { return x % 2 == 0; }), 6);
  const StableVector<int, 2>& cv = v;
  EXPECT_EQ(*std::max_element(cv.begin(), cv.end()), 10);
}

}  // namespace
}  // namespace tessera
