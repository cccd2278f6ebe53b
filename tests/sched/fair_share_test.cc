// The next tenant queue a cycle serves (sched/fair_share.h): the highest priority class first,
// then the smallest dominant shares along the tenant's path (hierarchical DRF, compared root
// first), then the queue first in order; empty queues are passed over.
#include "sched/fair_share.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace tessera {
namespace {

struct Queues {
  std::vector<std::optional<QueueHead>> heads;
  std::map<uint32_t, std::vector<int64_t>> shares;
  int asked = 0;  // shares looked up
  std::optional<size_t> Next() {
    return NextQueue(
        heads.size(), [&](size_t i) { return heads[i]; },
        [&](uint32_t t) -> const std::vector<int64_t>& {
          ++asked;
          return shares.at(t);
        });
  }
};

TEST(FairShare, TheHighestPriorityClassGoesFirstWhateverTheShares) {
  Queues q;
  q.heads = {QueueHead{-500, 0}, QueueHead{-800, 1}, QueueHead{-500, 2}};
  q.shares = {{0, {0}}, {1, {900'000}}, {2, {0}}};
  EXPECT_EQ(q.Next(), 1u);
}

TEST(FairShare, AmongEqualClassesTheSmallestPathSharesThenTheFirstQueue) {
  Queues q;
  // Tenants 3 and 4 under one parent (equal first share): 4 has used less.
  q.heads = {QueueHead{-500, 3}, QueueHead{-500, 4}, QueueHead{-500, 5}};
  q.shares = {{3, {200'000, 500'000}}, {4, {200'000, 100'000}}, {5, {300'000, 0}}};
  EXPECT_EQ(q.Next(), 1u);
  // Equal shares: the first in order.
  q.shares[4] = {200'000, 500'000};
  EXPECT_EQ(q.Next(), 0u);
}

TEST(FairShare, EmptyQueuesArePassedOverAndNoneLeftIsNone) {
  Queues q;
  q.heads = {std::nullopt, QueueHead{-200, 7}, std::nullopt};
  q.shares = {{7, {0}}};
  EXPECT_EQ(q.Next(), 1u);
  q.heads = {std::nullopt, std::nullopt};
  EXPECT_FALSE(q.Next().has_value());
  // A single class never compares shares beyond the one it keeps.
  q.heads = {QueueHead{-800, 7}, QueueHead{-200, 8}};
  q.shares = {{7, {0}}, {8, {0}}};
  q.asked = 0;
  EXPECT_EQ(q.Next(), 0u);
  EXPECT_EQ(q.asked, 1);
}

}  // namespace
}  // namespace tessera
