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
#include "store/store_testutil.h"

namespace tessera {
namespace {

std::string FreshFile(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tessera-store-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return (dir / "t.db").string();
}

using testing::JobNamed;

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
    // bound to no node, no task logs, costs per hour as floating point, version 1.
    auto db = Sqlite::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("DROP TABLE services; ALTER TABLE principals DROP COLUMN node; "
                           "DROP TABLE task_logs; DROP TABLE costs; "
                           "CREATE TABLE costs(id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, "
                           "tenant TEXT NOT NULL, cluster TEXT NOT NULL, model TEXT NOT NULL, "
                           "start_ms INTEGER NOT NULL, end_ms INTEGER, per_hour REAL NOT NULL); "
                           "CREATE INDEX costs_start ON costs(start_ms); "
                           "INSERT INTO costs VALUES(1, 1, 't', 'east', 'a100', 0, 7200000, "
                           "2.345678); "
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
  // Its cost row is in micro-units now: two hours at 2.345678 an hour.
  auto costs = (*store)->QueryCosts(0, 7200000, 7200000);
  ASSERT_TRUE(costs.ok()) << costs.status().ToString();
  ASSERT_EQ(costs->size(), 1u);
  EXPECT_EQ((*costs)[0].amount, 2 * 2345678);
  EXPECT_EQ(CurrentSchemaVersion(), 5);
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
