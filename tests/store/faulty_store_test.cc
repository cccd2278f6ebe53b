// The fault-injecting store: between Fail and Heal it fails as a store on a full disk does.
#include "store/faulty_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "store/memory_store.h"

namespace tessera {
namespace {

StoredJob Job(int64_t id) {
  StoredJob j;
  j.id = id;
  j.name = "j" + std::to_string(id);
  j.tenant = "t";
  j.body = "{}";
  j.principal = "p";
  return j;
}

TEST(FaultyStore, WhileFailingWaitedWritesFailAndTheRecordIsKeptUntilItHeals) {
  FaultyStore store(std::make_unique<InMemoryStore>());
  std::vector<std::pair<bool, std::string>> told;
  store.SetHealthLog([&](bool degraded, const std::string& m) { told.push_back({degraded, m}); });
  ASSERT_TRUE(store.InsertJob(Job(1)).get().ok());

  store.Fail("disk full");
  EXPECT_TRUE(store.degraded());
  JobUpdate running = JobUpdate::Of(Job(1));
  running.state = "running";
  store.UpdateJob(running);  // nobody waits: kept
  store.AppendDecision({0, 5, "start", 1, "order", "{}"});
  Status insert = store.InsertJob(Job(2)).get();
  EXPECT_EQ(insert.code(), StatusCode::kUnavailable) << insert.ToString();
  EXPECT_EQ(insert.message(), "store faulty: disk full");
  EXPECT_EQ(store.PutNodeFlags({"n1", true, false}).get().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(store.Flush().get().ok());
  EXPECT_EQ(store.kept(), 2u);
  // Reads answer what the store holds: nothing of the failed or kept writes.
  auto snap = store.Load();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->jobs.size(), 1u);
  EXPECT_EQ(snap->jobs[0].state, "pending");
  EXPECT_TRUE(snap->nodes.empty());

  store.Fail("disk full");  // told once, not at every failure
  store.Heal();
  EXPECT_FALSE(store.degraded());
  EXPECT_EQ(store.kept(), 0u);
  ASSERT_TRUE(store.Flush().get().ok());
  snap = store.Load();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->jobs.size(), 1u);
  EXPECT_EQ(snap->jobs[0].state, "running");
  auto decisions = store.QueryDecisions(1);
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 1u);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_TRUE(told[0].first);
  EXPECT_EQ(told[0].second, "store faulty: disk full");
  EXPECT_FALSE(told[1].first);
  store.SetHealthLog(nullptr);
}

TEST(FaultyStore, WritesKeptWhileFailingArriveBeforeLaterOnesInOrder) {
  FaultyStore store(std::make_unique<InMemoryStore>());
  store.Fail("io");
  for (int i = 1; i <= 3; ++i)
    store.AppendDecision({0, i, "start", 1, "kept " + std::to_string(i), "{}"});
  store.Heal();
  store.AppendDecision({0, 4, "finish", 1, "after", "{}"});
  auto log = store.QueryDecisions(1);
  ASSERT_TRUE(log.ok());
  std::vector<std::string> reasons;
  for (const StoredDecision& d : *log)
    reasons.push_back(d.reason);
  EXPECT_EQ(reasons, (std::vector<std::string>{"kept 1", "kept 2", "kept 3", "after"}));
}

TEST(FaultyStore, WhatIsStillKeptWhenItIsDestroyedIsLostAndSaidSo) {
  std::vector<std::string> told;
  {
    FaultyStore store(std::make_unique<InMemoryStore>());
    store.SetHealthLog([&](bool, const std::string& m) { told.push_back(m); });
    store.Fail("gone");
    store.Alive(5);
    store.Alive(6);
  }
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[1], "store faulty: gone; shutting down, 2 writes were not stored");
}

TEST(InMemoryStore, APostedWriteWrongInItselfIsLostAndSaidSo) {
  InMemoryStore store;
  std::vector<std::pair<bool, std::string>> told;
  store.SetHealthLog([&](bool degraded, const std::string& m) { told.push_back({degraded, m}); });
  store.InsertCost({1, 1, "t", "c", "m", 0, std::nullopt, kMicroPerUnit});
  store.InsertCost({1, 2, "t", "c", "m", 0, std::nullopt, kMicroPerUnit});  // the same id
  ASSERT_EQ(told.size(), 1u);
  EXPECT_TRUE(told[0].first);
  EXPECT_EQ(told[0].second, "store memory: cost row 1 exists; a write was dropped");
  EXPECT_FALSE(store.degraded());
  EXPECT_EQ(store.committed_writes(), 1u);
  store.SetHealthLog(nullptr);
}

}  // namespace
}  // namespace tessera
