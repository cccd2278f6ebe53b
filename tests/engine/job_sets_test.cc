#include "engine/job_sets.h"

#include <gtest/gtest.h>

#include <set>

namespace tessera {
namespace {

std::set<uint32_t> Members(const JobSets& s, uint32_t set) {
  const auto& m = s.members(set);
  return {m.begin(), m.end()};
}

TEST(JobSets, InsertEraseAndMoveKeepEachIdInOneSet) {
  JobSets s;
  EXPECT_TRUE(s.members(3).empty());  // a set never used
  s.Insert(0, 7);
  s.Insert(0, 2);
  s.Insert(2, 9);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(Members(s, 0), (std::set<uint32_t>{2, 7}));
  EXPECT_EQ(Members(s, 2), (std::set<uint32_t>{9}));
  EXPECT_TRUE(s.members(1).empty());
  s.Insert(2, 7);  // moves: out of set 0
  EXPECT_EQ(Members(s, 0), (std::set<uint32_t>{2}));
  EXPECT_EQ(Members(s, 2), (std::set<uint32_t>{7, 9}));
  EXPECT_EQ(s.size(), 3u);
  s.Insert(2, 7);  // again: nothing changes
  EXPECT_EQ(s.members(2).size(), 2u);
  s.Erase(9);
  s.Erase(9);    // not in any set any more
  s.Erase(100);  // never seen
  EXPECT_FALSE(s.contains(9));
  EXPECT_TRUE(s.contains(7));
  EXPECT_EQ(Members(s, 2), (std::set<uint32_t>{7}));
  EXPECT_EQ(s.size(), 2u);
}

TEST(JobSets, ManyInsertsAndErasesMatchAStdSet) {
  JobSets s;
  std::set<uint32_t> want[3];
  uint32_t x = 12345;
  for (int i = 0; i < 20000; ++i) {
    x = x * 1103515245u + 12345u;
    const uint32_t id = (x >> 8) % 500, set = (x >> 20) % 3;
    if ((x >> 4) % 3 == 0) {
      s.Erase(id);
      for (auto& w : want)
        w.erase(id);
    } else {
      s.Insert(set, id);
      for (auto& w : want)
        w.erase(id);
      want[set].insert(id);
    }
  }
  size_t total = 0;
  for (uint32_t set = 0; set < 3; ++set) {
    EXPECT_EQ(Members(s, set), want[set]) << set;
    EXPECT_EQ(s.members(set).size(), want[set].size());  // no duplicates
    total += want[set].size();
  }
  EXPECT_EQ(s.size(), total);
}

}  // namespace
}  // namespace tessera
