// The PostgreSQL store on a real PostgreSQL 15 (scripts/pg-cluster): the durable store's
// contract (store/store_contract.h), as SQLite is held to it, and what only a shared database
// has — the lease that lets one daemon lead at a time, the fencing that refuses a deposed
// leader's late writes, a crash of the database with nothing acknowledged lost, and a database
// that is not a store.
#include "store/postgres_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/postgres_schema.h"
#include "store/schema.h"
#include "store/store_contract.h"
#include "testutil/postgres_server.h"
#include "testutil/tcp_proxy.h"

namespace tessera {
namespace {

using testing::JobNamed;
using testing::PostgresServer;

std::filesystem::path TestDir(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("tessera-pg-" + name + "-" + std::to_string(getpid()));
}

// A server of the test's own, fast (nothing crashes in the contract's tests).
struct PostgresKind {
  PostgresServer server;
  explicit PostgresKind(const std::string& test) : server(TestDir(test), /*durable=*/false) {
    std::string error;
    if (!server.Up(&error)) ADD_FAILURE() << "PostgreSQL did not start: " << error;
  }
  std::unique_ptr<DurableStore> Open() {
    auto store = PostgresStore::Open(server.url());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  // A new daemon on the same database (the old one gave up its lease as it stopped).
  std::unique_ptr<DurableStore> Reopen(std::unique_ptr<DurableStore> old) {
    old.reset();
    return Open();
  }
};

class PgKindName {
 public:
  template <typename T>
  static std::string GetName(int) {
    return "Postgres";
  }
};

}  // namespace

namespace testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Stores, StoreContract, ::testing::Types<PostgresKind>, PgKindName);
}  // namespace testing

namespace {

class PostgresStoreTest : public ::testing::Test {
 protected:
  explicit PostgresStoreTest(bool durable = false)
      : server_(TestDir(::testing::UnitTest::GetInstance()->current_test_info()->name()), durable) {
  }
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(server_.Up(&error)) << error;
  }
  std::unique_ptr<PostgresStore> Open(const std::string& holder) {
    PostgresOptions o;
    o.holder = holder;
    o.lease = std::chrono::milliseconds(1500);
    auto store = PostgresStore::Open(server_.url(), o);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  PostgresServer server_;
};

class DurablePostgresStoreTest : public PostgresStoreTest {
 protected:
  DurablePostgresStoreTest() : PostgresStoreTest(/*durable=*/true) {}
};

TEST_F(PostgresStoreTest, OneDaemonLeadsAndASecondIsToldWhoUntilTheFirstStops) {
  auto a = Open("daemon a");
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(a->leading());
  PostgresOptions o;
  o.holder = "daemon b";
  auto b = PostgresStore::Open(server_.url(), o);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(b.status().message().find("is led by daemon a (term 1)"), std::string::npos)
      << b.status().message();
  auto lease = PostgresStore::ReadLease(server_.url());
  ASSERT_TRUE(lease.ok() && lease->has_value());
  EXPECT_EQ((*lease)->holder, "daemon a");
  EXPECT_FALSE((*lease)->expired);
  // A clean stop gives the lease up: the next daemon leads at once, in a new term.
  a.reset();
  auto again = Open("daemon b");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->term(), 2);
}

TEST_F(PostgresStoreTest, TheLeaseIsRenewedWhileTheLeaderLives) {
  auto a = Open("daemon a");
  ASSERT_NE(a, nullptr);
  // Three lease lengths later the lease still holds: it was renewed.
  std::this_thread::sleep_for(std::chrono::milliseconds(4500));
  EXPECT_TRUE(a->leading());
  PostgresOptions o;
  o.holder = "daemon b";
  EXPECT_EQ(PostgresStore::Open(server_.url(), o).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(PostgresStoreTest, ALongBatchDoesNotDelayTheLeasesRenewal) {
  auto a = Open("daemon a");  // a lease of 1.5 s, renewed every 0.5 s
  ASSERT_NE(a, nullptr);
  // A batch of the leader's that takes 4 s (its fence holds the lease row meanwhile).
  std::thread batch(
      [&] { server_.Sql("BEGIN; SELECT tessera_fence(1); SELECT pg_sleep(4); COMMIT;"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  EXPECT_TRUE(a->leading());  // renewed beside the batch, not after it
  batch.join();
  EXPECT_TRUE(a->leading());
}

TEST_F(PostgresStoreTest, ADeposedLeadersLateWritesAreRefusedByTheDatabase) {
  auto a = Open("daemon a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->InsertJob(JobNamed(1, "before")).get().ok());
  // The leader is cut off long enough for its lease to expire (here: the lease row is aged by
  // hand), and another daemon takes over.
  int rc = 0;
  server_.Sql("UPDATE tessera_lease SET expires = clock_timestamp() - interval '1 second'", &rc);
  ASSERT_EQ(rc, 0);
  auto b = Open("daemon b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->term(), 2);
  // The old leader's writes come late: the database refuses them, waited for or not.
  Status late = a->InsertJob(JobNamed(2, "late")).get();
  EXPECT_EQ(late.code(), StatusCode::kFailedPrecondition) << late.ToString();
  EXPECT_NE(late.message().find("deposed"), std::string::npos) << late.message();
  a->AppendDecision({0, 5, "start", 1, "late", "{}"});
  EXPECT_FALSE(a->leading());
  ASSERT_TRUE(b->InsertJob(JobNamed(3, "new leader")).get().ok());
  ASSERT_TRUE(b->Flush().get().ok());
  auto snap = b->Load();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->jobs.size(), 2u);
  EXPECT_EQ(snap->jobs[0].name, "before");
  EXPECT_EQ(snap->jobs[1].name, "new leader");
  a.reset();  // its kept decision is never written
  EXPECT_EQ(server_.Sql("SELECT COUNT(*) FROM decisions"), "0");
  EXPECT_EQ(server_.Sql("SELECT holder FROM tessera_lease"), "daemon b");
}

TEST_F(PostgresStoreTest, DaemonsStartedAtOnceHaveExactlyOneLeader) {
  constexpr int kDaemons = 4;
  std::vector<std::unique_ptr<PostgresStore>> stores(kDaemons);
  std::vector<Status> errors(kDaemons);
  std::vector<std::thread> threads;
  for (int i = 0; i < kDaemons; ++i) {
    threads.emplace_back([&, i] {
      PostgresOptions o;
      o.holder = "daemon " + std::to_string(i);
      auto s = PostgresStore::Open(server_.url(), o);
      if (s.ok()) {
        stores[i] = std::move(*s);
      } else {
        errors[i] = s.status();
      }
    });
  }
  for (std::thread& t : threads)
    t.join();
  int leaders = 0;
  for (int i = 0; i < kDaemons; ++i) {
    if (stores[i]) {
      ++leaders;
    } else {
      EXPECT_EQ(errors[i].code(), StatusCode::kFailedPrecondition) << errors[i].ToString();
    }
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(server_.Sql("SELECT value FROM meta WHERE key = 'schema_version'"),
            std::to_string(CurrentSchemaVersion()));
}

TEST_F(DurablePostgresStoreTest, ACrashOfTheDatabaseLosesNothingAcknowledged) {
  auto a = Open("daemon a");
  ASSERT_NE(a, nullptr);
  std::vector<bool> healthy;
  std::mutex mu;
  a->SetHealthLog([&](bool degraded, const std::string&) {
    std::lock_guard<std::mutex> lock(mu);
    healthy.push_back(!degraded);
  });
  for (int i = 1; i <= 50; ++i)
    ASSERT_TRUE(a->InsertJob(JobNamed(i, "j" + std::to_string(i))).get().ok());
  server_.Crash();
  // While it is down: a write waited for fails (Unavailable), one nobody waits for is kept.
  Status down = a->InsertJob(JobNamed(51, "while down")).get();
  EXPECT_EQ(down.code(), StatusCode::kUnavailable) << down.ToString();
  a->AppendDecision({0, 7, "start", 1, "kept while down", "{}"});
  std::string error;
  ASSERT_TRUE(server_.Start(&error)) << error;
  // The store reconnects by itself; the kept decision goes in, then new writes.
  ASSERT_TRUE(a->InsertJob(JobNamed(52, "after")).get().ok());
  ASSERT_TRUE(a->Flush().get().ok());
  EXPECT_EQ(server_.Sql("SELECT COUNT(*) FROM jobs"), "51");
  EXPECT_EQ(server_.Sql("SELECT reason FROM decisions"), "kept while down");
  EXPECT_EQ(server_.Sql("SELECT COUNT(*) FROM jobs WHERE id = 51"), "0");
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_GE(healthy.size(), 2u);
  EXPECT_FALSE(healthy.front());
  EXPECT_TRUE(healthy.back());
}

// A batch whose COMMIT took but whose answer was lost (the connection cut right after it was
// sent): the store asks the database (each batch marks tessera_commit with its number) and
// counts it done, rather than failing a submission that is stored or writing a decision twice.
TEST_F(PostgresStoreTest, ABatchWhoseCommitAnswerIsLostIsNeitherFailedNorWrittenTwice) {
  testing::TcpProxy proxy(server_.port());
  ASSERT_GT(proxy.port(), 0);
  std::string url = server_.url();
  url.replace(url.rfind(':' + std::to_string(server_.port())),
              std::to_string(server_.port()).size() + 1, ':' + std::to_string(proxy.port()));
  PostgresOptions o;
  o.holder = "daemon a";
  auto store = PostgresStore::Open(url, o);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  PostgresStore& a = **store;
  ASSERT_TRUE(a.InsertJob(JobNamed(1, "before")).get().ok());
  proxy.LoseTheAnswerTo("COMMIT");
  a.AppendDecision({0, 7, "start", 1, "once", "{}"});
  Status lost = a.InsertJob(JobNamed(2, "answer lost")).get();
  EXPECT_EQ(proxy.lost(), 1);
  EXPECT_TRUE(lost.ok()) << lost.ToString();
  ASSERT_TRUE(a.InsertJob(JobNamed(3, "after")).get().ok());
  ASSERT_TRUE(a.Flush().get().ok());
  EXPECT_EQ(server_.Sql("SELECT string_agg(name, ',' ORDER BY id) FROM jobs"),
            "before,answer lost,after");
  EXPECT_EQ(server_.Sql("SELECT COUNT(*) FROM decisions"), "1");
  EXPECT_FALSE(a.degraded());
}

TEST_F(PostgresStoreTest, ADatabaseOfAnotherProgramOrANewerSchemaIsRefused) {
  int rc = 0;
  server_.Sql("CREATE TABLE invoices(id INTEGER)", &rc);
  ASSERT_EQ(rc, 0);
  auto other = PostgresStore::Open(server_.url());
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(other.status().message().find("not a Tessera store"), std::string::npos)
      << other.status().message();
  server_.Sql("DROP TABLE invoices", &rc);
  {
    auto store = Open("daemon a");
    ASSERT_NE(store, nullptr);
  }
  server_.Sql("UPDATE meta SET value = '99' WHERE key = 'schema_version'", &rc);
  ASSERT_EQ(rc, 0);
  auto newer = PostgresStore::Open(server_.url());
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(newer.status().message().find("schema version 99, newer"), std::string::npos)
      << newer.status().message();
}

TEST(PostgresStore, AMalformedOrUnreachableDatabaseIsNamedWithoutItsPassword) {
  auto bad = PostgresStore::Open("postgres://u:secret@127.0.0.1:5432/db?nonsense=1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().ToString();
  EXPECT_EQ(bad.status().message().find("secret"), std::string::npos) << bad.status().message();
  // Nothing listens on port 1.
  auto down = PostgresStore::Open("postgres://u:secret@127.0.0.1:1/db");
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable) << down.status().ToString();
  EXPECT_NE(down.status().message().find("postgres://u:***@127.0.0.1:1/db"), std::string::npos)
      << down.status().message();
  EXPECT_EQ(down.status().message().find("secret"), std::string::npos);
}

TEST(PostgresSchema, HasAMigrationForEachOfSqlites) {
  EXPECT_EQ(PgMigrationCount(), CurrentSchemaVersion());
}

}  // namespace
}  // namespace tessera
