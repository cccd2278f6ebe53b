// The daemon's job book alone: references, pages, idempotency, hidden rows, restore and the
// engine's ids, without a daemon or HTTP.
#include "server/job_book.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tessera {
namespace {

StoredJob Submission(const std::string& name, const std::string& tenant,
                     const std::string& principal = "alice", const std::string& key = "") {
  StoredJob row;
  row.name = name;
  row.tenant = tenant;
  row.principal = principal;
  row.idempotency_key = key;
  row.job_class = "batch";
  row.resolved = "{\"resolved\":true}";
  return row;
}

Caller Admin() {
  return {"root", Role::kAdmin, "", ""};
}
Caller Member(const std::string& tenant) {
  return {"m", Role::kMember, tenant, ""};
}

int64_t Add(JobBook& book, StoredJob row) {
  book.Add(row);
  return row.id;
}

TEST(JobBook, AddGivesDenseIdsPendingRowsWithoutTheirResolvedForm) {
  JobBook book;
  StoredJob a = Submission("a", "org/ml");
  book.Add(a);
  StoredJob b = Submission("b", "org/ml");
  book.Add(b);
  EXPECT_EQ(a.id, 1);
  EXPECT_EQ(b.id, 2);
  EXPECT_EQ(a.state, "pending");
  EXPECT_EQ(a.reason, "New");
  EXPECT_EQ(a.resolved, "{\"resolved\":true}");  // the caller's copy goes to the store
  EXPECT_EQ(book.row(1).resolved, "");
  EXPECT_EQ(book.size(), 2u);
  EXPECT_EQ(book.jobs(), 2u);
  EXPECT_FALSE(book.engine_id(1));
  EXPECT_EQ(book.placed_generation(2), JobBook::kNoPlacement);
}

TEST(JobBook, AReferenceIsAnIdOrTheNewestVisibleJobOfThatName) {
  JobBook book;
  Add(book, Submission("train", "org/ml"));
  Add(book, Submission("train", "org/ml"));
  Add(book, Submission("train", "org/speech"));
  ASSERT_TRUE(book.Resolve(Member("org/ml"), "train", "").ok());
  EXPECT_EQ(*book.Resolve(Member("org/ml"), "train", ""), 2);
  EXPECT_EQ(*book.Resolve(Member("org/speech"), "train", ""), 3);
  EXPECT_EQ(*book.Resolve(Admin(), "1", ""), 1);
  // Two tenants' jobs of one name: the admin must say which.
  Result<int64_t> both = book.Resolve(Admin(), "train", "");
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(*book.Resolve(Admin(), "train", "org/speech"), 3);
}

TEST(JobBook, AnotherTenantsJobIsNotFoundNeverForbidden) {
  JobBook book;
  Add(book, Submission("secret", "org/speech"));
  for (const std::string ref : {"1", "secret", "2", "0", "-1", "99999999999999999999"}) {
    Result<int64_t> r = book.Resolve(Member("org/ml"), ref, "");
    ASSERT_FALSE(r.ok()) << ref;
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound) << ref;
  }
  EXPECT_EQ(book.Find(Member("org/ml"), {}).total, 0u);
}

TEST(JobBook, ARefusedInsertIsHiddenAndFreesItsKey) {
  JobBook book;
  const int64_t id = Add(book, Submission("a", "org/ml", "alice", "k1"));
  ASSERT_NE(book.Keyed("alice", "k1"), nullptr);
  EXPECT_EQ(book.Keyed("bob", "k1"), nullptr);  // keys are the principal's own
  book.Refuse(id, "disk full");
  EXPECT_EQ(book.Keyed("alice", "k1"), nullptr);
  EXPECT_EQ(book.row(id).state, "failed");
  EXPECT_EQ(book.row(id).detail, "disk full");
  EXPECT_FALSE(book.Resolve(Admin(), "1", "").ok());
  EXPECT_FALSE(book.Resolve(Admin(), "a", "").ok());
  EXPECT_EQ(book.Find(Admin(), {}).total, 0u);
  EXPECT_EQ(book.size(), 1u);
  EXPECT_EQ(book.jobs(), 0u);
  // The id stays taken.
  EXPECT_EQ(Add(book, Submission("a", "org/ml", "alice", "k1")), 2);
  EXPECT_EQ(book.Keyed("alice", "k1")->id, 2);
}

TEST(JobBook, OnlyAnActiveJobHoldsItsNameInItsTenant) {
  JobBook book;
  const int64_t id = Add(book, Submission("a", "org/ml"));
  EXPECT_EQ(book.ActiveNamed("a", "org/ml")->id, id);
  EXPECT_EQ(book.ActiveNamed("a", "org/speech"), nullptr);
  book.row(id).state = "succeeded";
  EXPECT_EQ(book.ActiveNamed("a", "org/ml"), nullptr);
}

TEST(JobBook, PagesAreNewestFirstBelowTheCursorAndCountEveryMatch) {
  JobBook book;
  for (int i = 0; i < 7; ++i)
    Add(book, Submission("j" + std::to_string(i), i % 2 ? "org/ml/a" : "org/speech"));
  book.row(5).state = "succeeded";
  JobFilter f;
  f.limit = 2;
  JobBook::Page p = book.Find(Admin(), f);
  EXPECT_EQ(p.ids, (std::vector<int64_t>{7, 6}));
  EXPECT_EQ(p.next, 6);
  EXPECT_EQ(p.total, 7u);
  f.after = p.next;
  p = book.Find(Admin(), f);
  EXPECT_EQ(p.ids, (std::vector<int64_t>{5, 4}));
  f.after = 0;
  f.limit = 100;
  f.tenant = "org/ml";
  p = book.Find(Admin(), f);
  EXPECT_EQ(p.ids, (std::vector<int64_t>{6, 4, 2}));
  EXPECT_EQ(p.next, 0);
  f.tenant.clear();
  f.state = "active";
  EXPECT_EQ(book.Find(Admin(), f).total, 6u);
  f.state = "succeeded";
  EXPECT_EQ(book.Find(Admin(), f).ids, (std::vector<int64_t>{5}));
  f.state.clear();
  f.limit = 0;  // clamped to one
  EXPECT_EQ(book.Find(Admin(), f).ids.size(), 1u);
  EXPECT_EQ(book.Find(Member("org/ml"), JobFilter{}).total, 3u);
}

TEST(JobBook, LoadKeepsGapsAsHiddenRowsAndIndexesNamesAndKeys) {
  auto stored = [](std::vector<int64_t> ids) {
    StableVector<StoredJob> rows;
    for (int64_t id : ids) {
      StoredJob row = Submission("j" + std::to_string(id), "org/ml", "alice", id == 5 ? "k" : "");
      row.id = id;
      row.state = "running";
      row.restarts = static_cast<int32_t>(id);
      rows.push_back(row);
    }
    return rows;
  };
  JobBook book;
  book.Load(stored({1, 2, 5}));
  book.IndexNames();
  EXPECT_EQ(book.size(), 5u);
  EXPECT_EQ(book.jobs(), 3u);
  EXPECT_TRUE(JobBook::Hidden(book.row(3)));
  EXPECT_EQ(book.row(4).id, 4);
  EXPECT_EQ(*book.Resolve(Admin(), "j5", ""), 5);
  EXPECT_FALSE(book.Resolve(Admin(), "3", "").ok());
  EXPECT_EQ(book.Keyed("alice", "k")->id, 5);
  EXPECT_EQ(book.restart_base(5), 5);  // runs before this process count on
  EXPECT_EQ(Add(book, Submission("next", "org/ml")), 6);

  JobBook dense;
  dense.Load(stored({1, 2}));
  EXPECT_EQ(dense.jobs(), 2u);
}

TEST(JobBook, EngineIdsBindBothWaysUntilANewEngineForgetsThem) {
  JobBook book;
  Add(book, Submission("a", "org/ml"));
  Add(book, Submission("b", "org/ml"));
  book.Bind(2, JobId(3));
  EXPECT_TRUE(book.Knows(JobId(3)));
  EXPECT_EQ(book.IdOf(JobId(3)), 2);
  EXPECT_EQ(book.IdOf(JobId(0)), 0);  // not yet bound
  EXPECT_FALSE(book.Knows(JobId(4)));
  EXPECT_EQ(*book.engine_id(2), JobId(3));
  book.placed_generation(2) = 7;
  book.ForgetEngine();
  EXPECT_FALSE(book.Knows(JobId(3)));
  EXPECT_EQ(book.placed_generation(2), JobBook::kNoPlacement);
  EXPECT_TRUE(book.engine_id(2));  // each row is unbound as its job moves
  book.Unbind(2);
  EXPECT_FALSE(book.engine_id(2));
}

}  // namespace
}  // namespace tessera
