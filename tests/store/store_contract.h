// The durable store's contract (store/durable_store.h), as typed tests that every
// implementation instantiates with a Kind: how a test gets a store, and what "reopened" (what
// a restart reads) means for it —
//   struct Kind {
//     explicit Kind(const std::string& test);  // the test's name: its own file or database
//     std::unique_ptr<DurableStore> Open();
//     std::unique_ptr<DurableStore> Reopen(std::unique_ptr<DurableStore> old);
//   };
// SQLite, the in-memory store and the fault-injecting one are held to it in
// store_contract_test.cc (unit tests); PostgreSQL, on a real server, in
// e2e/postgres_store_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/durable_store.h"
#include "store/store_testutil.h"

namespace tessera::testing {

inline constexpr Micro kUnit = kMicroPerUnit;  // a unit of the currency

template <typename Kind>
class StoreContract : public ::testing::Test {
 protected:
  StoreContract()
      : kind_(::testing::UnitTest::GetInstance()->current_test_info()->name()),
        store_(kind_.Open()) {}
  DurableStore& store() { return *store_; }
  // Everything written so far made durable, and the store read as a restart reads it.
  void Reopen() {
    ASSERT_TRUE(store_->Flush().get().ok());
    store_ = kind_.Reopen(std::move(store_));
    ASSERT_NE(store_, nullptr);
  }
  StoreSnapshot Snapshot() {
    auto snap = store_->Load();
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    return snap.ok() ? std::move(*snap) : StoreSnapshot{};
  }

 private:
  Kind kind_;
  std::unique_ptr<DurableStore> store_;
};

TYPED_TEST_SUITE_P(StoreContract);

TYPED_TEST_P(StoreContract, WhatIsWrittenIsWhatLoads) {
  DurableStore& store = this->store();
  StoredJob j;
  j.id = 1;
  j.name = "a";
  j.tenant = "t/u";
  j.job_class = "batch";
  j.body = R"({"name":"a"})";
  j.idempotency_key = "k";
  j.principal = "p";
  j.submitted = 1000;
  ASSERT_TRUE(store.InsertJob(j).get().ok());
  j.state = "running";
  j.first_start = 2000;
  j.restarts = 2;
  j.placement = "[]";
  store.UpdateJob(JobUpdate::Of(j));
  ASSERT_TRUE(store.PutPrincipal({"p", "member", "t", 5, ""}).get().ok());
  ASSERT_TRUE(store.PutPrincipal({"a0", "agent", "", 6, "n1"}).get().ok());
  ASSERT_TRUE(store.PutToken({"h", "p", 9000, 5}).get().ok());
  ASSERT_TRUE(store.PutNodeFlags({"n1", true, false}).get().ok());
  store.AppendDecision({0, 2000, "start", 1, "order", "{}"});
  store.AppendDecision({0, 2500, "requeue", 1, "node-lost:n1", ""},
                       {{"n1", "n2"}, "cheapest", "las", "best-fit"});
  store.AppendAudit({0, 1000, "p", "127.0.0.1", "POST", "/v1/jobs", 201, "job 1"});
  store.PutTaskLog(1, 0, 1, "first");
  store.PutTaskLog(1, 0, 1, "hello\nworld\n");  // the later tail replaces the earlier
  this->Reopen();
  DurableStore& again = this->store();
  StoreSnapshot snap = this->Snapshot();
  ASSERT_EQ(snap.jobs.size(), 1u);
  EXPECT_EQ(snap.jobs[0].name, "a");
  EXPECT_EQ(snap.jobs[0].tenant, "t/u");
  EXPECT_EQ(snap.jobs[0].job_class, "batch");
  EXPECT_EQ(snap.jobs[0].body, R"({"name":"a"})");
  EXPECT_EQ(snap.jobs[0].submitted, 1000);
  EXPECT_EQ(snap.jobs[0].state, "running");
  EXPECT_EQ(snap.jobs[0].first_start, 2000);
  EXPECT_FALSE(snap.jobs[0].finished.has_value());
  EXPECT_EQ(snap.jobs[0].restarts, 2);
  EXPECT_EQ(snap.jobs[0].placement, "[]");
  EXPECT_EQ(snap.jobs[0].idempotency_key, "k");
  ASSERT_EQ(snap.principals.size(), 2u);  // by name
  EXPECT_EQ(snap.principals[0].role, "agent");
  EXPECT_EQ(snap.principals[0].node, "n1");
  EXPECT_EQ(snap.principals[1].role, "member");
  EXPECT_EQ(snap.principals[1].node, "");
  ASSERT_EQ(snap.tokens.size(), 1u);
  EXPECT_EQ(snap.tokens[0].expires, 9000);
  ASSERT_EQ(snap.nodes.size(), 1u);
  EXPECT_TRUE(snap.nodes[0].cordoned);
  EXPECT_FALSE(snap.nodes[0].draining);
  EXPECT_EQ(snap.last_seen, 2500);
  auto decisions = again.QueryDecisions(1);
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 2u);
  EXPECT_EQ((*decisions)[0].reason, "order");
  EXPECT_LT((*decisions)[0].seq, (*decisions)[1].seq);
  EXPECT_EQ((*decisions)[1].detail,
            R"({"nodes":["n1","n2"],"where":"cheapest","policy":"las","placement":"best-fit"})");
  auto log = again.QueryTaskLog(1, 0, 1);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(*log, std::optional<std::string>("hello\nworld\n"));
  log = again.QueryTaskLog(1, 1, 1);  // another run
  ASSERT_TRUE(log.ok());
  EXPECT_FALSE(log->has_value());
  auto audit = again.QueryAudit({});
  ASSERT_TRUE(audit.ok());
  ASSERT_EQ(audit->size(), 1u);
  EXPECT_EQ((*audit)[0].status, 201);
  EXPECT_EQ((*audit)[0].detail, "job 1");
}

TYPED_TEST_P(StoreContract, TakenKeysAreRefusedAloneAndChangeNothing) {
  DurableStore& store = this->store();
  StoredJob j = JobNamed(1, "a");
  j.idempotency_key = "k";
  ASSERT_TRUE(store.InsertJob(j).get().ok());
  // The same id; the same principal's key; a token of nobody; a service's name again: each
  // is the write's own fault (Internal), not a store that is down.
  Status same_id = store.InsertJob(JobNamed(1, "b")).get();
  EXPECT_EQ(same_id.code(), StatusCode::kInternal) << same_id.ToString();
  StoredJob same_key = JobNamed(2, "b");
  same_key.idempotency_key = "k";
  EXPECT_EQ(store.InsertJob(same_key).get().code(), StatusCode::kInternal);
  StoredJob other_principal = same_key;  // a key is the principal's own
  other_principal.principal = "q";
  EXPECT_TRUE(store.InsertJob(other_principal).get().ok());
  EXPECT_EQ(store.PutToken({"h", "nobody", std::nullopt, 1}).get().code(), StatusCode::kInternal);
  ASSERT_TRUE(store.InsertService({"s", "t", "{}", "p", 1}).get().ok());
  EXPECT_EQ(store.InsertService({"s", "t", "{}", "p", 2}).get().code(), StatusCode::kInternal);
  EXPECT_FALSE(store.degraded());
  this->Reopen();
  StoreSnapshot snap = this->Snapshot();
  ASSERT_EQ(snap.jobs.size(), 2u);
  EXPECT_EQ(snap.jobs[0].name, "a");
  EXPECT_EQ(snap.jobs[1].principal, "q");
  EXPECT_TRUE(snap.tokens.empty());
  ASSERT_EQ(snap.services.size(), 1u);
  EXPECT_EQ(snap.services[0].created, 1);
}

TYPED_TEST_P(StoreContract, ServicesAreStoredAndDeleted) {
  DurableStore& store = this->store();
  ASSERT_TRUE(store.InsertService({"b", "t/u", R"({"name":"b"})", "alice", 7}).get().ok());
  ASSERT_TRUE(store.InsertService({"a", "t", R"({"name":"a"})", "bob", 8}).get().ok());
  ASSERT_TRUE(store.DeleteService("b").get().ok());
  this->Reopen();
  StoreSnapshot snap = this->Snapshot();
  ASSERT_EQ(snap.services.size(), 1u);
  EXPECT_EQ(snap.services[0].name, "a");
  EXPECT_EQ(snap.services[0].tenant, "t");
  EXPECT_EQ(snap.services[0].body, R"({"name":"a"})");
  EXPECT_EQ(snap.services[0].principal, "bob");
  EXPECT_EQ(snap.services[0].created, 8);
}

TYPED_TEST_P(StoreContract, APrincipalIsReplacedKeepingItsCreationAndDeletedWithItsTokens) {
  DurableStore& store = this->store();
  ASSERT_TRUE(store.PutPrincipal({"p", "member", "t", 5, ""}).get().ok());
  ASSERT_TRUE(store.PutPrincipal({"q", "viewer", "t", 6, ""}).get().ok());
  ASSERT_TRUE(store.PutPrincipal({"p", "operator", "", 50, ""}).get().ok());
  ASSERT_TRUE(store.PutToken({"h1", "p", std::nullopt, 7}).get().ok());
  ASSERT_TRUE(store.PutToken({"h2", "p", 100, 8}).get().ok());
  ASSERT_TRUE(store.PutToken({"h3", "q", std::nullopt, 9}).get().ok());
  StoreSnapshot snap = this->Snapshot();
  ASSERT_EQ(snap.principals.size(), 2u);
  EXPECT_EQ(snap.principals[0].role, "operator");
  EXPECT_EQ(snap.principals[0].tenant, "");
  EXPECT_EQ(snap.principals[0].created, 5);
  EXPECT_EQ(snap.tokens.size(), 3u);
  ASSERT_TRUE(store.DeleteTokens("q").get().ok());
  ASSERT_TRUE(store.DeletePrincipal("p").get().ok());
  this->Reopen();
  snap = this->Snapshot();
  ASSERT_EQ(snap.principals.size(), 1u);
  EXPECT_EQ(snap.principals[0].name, "q");
  EXPECT_TRUE(snap.tokens.empty());
}

AuditQuery Audit(std::optional<TimeMs> since, std::string principal, int64_t after, int limit) {
  AuditQuery q;
  q.since = since;
  q.principal = std::move(principal);
  q.after = after;
  q.limit = limit;
  return q;
}

DecisionQuery Decisions(std::optional<TimeMs> since, std::string kind, int64_t after, int limit) {
  DecisionQuery q;
  q.since = since;
  q.kind = std::move(kind);
  q.after = after;
  q.limit = limit;
  return q;
}

TYPED_TEST_P(StoreContract, TheAuditLogIsReadNewestFirstByCursorAndFilter) {
  DurableStore& store = this->store();
  for (int i = 1; i <= 5; ++i) {
    store.AppendAudit({0, i * 1000, i % 2 == 0 ? "bob" : "alice", "r", "POST", "/v1/jobs", 201,
                       "n" + std::to_string(i)});
  }
  ASSERT_TRUE(store.Flush().get().ok());
  auto page = store.QueryAudit(Audit(std::nullopt, "", 0, 2));
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].detail, "n5");
  EXPECT_EQ((*page)[1].detail, "n4");
  auto next = store.QueryAudit(Audit(std::nullopt, "", page->back().seq, 2));
  ASSERT_TRUE(next.ok());
  ASSERT_EQ(next->size(), 2u);
  EXPECT_EQ((*next)[0].detail, "n3");
  auto alice = store.QueryAudit(Audit(2000, "alice", 0, 100));
  ASSERT_TRUE(alice.ok());
  ASSERT_EQ(alice->size(), 2u);
  EXPECT_EQ((*alice)[0].detail, "n5");
  EXPECT_EQ((*alice)[1].detail, "n3");
  auto count = store.CountAudit(Audit(2000, "alice", 0, 1));
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 2);
  count = store.CountAudit({});
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 5);
}

TYPED_TEST_P(StoreContract, TheDecisionLogIsReadInOrderByCursorKindAndTime) {
  DurableStore& store = this->store();
  const char* kinds[] = {"start", "finish", "start", "preempt", "start"};
  for (int i = 0; i < 5; ++i)
    store.AppendDecision({0, (i + 1) * 100, kinds[i], i % 2 + 1, "r" + std::to_string(i), "{}"});
  ASSERT_TRUE(store.Flush().get().ok());
  auto all = store.QueryDecisionLog(Decisions(std::nullopt, "", 0, 3));
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].reason, "r0");
  EXPECT_EQ((*all)[2].reason, "r2");
  auto rest = store.QueryDecisionLog(Decisions(std::nullopt, "", all->back().seq, 100));
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 2u);
  EXPECT_EQ((*rest)[0].reason, "r3");
  auto starts = store.QueryDecisionLog(Decisions(200, "start", 0, 100));
  ASSERT_TRUE(starts.ok());
  ASSERT_EQ(starts->size(), 2u);
  EXPECT_EQ((*starts)[0].time, 300);
  EXPECT_EQ((*starts)[1].time, 500);
  auto of_two = store.QueryDecisions(2);
  ASSERT_TRUE(of_two.ok());
  ASSERT_EQ(of_two->size(), 2u);
  EXPECT_EQ((*of_two)[0].kind, "finish");
  EXPECT_EQ((*of_two)[1].kind, "preempt");
}

TYPED_TEST_P(StoreContract, CostsAreClippedToThePeriodAndOpenRowsRunUntilNow) {
  DurableStore& store = this->store();
  const TimeMs hour = 3600 * 1000;
  store.InsertCost({1, 1, "t", "east", "a100", 0, std::nullopt, 4 * kUnit});     // two hours
  store.InsertCost({2, 2, "t", "east", "a100", hour, std::nullopt, 2 * kUnit});  // open
  store.InsertCost({3, 3, "u", "west", "cpu", 5 * hour, std::nullopt, kUnit});   // after it
  store.EndCost(1, 2 * hour);
  store.EndCost(3, 6 * hour);
  ASSERT_TRUE(store.Flush().get().ok());
  // [hour/2, 3 hours) with now at 2 hours: 1.5 h of row 1, 1 h of row 2.
  auto costs = store.QueryCosts(hour / 2, 3 * hour, 2 * hour);
  ASSERT_TRUE(costs.ok());
  ASSERT_EQ(costs->size(), 1u);
  EXPECT_EQ((*costs)[0].tenant, "t");
  EXPECT_EQ((*costs)[0].cluster, "east");
  EXPECT_EQ((*costs)[0].model, "a100");
  EXPECT_EQ((*costs)[0].amount, 4 * kUnit * 3 / 2 + 2 * kUnit);
  // A restart closes the open row where the previous process was last seen.
  store.EndOpenCosts(hour + hour / 2);
  ASSERT_TRUE(store.Flush().get().ok());
  costs = store.QueryCosts(0, 10 * hour, 10 * hour);
  ASSERT_TRUE(costs.ok());
  ASSERT_EQ(costs->size(), 2u);  // by tenant, cluster, model
  EXPECT_EQ((*costs)[0].tenant, "t");
  EXPECT_EQ((*costs)[0].amount, 4 * kUnit * 2 + 2 * kUnit / 2);
  EXPECT_EQ((*costs)[1].tenant, "u");
  EXPECT_EQ((*costs)[1].amount, kUnit);
  this->Reopen();
  EXPECT_EQ(this->Snapshot().last_cost, 3);
}

TYPED_TEST_P(StoreContract, ResumedRunsWriteTheirRowsDecisionsAndCostsAtOnce) {
  DurableStore& store = this->store();
  for (int64_t id : {1, 2, 3}) {
    StoredJob j = JobNamed(id, "r" + std::to_string(id));
    j.tenant = "org/dept/project";
    ASSERT_TRUE(store.InsertJob(j).get().ok());
    j.state = "running";
    j.detail = "where it runs";
    j.placement = R"([{"node":"n2"}])";
    j.first_start = 1000;
    j.run_start = 1000;
    store.UpdateJob(JobUpdate::Of(j));
  }
  ResumedRuns r;
  r.node_names = {"n0", "n1", "n2"};
  r.clusters = {"east", "west"};
  r.models = {"a100"};
  ResumedRuns::Run& one = r.runs.emplace_back();
  one.job = 1;
  one.time = 9000;
  one.first_start = 1000;
  one.kept_ms = 4000;
  one.decided = true;
  one.reason = "adopted";
  one.nodes = {2, 0};
  one.costs = {{7, 1, 0, 5 * kUnit / 2}, {8, 0, -1, kUnit / 4}};
  ResumedRuns::Run& two = r.runs.emplace_back();  // no first start stored: it starts now
  two.job = 2;
  two.time = 9001;
  two.decided = true;
  two.reason = "adopted";
  ResumedRuns::Run& three = r.runs.emplace_back();  // its decision was written on its own
  three.job = 3;
  three.time = 9002;
  three.kept_ms = 5;
  store.ResumeRuns(std::move(r));
  this->Reopen();
  DurableStore& again = this->store();
  StoreSnapshot snap = this->Snapshot();
  ASSERT_EQ(snap.jobs.size(), 3u);
  const StoredJob& first = snap.jobs[0];
  EXPECT_EQ(first.state, "running");
  EXPECT_EQ(first.run_start, 9000);
  EXPECT_EQ(first.kept_ms, 4000);
  EXPECT_EQ(first.first_start, 1000);
  EXPECT_EQ(first.detail, "where it runs");  // the text is as stored
  EXPECT_EQ(first.placement, R"([{"node":"n2"}])");
  EXPECT_EQ(snap.jobs[1].run_start, 9001);
  EXPECT_FALSE(snap.jobs[1].first_start.has_value());
  EXPECT_EQ(snap.last_cost, 8);
  auto decisions = again.QueryDecisions(1);
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 1u);
  EXPECT_EQ((*decisions)[0].kind, "start");
  EXPECT_EQ((*decisions)[0].reason, "adopted");
  EXPECT_EQ((*decisions)[0].time, 9000);
  EXPECT_EQ((*decisions)[0].detail, R"({"nodes":["n2","n0"]})");
  decisions = again.QueryDecisions(2);
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 1u);
  EXPECT_EQ((*decisions)[0].detail, "{}");
  EXPECT_EQ(snap.jobs[2].run_start, 9002);
  EXPECT_EQ(snap.jobs[2].kept_ms, 5);
  decisions = again.QueryDecisions(3);
  ASSERT_TRUE(decisions.ok());
  EXPECT_TRUE(decisions->empty());
  // An hour of both cost rows, open until "now", under the job's tenant.
  auto costs = again.QueryCosts(0, 9000 + 3600 * 1000, 9000 + 3600 * 1000);
  ASSERT_TRUE(costs.ok());
  ASSERT_EQ(costs->size(), 2u);
  std::map<std::string, Micro> by_model;
  for (const CostTotal& c : *costs) {
    EXPECT_EQ(c.tenant, "org/dept/project");
    by_model[c.cluster + "/" + c.model] = c.amount;
  }
  EXPECT_EQ(by_model["west/a100"], 5 * kUnit / 2);
  EXPECT_EQ(by_model["east/cpu"], kUnit / 4);
}

TYPED_TEST_P(StoreContract, TheActiveJobsResolvedFormsAreReadByIdRangeAndLoadLeavesThemOut) {
  DurableStore& store = this->store();
  auto last = store.LastJobId();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, 0);
  const char* states[] = {"pending", "running", "succeeded", "placed", "cancelled", "failed"};
  for (int64_t id = 1; id <= 6; ++id) {
    StoredJob j = JobNamed(id, "j" + std::to_string(id));
    j.resolved = "resolved " + std::to_string(id);
    ASSERT_TRUE(store.InsertJob(j).get().ok());
    j.state = states[id - 1];
    j.placement = "placement " + std::to_string(id);
    store.UpdateJob(JobUpdate::Of(j));
  }
  ASSERT_TRUE(store.Flush().get().ok());
  last = store.LastJobId();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, 6);
  auto reader = store.OpenActiveJobReader();
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::vector<std::string> rows;
  auto add = [&](int64_t id, std::string_view state, std::string_view resolved,
                 std::string_view placement) {
    rows.push_back(std::to_string(id) + " " + std::string(state) + " " + std::string(resolved) +
                   " " + std::string(placement));
  };
  Status s = (*reader)->Read(2, 6, add);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(rows, (std::vector<std::string>{"2 running resolved 2 placement 2",
                                            "4 placed resolved 4 placement 4"}));
  // A reader reads chunk after chunk; a second one beside it reads the same.
  auto beside = store.OpenActiveJobReader();
  ASSERT_TRUE(beside.ok()) << beside.status().ToString();
  rows.clear();
  ASSERT_TRUE((*reader)->Read(1, 1, add).ok());
  ASSERT_TRUE((*beside)->Read(3, 4, add).ok());
  ASSERT_TRUE((*reader)->Read(5, 6, add).ok());
  EXPECT_EQ(rows, (std::vector<std::string>{"1 pending resolved 1 placement 1",
                                            "4 placed resolved 4 placement 4"}));
  StoreSnapshot snap = this->Snapshot();
  ASSERT_EQ(snap.jobs.size(), 6u);
  EXPECT_EQ(snap.jobs[1].resolved, "");
  EXPECT_EQ(snap.jobs[1].placement, "placement 2");
}

TYPED_TEST_P(StoreContract, TheLastMomentSeenAliveIsTheLatestMarkOrRecord) {
  DurableStore& store = this->store();
  store.AppendAudit({0, 5000, "p", "r", "POST", "/v1/jobs", 201, ""});
  store.Alive(9000);
  store.Alive(12000);
  store.AppendDecision({0, 11000, "start", 1, "order", "{}"});
  this->Reopen();
  EXPECT_EQ(this->Snapshot().last_seen, 12000);
  StoredJob late = JobNamed(1, "late");
  late.submitted = 15000;
  ASSERT_TRUE(this->store().InsertJob(late).get().ok());
  EXPECT_EQ(this->Snapshot().last_seen, 15000);
}

TYPED_TEST_P(StoreContract, EveryWriteThatTookIsCounted) {
  DurableStore& store = this->store();
  const uint64_t before = store.committed_writes();
  ASSERT_TRUE(store.InsertJob(JobNamed(1, "a")).get().ok());
  store.AppendDecision({0, 1, "start", 1, "", "{}"});
  ASSERT_TRUE(store.Flush().get().ok());
  EXPECT_GE(store.committed_writes(), before + 2);
  EXPECT_GE(store.batches(), 1u);
  EXPECT_LE(store.batches(), store.committed_writes());
}

REGISTER_TYPED_TEST_SUITE_P(StoreContract, WhatIsWrittenIsWhatLoads,
                            TakenKeysAreRefusedAloneAndChangeNothing, ServicesAreStoredAndDeleted,
                            APrincipalIsReplacedKeepingItsCreationAndDeletedWithItsTokens,
                            TheAuditLogIsReadNewestFirstByCursorAndFilter,
                            TheDecisionLogIsReadInOrderByCursorKindAndTime,
                            CostsAreClippedToThePeriodAndOpenRowsRunUntilNow,
                            ResumedRunsWriteTheirRowsDecisionsAndCostsAtOnce,
                            TheActiveJobsResolvedFormsAreReadByIdRangeAndLoadLeavesThemOut,
                            TheLastMomentSeenAliveIsTheLatestMarkOrRecord,
                            EveryWriteThatTookIsCounted);

}  // namespace tessera::testing
