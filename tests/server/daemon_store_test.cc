// The daemon on the store port (store/durable_store.h), without HTTP or a file: an in-memory
// store behind a fault-injecting one. A change is answered only once durable, and a store
// that fails changes nothing the API shows.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "config/loader.h"
#include "daemon_fixture.h"
#include "server/daemon.h"
#include "store/faulty_store.h"
#include "store/memory_store.h"

namespace tessera {
namespace {

class DaemonOnFaultyStore : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadResult r = LoadSpecTexts({{"fleet.yaml", testing::kDaemonFleet}});
    ASSERT_TRUE(r.spec) << r.diagnostics.ToString();
    auto faulty = std::make_unique<FaultyStore>(std::make_unique<InMemoryStore>());
    store_ = faulty.get();
    DaemonOptions options;
    options.admin_token = "secret";
    auto d = Daemon::Start(std::move(*r.spec), std::move(faulty), clock_, options);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    daemon_ = std::move(d->daemon);
    EXPECT_EQ(d->admin_token, "");  // the admin's token was given, not made: nothing to tell
  }

  SystemClock clock_;
  FaultyStore* store_ = nullptr;  // the daemon's
  std::unique_ptr<Daemon> daemon_;
  const Caller admin_{"admin", Role::kAdmin, "", ""};
};

TEST_F(DaemonOnFaultyStore, TheFirstStartStoresTheAdminAndItsToken) {
  auto snap = store_->inner().Load();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->principals.size(), 1u);
  EXPECT_EQ(snap->principals[0].name, "admin");
  EXPECT_EQ(snap->principals[0].role, "admin");
  ASSERT_EQ(snap->tokens.size(), 1u);
  EXPECT_NE(snap->tokens[0].hash, "secret");  // its hash, never the token
}

TEST_F(DaemonOnFaultyStore, ASubmissionTheStoreDoesNotTakeIsRefusedAndNeverShown) {
  store_->Fail("disk full");
  auto refused = daemon_->Submit(admin_, testing::DaemonJobBody("a"), "k1");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("disk full"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(daemon_->ListJobs(admin_, {}).total, 0u);
  EXPECT_FALSE(daemon_->GetJob(admin_, "a", "").ok());
  EXPECT_EQ(daemon_->counts().pending + daemon_->counts().running, 0u);

  store_->Heal();
  // The same Idempotency-Key again is a new submission: the refused one was never accepted.
  auto taken = daemon_->Submit(admin_, testing::DaemonJobBody("a"), "k1");
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_FALSE(taken->replayed);
  EXPECT_EQ(daemon_->ListJobs(admin_, {}).total, 1u);
  auto rows = store_->inner().Load();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->jobs.size(), 1u);
  EXPECT_EQ(rows->jobs[0].id, taken->job.id);
  EXPECT_EQ(rows->jobs[0].idempotency_key, "k1");
}

TEST_F(DaemonOnFaultyStore, ACancelTheStoreDoesNotTakeLeavesTheJobAsItWas) {
  auto job = daemon_->Submit(admin_, testing::DaemonJobBody("b"), "");
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  store_->Fail("io error");
  auto refused = daemon_->Cancel(admin_, "b", "");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().ToString();
  auto still = daemon_->GetJob(admin_, "b", "");
  ASSERT_TRUE(still.ok());
  EXPECT_NE(still->state, "cancelled");
  EXPECT_TRUE(daemon_->store().degraded());

  store_->Heal();
  auto cancelled = daemon_->Cancel(admin_, "b", "");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ(cancelled->state, "cancelled");
  ASSERT_TRUE(store_->Flush().get().ok());
  auto rows = store_->inner().Load();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->jobs.size(), 1u);
  EXPECT_EQ(rows->jobs[0].state, "cancelled");
}

TEST_F(DaemonOnFaultyStore, ATokenTheStoreDoesNotTakeIsNeverIssued) {
  ASSERT_TRUE(daemon_->PutPrincipal(admin_, {"bob", "member", "lab", 0, ""}).ok());
  store_->Fail("gone");
  auto token = daemon_->IssueToken(admin_, "bob", std::nullopt);
  ASSERT_FALSE(token.ok());
  store_->Heal();
  auto snap = store_->inner().Load();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->tokens.size(), 1u);  // the admin's alone
}

}  // namespace
}  // namespace tessera
