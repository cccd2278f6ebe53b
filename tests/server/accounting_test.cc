// The daemon's accounting alone, over the in-memory store: a run's cost rows open at its
// start and close at its end, and spending sums them by tenant, project, cluster or model for
// the tenants a caller may see.
#include "server/accounting.h"

#include <gtest/gtest.h>

#include "store/memory_store.h"
#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

constexpr TimeMs kHour = 3600 * 1000;

class AccountingTest : public ::testing::Test {
 protected:
  // One device-model part on the first cluster at `per_hour`, and a CPU part beside it.
  RunRate Rate(int64_t per_hour) const {
    RunRate r;
    r.parts.push_back({0, 0, per_hour * kMicroPerUnit});
    r.parts.push_back({0, -1, kMicroPerUnit});
    r.per_hour = (per_hour + 1) * kMicroPerUnit;
    return r;
  }
  SpendingReport Spend(const Caller& caller, const std::string& by, TimeMs until, TimeMs now) {
    Result<SpendingReport> out =
        Accounting::Spending(store_, caller, by, 0, until, now, spec_.currency);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? *out : SpendingReport();
  }

  Spec spec_ = testing::BaseSpec();
  InMemoryStore store_;
  Accounting book_{store_};
  Caller admin_{"root", Role::kAdmin, "", ""};
};

TEST_F(AccountingTest, ARunsRowsOpenAtItsStartAndCloseAtItsEnd) {
  book_.Resume(40);  // rows after a restart are numbered on
  book_.Open(1, "acme/prod", 0, Rate(2), spec_);
  EXPECT_EQ(book_.open(1), (std::vector<int64_t>{41, 42}));
  book_.Open(2, "acme/research/llm", 0, Rate(4), spec_);
  book_.Close(1, 2 * kHour);
  EXPECT_TRUE(book_.open(1).empty());
  // Job 1: 2 h at 2 + 1; job 2: still open at 3 h, at 4 + 1.
  SpendingReport all = Spend(admin_, "tenant", 10 * kHour, 3 * kHour);
  EXPECT_EQ(all.total, (6 + 15) * kMicroPerUnit);
  EXPECT_EQ(all.currency, spec_.currency);
  SpendingReport by_project = Spend(admin_, "project", 10 * kHour, 3 * kHour);
  ASSERT_EQ(by_project.items.size(), 2u);
  EXPECT_EQ(by_project.items[0].first, "acme/prod");
  EXPECT_EQ(by_project.items[0].second, 6 * kMicroPerUnit);
  SpendingReport by_model = Spend(admin_, "model", 10 * kHour, 3 * kHour);
  ASSERT_EQ(by_model.items.size(), 2u);
  EXPECT_EQ(by_model.items[0].first, spec_.device_models[0].name);  // "H800" < "cpu"
  EXPECT_EQ(by_model.items[0].second, (4 + 12) * kMicroPerUnit);
  EXPECT_EQ(by_model.items[1].first, "cpu");
  EXPECT_EQ(by_model.items[1].second, (2 + 3) * kMicroPerUnit);
}

TEST_F(AccountingTest, ARunThatRestartsWithoutStoppingClosesItsRowsFirst) {
  book_.Open(1, "acme/prod", 0, Rate(2), spec_);
  book_.Open(1, "acme/prod", kHour, Rate(8), spec_);  // moved at 1 h
  EXPECT_EQ(book_.open(1), (std::vector<int64_t>{3, 4}));
  book_.Close(1, 2 * kHour);
  EXPECT_EQ(Spend(admin_, "cluster", 10 * kHour, 10 * kHour).total, (3 + 9) * kMicroPerUnit);
}

TEST_F(AccountingTest, AnAdoptedRunsRowsAreNumberedForTheRestoresBatch) {
  book_.Resume(7);
  std::vector<ResumedRuns::Cost> batch;
  book_.Reopen(3, Rate(2), batch);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].id, 8);
  EXPECT_EQ(batch[1].id, 9);
  EXPECT_EQ(batch[1].model, -1);
  EXPECT_EQ(book_.open(3), (std::vector<int64_t>{8, 9}));
}

TEST_F(AccountingTest, AMemberSeesOnlyItsSubtreesSpending) {
  book_.Open(1, "acme/prod", 0, Rate(2), spec_);
  book_.Open(2, "acme/research/llm", 0, Rate(4), spec_);
  Caller member{"m", Role::kMember, "acme/research", ""};
  SpendingReport mine = Spend(member, "project", kHour, kHour);
  ASSERT_EQ(mine.items.size(), 1u);
  EXPECT_EQ(mine.items[0].first, "acme/research/llm");
  EXPECT_EQ(mine.total, 5 * kMicroPerUnit);
}

TEST_F(AccountingTest, ABadGroupingOrAnEmptyPeriodIsRefused) {
  Result<SpendingReport> bad =
      Accounting::Spending(store_, admin_, "region", 0, kHour, kHour, "USD");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  Result<SpendingReport> empty =
      Accounting::Spending(store_, admin_, "tenant", kHour, kHour, kHour, "USD");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera
