// The SQLite store on a real file: schema versions, round trips, and group commit.
#include "store/sqlite_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "store/schema.h"

namespace tessera {
namespace {

std::string FreshFile(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tessera-store-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return (dir / "t.db").string();
}

StoredJob JobNamed(int64_t id, const std::string& name) {
  StoredJob j;
  j.id = id;
  j.name = name;
  j.tenant = "t";
  j.body = "{}";
  j.principal = "p";
  return j;
}

// The file opened afresh, and what it holds.
Result<StoreSnapshot> Reopened(const std::string& path) {
  auto store = SqliteStore::Open(path);
  if (!store.ok()) return store.status();
  return (*store)->Load();
}

TEST(SqliteStore, ANewFileGetsTheCurrentSchemaAndReopensUnchanged) {
  std::string path = FreshFile("schema");
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
  }
  auto db = Sqlite::Open(path);
  ASSERT_TRUE(db.ok());
  auto v = SchemaVersion(**db);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, CurrentSchemaVersion());
  ASSERT_TRUE(MigrateSchema(**db).ok());  // nothing left to do
  EXPECT_EQ(*SchemaVersion(**db), CurrentSchemaVersion());
}

TEST(SqliteStore, AStoreFromANewerTesseraIsRefused) {
  std::string path = FreshFile("newer");
  {
    auto db = Sqlite::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(MigrateSchema(**db).ok());
    ASSERT_TRUE((*db)->Exec("UPDATE meta SET value = '999' WHERE key = 'schema_version'").ok());
  }
  auto store = SqliteStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("newer than this tessera"), std::string::npos)
      << store.status().message();
}

TEST(SqliteStore, AVersionOneStoreIsMigratedKeepingItsJobs) {
  std::string path = FreshFile("v1");
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok());
    StoredJob j;
    j.id = 1;
    j.name = "kept";
    j.tenant = "t";
    j.job_class = "batch";
    j.principal = "admin";
    ASSERT_TRUE((*store)->PutPrincipal({"admin", "admin", "", 1, ""}).get().ok());
    ASSERT_TRUE((*store)->InsertJob(j).get().ok());
  }
  {
    // What a store written by the first release looks like: no services table, principals
    // bound to no node, no task logs, version 1.
    auto db = Sqlite::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("DROP TABLE services; ALTER TABLE principals DROP COLUMN node; "
                           "DROP TABLE task_logs; "
                           "UPDATE meta SET value = '1' WHERE key = 'schema_version'")
                    .ok());
  }
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->InsertService({"chat", "t", "{}", "admin", 5}).get().ok());
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->jobs.size(), 1u);
  EXPECT_EQ(snap->jobs[0].name, "kept");
  ASSERT_EQ(snap->services.size(), 1u);
  EXPECT_EQ(snap->services[0].created, 5);
  ASSERT_EQ(snap->principals.size(), 1u);
  EXPECT_EQ(snap->principals[0].name, "admin");
  EXPECT_EQ(snap->principals[0].node, "");
  EXPECT_EQ(CurrentSchemaVersion(), 4);
}

TEST(SqliteStore, ServicesAreStoredAndDeleted) {
  std::string path = FreshFile("services");
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->InsertService({"b", "t/u", R"({"name":"b"})", "alice", 7}).get().ok());
    ASSERT_TRUE((*store)->InsertService({"a", "t", R"({"name":"a"})", "bob", 8}).get().ok());
    // A name is one service: a second insert fails and writes nothing.
    EXPECT_FALSE((*store)->InsertService({"a", "t", "{}", "bob", 9}).get().ok());
    ASSERT_TRUE((*store)->DeleteService("b").get().ok());
  }
  auto snap = Reopened(path);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_EQ(snap->services.size(), 1u);
  EXPECT_EQ(snap->services[0].name, "a");
  EXPECT_EQ(snap->services[0].tenant, "t");
  EXPECT_EQ(snap->services[0].body, R"({"name":"a"})");
  EXPECT_EQ(snap->services[0].principal, "bob");
  EXPECT_EQ(snap->services[0].created, 8);
}

TEST(SqliteStore, WhatIsWrittenIsWhatLoads) {
  std::string path = FreshFile("roundtrip");
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok());
    StoredJob j;
    j.id = 1;
    j.name = "a";
    j.tenant = "t/u";
    j.body = R"({"name":"a"})";
    j.idempotency_key = "k";
    j.principal = "p";
    j.submitted = 1000;
    ASSERT_TRUE((*store)->InsertJob(j).get().ok());
    j.state = "running";
    j.first_start = 2000;
    j.restarts = 2;
    j.placement = "[]";
    (*store)->UpdateJob(JobUpdate::Of(j));
    (*store)->PutPrincipal({"p", "member", "t", 5, ""});
    (*store)->PutPrincipal({"a0", "agent", "", 6, "n1"});
    (*store)->PutToken({"h", "p", 9000, 5});
    (*store)->PutNodeFlags({"n1", true, false});
    (*store)->AppendDecision({0, 2000, "start", 1, "order", "{}"});
    (*store)->AppendAudit({0, 1000, "p", "127.0.0.1", "POST", "/v1/jobs", 201, "job 1"});
    (*store)->PutTaskLog(1, 0, 1, "first");
    (*store)->PutTaskLog(1, 0, 1, "hello\nworld\n");  // the later tail replaces the earlier
    ASSERT_TRUE((*store)->Flush().get().ok());
  }
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->jobs.size(), 1u);
  EXPECT_EQ(snap->jobs[0].state, "running");
  EXPECT_EQ(snap->jobs[0].first_start, 2000);
  EXPECT_FALSE(snap->jobs[0].finished.has_value());
  EXPECT_EQ(snap->jobs[0].restarts, 2);
  EXPECT_EQ(snap->jobs[0].idempotency_key, "k");
  ASSERT_EQ(snap->principals.size(), 2u);  // by name
  EXPECT_EQ(snap->principals[0].role, "agent");
  EXPECT_EQ(snap->principals[0].node, "n1");
  EXPECT_EQ(snap->principals[1].role, "member");
  EXPECT_EQ(snap->principals[1].node, "");
  ASSERT_EQ(snap->tokens.size(), 1u);
  EXPECT_EQ(snap->tokens[0].expires, 9000);
  ASSERT_EQ(snap->nodes.size(), 1u);
  EXPECT_TRUE(snap->nodes[0].cordoned);
  auto decisions = (*store)->QueryDecisions(1);
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 1u);
  EXPECT_EQ((*decisions)[0].reason, "order");
  auto log = (*store)->QueryTaskLog(1, 0, 1);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(*log, std::optional<std::string>("hello\nworld\n"));
  log = (*store)->QueryTaskLog(1, 1, 1);  // another run
  ASSERT_TRUE(log.ok());
  EXPECT_FALSE(log->has_value());
  auto audit = (*store)->QueryAudit({});
  ASSERT_TRUE(audit.ok());
  ASSERT_EQ(audit->size(), 1u);
  EXPECT_EQ((*audit)[0].status, 201);
}

TEST(SqliteStore, ResumedRunsWriteTheirRowsDecisionsAndCostsInOneBatch) {
  std::string path = FreshFile("resumed");
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok());
    for (int64_t id : {1, 2, 3}) {
      StoredJob j = JobNamed(id, "r" + std::to_string(id));
      j.tenant = "org/dept/project";
      ASSERT_TRUE((*store)->InsertJob(j).get().ok());
      j.state = "running";
      j.detail = "where it runs";
      j.placement = R"([{"node":"n2"}])";
      j.first_start = 1000;
      j.run_start = 1000;
      (*store)->UpdateJob(JobUpdate::Of(j));
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
    one.costs = {{7, 1, 0, 2.5}, {8, 0, -1, 0.25}};
    ResumedRuns::Run& two = r.runs.emplace_back();  // no first start stored: it starts now
    two.job = 2;
    two.time = 9001;
    two.decided = true;
    two.reason = "adopted";
    ResumedRuns::Run& three = r.runs.emplace_back();  // its decision was written on its own
    three.job = 3;
    three.time = 9002;
    three.kept_ms = 5;
    (*store)->ResumeRuns(std::move(r));
    ASSERT_TRUE((*store)->Flush().get().ok());
  }
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->jobs.size(), 3u);
  const StoredJob& one = snap->jobs[0];
  EXPECT_EQ(one.state, "running");
  EXPECT_EQ(one.run_start, 9000);
  EXPECT_EQ(one.kept_ms, 4000);
  EXPECT_EQ(one.first_start, 1000);
  EXPECT_EQ(one.detail, "where it runs");  // the text is as stored
  EXPECT_EQ(one.placement, R"([{"node":"n2"}])");
  EXPECT_EQ(snap->jobs[1].run_start, 9001);
  EXPECT_FALSE(snap->jobs[1].first_start.has_value());
  EXPECT_EQ(snap->last_cost, 8);
  auto decisions = (*store)->QueryDecisions(1);
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 1u);
  EXPECT_EQ((*decisions)[0].kind, "start");
  EXPECT_EQ((*decisions)[0].reason, "adopted");
  EXPECT_EQ((*decisions)[0].time, 9000);
  EXPECT_EQ((*decisions)[0].detail, R"({"nodes":["n2","n0"]})");
  decisions = (*store)->QueryDecisions(2);
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 1u);
  EXPECT_EQ((*decisions)[0].detail, "{}");
  EXPECT_EQ(snap->jobs[2].run_start, 9002);
  EXPECT_EQ(snap->jobs[2].kept_ms, 5);
  decisions = (*store)->QueryDecisions(3);
  ASSERT_TRUE(decisions.ok());
  EXPECT_TRUE(decisions->empty());
  // An hour of both cost rows, open until "now", under the job's tenant.
  auto costs = (*store)->QueryCosts(0, 9000 + 3600 * 1000, 9000 + 3600 * 1000);
  ASSERT_TRUE(costs.ok());
  ASSERT_EQ(costs->size(), 2u);
  std::map<std::string, double> by_model;
  for (const CostTotal& c : *costs) {
    EXPECT_EQ(c.tenant, "org/dept/project");
    by_model[c.cluster + "/" + c.model] = c.amount;
  }
  EXPECT_DOUBLE_EQ(by_model["west/a100"], 2.5);
  EXPECT_DOUBLE_EQ(by_model["east/cpu"], 0.25);
}

TEST(SqliteStore, TheActiveJobsResolvedFormsAreReadByIdRangeAndLoadLeavesThemOut) {
  std::string path = FreshFile("active");
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto last = (*store)->LastJobId();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, 0);
  const char* states[] = {"pending", "running", "succeeded", "placed", "cancelled", "failed"};
  for (int64_t id = 1; id <= 6; ++id) {
    StoredJob j = JobNamed(id, "j" + std::to_string(id));
    j.resolved = "resolved " + std::to_string(id);
    ASSERT_TRUE((*store)->InsertJob(j).get().ok());
    j.state = states[id - 1];
    j.placement = "placement " + std::to_string(id);
    (*store)->UpdateJob(JobUpdate::Of(j));
  }
  ASSERT_TRUE((*store)->Flush().get().ok());
  last = (*store)->LastJobId();
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, 6);
  std::vector<std::string> rows;
  Status s = (*store)->ReadActiveJobs(
      2, 6,
      [&](int64_t id, std::string_view state, std::string_view resolved,
          std::string_view placement) {
        rows.push_back(std::to_string(id) + " " + std::string(state) + " " + std::string(resolved) +
                       " " + std::string(placement));
      });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(rows, (std::vector<std::string>{"2 running resolved 2 placement 2",
                                            "4 placed resolved 4 placement 4"}));
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->jobs.size(), 6u);
  EXPECT_EQ(snap->jobs[1].resolved, "");
  EXPECT_EQ(snap->jobs[1].placement, "placement 2");
}

TEST(SqliteStore, ConcurrentInsertsShareCommits) {
  std::string path = FreshFile("group");
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok());
  std::vector<std::shared_future<Status>> done;
  for (int i = 1; i <= 500; ++i)
    done.push_back((*store)->InsertJob(JobNamed(i, "j" + std::to_string(i))));
  for (auto& f : done)
    EXPECT_TRUE(f.get().ok());
  EXPECT_EQ((*store)->committed_writes(), 500u);
  EXPECT_LT((*store)->batches(), 500u);
}

// An hour's wait for company: a test that passes cannot have waited it out.
constexpr std::chrono::hours kHour{1};

TEST(SqliteStore, WritesNobodyWaitsForAreCommittedWithTheNextOneThatIsWaitedFor) {
  std::string path = FreshFile("company");
  auto store = SqliteStore::Open(path, {.background_delay = kHour});
  ASSERT_TRUE(store.ok());
  JobUpdate u;
  u.id = 7;
  u.state = "running";
  (*store)->UpdateJob(u);  // waits for company (an hour at most)...
  (*store)->AppendDecision({0, 1, "start", 7, "order", "{}"});
  // ... which a submission brings: the three share one commit.
  ASSERT_TRUE((*store)->InsertJob(JobNamed(1, "a")).get().ok());
  EXPECT_EQ((*store)->committed_writes(), 3u);
  EXPECT_EQ((*store)->batches(), 1u);
}

TEST(SqliteStore, ClosingTheStoreCommitsTheWritesThatWait) {
  std::string path = FreshFile("close");
  {
    auto store = SqliteStore::Open(path, {.background_delay = kHour});
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->InsertJob(JobNamed(1, "a")).get().ok());
    JobUpdate u = JobUpdate::Of(JobNamed(1, "a"));
    u.state = "running";
    (*store)->UpdateJob(u);  // waits for company; nothing comes
    EXPECT_EQ((*store)->committed_writes(), 1u);
  }  // closing commits it
  auto snap = Reopened(path);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_EQ(snap->jobs.size(), 1u);
  EXPECT_EQ(snap->jobs[0].state, "running");
}

TEST(SqliteStore, AWriteWrongInItselfFailsAloneAndTheStoreStaysHealthy) {
  std::string path = FreshFile("fail");
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok());
  StoredJob j = JobNamed(1, "a");
  ASSERT_TRUE((*store)->InsertJob(j).get().ok());
  std::vector<std::pair<bool, std::string>> told;
  (*store)->SetHealthLog([&](bool degraded, const std::string& message) {
    told.push_back({degraded, message});
  });
  // The same id again violates the primary key: that write fails (Internal, not a store that
  // is down), and what shares its batch is written.
  JobUpdate running = JobUpdate::Of(j);
  running.state = "running";
  (*store)->UpdateJob(running);
  Status again = (*store)->InsertJob(j).get();
  EXPECT_EQ(again.code(), StatusCode::kInternal) << again.ToString();
  ASSERT_TRUE((*store)->InsertJob(JobNamed(2, "b")).get().ok());
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->jobs.size(), 2u);
  EXPECT_EQ(snap->jobs[0].state, "running");
  EXPECT_FALSE((*store)->degraded());
  EXPECT_TRUE(told.empty());  // the caller was told; the store is fine
  (*store)->SetHealthLog(nullptr);
}

// Another connection holds the file's write lock: the store fails as a full or broken disk
// does (Unavailable), and comes back when the lock is released.
class Locker {
 public:
  explicit Locker(const std::string& path) {
    auto db = Sqlite::Open(path);
    EXPECT_TRUE(db.ok());
    db_ = std::move(*db);
    EXPECT_TRUE(db_->Exec("BEGIN IMMEDIATE").ok());
  }
  void Release() { EXPECT_TRUE(db_->Exec("COMMIT").ok()); }

 private:
  std::unique_ptr<Sqlite> db_;
};

TEST(SqliteStore, WhileTheStoreFailsWaitedWritesFailAndTheEngineRecordIsKeptUntilItIsTaken) {
  std::string path = FreshFile("keep");
  StoreOptions options;
  options.busy_timeout = std::chrono::milliseconds(20);
  auto store = SqliteStore::Open(path, options);
  ASSERT_TRUE(store.ok());
  std::vector<std::pair<bool, std::string>> told;
  std::mutex told_mu;
  (*store)->SetHealthLog([&](bool degraded, const std::string& message) {
    std::lock_guard<std::mutex> lock(told_mu);
    told.push_back({degraded, message});
  });
  StoredJob j = JobNamed(1, "a");
  ASSERT_TRUE((*store)->InsertJob(j).get().ok());

  Locker locker(path);
  // The engine's record of the job: nobody waits for it.
  JobUpdate running = JobUpdate::Of(j);
  running.state = "running";
  (*store)->UpdateJob(running);
  (*store)->AppendDecision({0, 5, "start", 1, "", ""});
  // A caller who waits is told the store failed (and its write is not kept).
  Status cordon = (*store)->PutNodeFlags({"n1", true, false}).get();
  EXPECT_EQ(cordon.code(), StatusCode::kUnavailable) << cordon.ToString();
  EXPECT_NE(cordon.message().find("locked"), std::string::npos) << cordon.ToString();
  EXPECT_TRUE((*store)->degraded());
  EXPECT_FALSE((*store)->Flush().get().ok());

  locker.Release();
  // Retried until taken, in order, before what comes after them.
  ASSERT_TRUE((*store)->Flush().get().ok());
  EXPECT_FALSE((*store)->degraded());
  auto snap = (*store)->Load();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->jobs.size(), 1u);
  EXPECT_EQ(snap->jobs[0].state, "running");
  EXPECT_TRUE(snap->nodes.empty());
  auto decisions = (*store)->QueryDecisions(1);
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 1u);
  EXPECT_EQ((*decisions)[0].kind, "start");
  // Told once each way: failing (naming the file), then succeeding again.
  (*store)->SetHealthLog(nullptr);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_TRUE(told[0].first);
  EXPECT_NE(told[0].second.find(path), std::string::npos) << told[0].second;
  EXPECT_FALSE(told[1].first);
}

TEST(SqliteStore, WhatIsStillKeptWhenTheStoreCloseIsLostAndSaidSo) {
  std::string path = FreshFile("lost");
  StoreOptions options;
  options.busy_timeout = std::chrono::milliseconds(20);
  std::vector<std::string> told;
  std::mutex told_mu;
  Locker* held = nullptr;
  {
    auto store = SqliteStore::Open(path, options);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->InsertJob(JobNamed(1, "a")).get().ok());
    (*store)->SetHealthLog([&](bool, const std::string& message) {
      std::lock_guard<std::mutex> lock(told_mu);
      told.push_back(message);
    });
    held = new Locker(path);
    JobUpdate running = JobUpdate::Of(JobNamed(1, "a"));
    running.state = "running";
    (*store)->UpdateJob(running);
    EXPECT_FALSE((*store)->Flush().get().ok());
  }  // closed while the lock is held
  held->Release();
  delete held;
  ASSERT_FALSE(told.empty());
  EXPECT_NE(told.back().find("writes were not stored"), std::string::npos) << told.back();
  auto snap = Reopened(path);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->jobs[0].state, "pending");
}

TEST(SqliteStore, TheLastMomentSeenAliveIsTheLatestMarkOrRecord) {
  std::string path = FreshFile("alive");
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok());
    (*store)->AppendAudit({0, 5000, "p", "r", "POST", "/v1/jobs", 201, ""});
    (*store)->Alive(9000);
    (*store)->Alive(12000);
    (*store)->AppendDecision({0, 11000, "start", 1, "order", "{}"});
    ASSERT_TRUE((*store)->Flush().get().ok());
  }
  auto snap = Reopened(path);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->last_seen, 12000);
}

// One daemon per store: a second Open of a held store is refused naming the holder; once the
// first is gone the store opens again (the kernel drops the lock with its holder, kill -9
// included).
TEST(SqliteStore, AHeldStoreIsRefusedNamingItsHolderAndFreedWithIt) {
  std::string path = FreshFile("held");
  {
    auto first = SqliteStore::Open(path);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    auto second = SqliteStore::Open(path);
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(second.status().message().find("store " + path + " is in use by pid " +
                                             std::to_string(getpid()) + " on "),
              std::string::npos)
        << second.status().message();
    EXPECT_NE(second.status().message().find(" since 20"), std::string::npos)
        << second.status().message();
  }
  auto again = SqliteStore::Open(path);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

// A file that exists but is not a store is never taken as a new one (with a new admin): an
// empty file, a text file, another program's SQLite database; each is left as it was.
TEST(SqliteStore, AnExistingFileThatIsNotAStoreIsRefusedAndLeftAlone) {
  std::string empty = FreshFile("empty");
  std::ofstream(empty).flush();
  auto a = SqliteStore::Open(empty);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(a.status().message(), "store " + empty +
                                      " is not a Tessera store: the file is empty; name a new "
                                      "file with --store sqlite:PATH, or move it away");
  EXPECT_EQ(std::filesystem::file_size(empty), 0u);

  std::string text = FreshFile("text");
  std::ofstream(text) << "regions:\n  - name: r\n";
  auto b = SqliteStore::Open(text);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("is not a Tessera store: not an SQLite database"),
            std::string::npos)
      << b.status().message();

  std::string other = FreshFile("other");
  {
    auto db = Sqlite::Open(other);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT)").ok());
  }
  auto c = SqliteStore::Open(other);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("an SQLite database with 1 table(s) of another program"),
            std::string::npos)
      << c.status().message();
  auto db = Sqlite::Open(other);
  ASSERT_TRUE(db.ok());
  auto v = (*db)->Prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'meta'");
  ASSERT_TRUE(v.ok());
  int64_t meta = -1;
  ASSERT_TRUE(v->Each([&] { meta = v->Int(0); }).ok());
  EXPECT_EQ(meta, 0) << "nothing was migrated into another program's database";
}

TEST(SqliteStore, AnUnopenablePathIsAnErrorNamingIt) {
  auto store = SqliteStore::Open("/nonexistent-dir/x/t.db");
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("/nonexistent-dir/x/t.db"), std::string::npos);
}

}  // namespace
}  // namespace tessera
