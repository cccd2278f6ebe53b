// Principals and tokens alone, over the in-memory store (and a failing one): every rule that
// keeps a caller inside its role, without a daemon or HTTP.
#include "server/principals.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/clock.h"
#include "store/faulty_store.h"
#include "store/memory_store.h"

namespace tessera {
namespace {

class PrincipalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto inner = std::make_unique<InMemoryStore>();
    store_ = std::make_unique<FaultyStore>(std::move(inner));
    principals_ = std::make_unique<Principals>(*store_, clock_);
    Result<std::string> made = principals_->Load({}, {}, "tsk_admin");
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    EXPECT_EQ(*made, "");  // the token was given, not made
  }
  // Who a bearer token authenticates as, or the error.
  Result<Caller> Who(const std::string& token) const {
    return principals_->auth().Authenticate("Bearer " + token, clock_.Now());
  }
  static Principals::Fleet Fleet() {
    return {[](const std::string& t) { return t == "lab" || t == "lab/a"; },
            [](const std::string& n) { return n == "gpu-0"; }};
  }

  ManualClock clock_{1000};
  std::unique_ptr<FaultyStore> store_;
  std::unique_ptr<Principals> principals_;
  const Caller admin_{"admin", Role::kAdmin, "", ""};
};

TEST_F(PrincipalsTest, AnEmptyStoreGetsAnAdminWithTheGivenOrANewToken) {
  ASSERT_TRUE(Who("tsk_admin").ok());
  EXPECT_EQ(Who("tsk_admin")->role, Role::kAdmin);
  InMemoryStore other;
  Principals fresh(other, clock_);
  Result<std::string> made = fresh.Load({}, {}, "");
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(made->rfind("tsk_", 0), 0u);
  EXPECT_TRUE(fresh.auth().Authenticate("Bearer " + *made, clock_.Now()).ok());
  // A restart reads them back: no second admin, no new token.
  Result<StoreSnapshot> snap = other.Load();
  ASSERT_TRUE(snap.ok());
  Principals again(other, clock_);
  Result<std::string> none = again.Load(snap->principals, snap->tokens, "");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, "");
  EXPECT_TRUE(again.auth().Authenticate("Bearer " + *made, clock_.Now()).ok());
}

TEST_F(PrincipalsTest, OnlyAdminsManagePrincipalsAndTokens) {
  ASSERT_TRUE(principals_->Put(admin_, {"op", "operator", "", 0, ""}, Fleet()).ok());
  for (const Caller& c :
       {Caller{"op", Role::kOperator, "", ""}, Caller{"m", Role::kMember, "lab", ""},
        Caller{"v", Role::kViewer, "lab", ""}, Caller{"a", Role::kAgent, "", "gpu-0"}}) {
    EXPECT_EQ(principals_->Put(c, {"x", "admin", "", 0, ""}, Fleet()).code(),
              StatusCode::kPermissionDenied);
    EXPECT_EQ(principals_->Delete(c, "op").code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(principals_->RevokeTokens(c, "admin").status().code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(principals_->IssueToken(c, "admin", std::nullopt).status().code(),
              StatusCode::kPermissionDenied);
  }
  EXPECT_FALSE(principals_->auth().Find("x"));
  EXPECT_TRUE(principals_->auth().Find("op"));
  EXPECT_TRUE(Who("tsk_admin").ok());
}

TEST_F(PrincipalsTest, APrincipalNamesAKnownRoleTenantAndNodeOrTheFieldIsSaid) {
  auto field = [&](Principal p) { return principals_->Put(admin_, std::move(p), Fleet()).field(); };
  EXPECT_EQ(field({"x", "root", "", 0, ""}), "role");
  EXPECT_EQ(field({"x", "member", "", 0, ""}), "tenant");
  EXPECT_EQ(field({"x", "member", "nowhere", 0, ""}), "tenant");
  EXPECT_EQ(field({"x", "agent", "", 0, ""}), "node");
  EXPECT_EQ(field({"x", "agent", "", 0, "gpu-9"}), "node");
  EXPECT_EQ(field({"x", "operator", "", 0, "gpu-0"}), "node");  // only agents have nodes
  EXPECT_FALSE(principals_->auth().Find("x"));
  ASSERT_TRUE(principals_->Put(admin_, {"x", "agent", "", 0, "gpu-0"}, Fleet()).ok());
  EXPECT_EQ(principals_->auth().Find("x")->created, 1000);
}

TEST_F(PrincipalsTest, NobodyDeletesItselfOrTheLastAdmin) {
  EXPECT_EQ(principals_->Delete(admin_, "admin").code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(principals_->Put(admin_, {"root2", "admin", "", 0, ""}, Fleet()).ok());
  const Caller root2{"root2", Role::kAdmin, "", ""};
  // Two admins: one may delete the other, and then the survivor is the last.
  ASSERT_TRUE(principals_->Delete(root2, "admin").ok());
  EXPECT_FALSE(Who("tsk_admin").ok());  // its token went with it
  EXPECT_EQ(principals_->Delete(root2, "root2").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(principals_->Delete(root2, "ghost").code(), StatusCode::kNotFound);
}

TEST_F(PrincipalsTest, ATokenWorksUntilItExpiresOrIsRevoked) {
  ASSERT_TRUE(principals_->Put(admin_, {"m", "member", "lab/a", 0, ""}, Fleet()).ok());
  Result<std::string> forever = principals_->IssueToken(admin_, "m", std::nullopt);
  Result<std::string> brief = principals_->IssueToken(admin_, "m", 5000);
  ASSERT_TRUE(forever.ok() && brief.ok());
  ASSERT_TRUE(Who(*brief).ok());
  EXPECT_EQ(Who(*brief)->tenant, "lab/a");
  clock_.Set(6000);
  EXPECT_FALSE(Who(*brief).ok());
  EXPECT_TRUE(Who(*forever).ok());
  Result<size_t> revoked = principals_->RevokeTokens(admin_, "m");
  ASSERT_TRUE(revoked.ok());
  EXPECT_EQ(*revoked, 2u);
  EXPECT_FALSE(Who(*forever).ok());
  EXPECT_EQ(principals_->IssueToken(admin_, "ghost", std::nullopt).status().code(),
            StatusCode::kNotFound);
}

TEST_F(PrincipalsTest, AnAgentBoundToNoNodeGetsNoToken) {
  // Left by an older tessera: loaded from the store as it is.
  Principals old(*store_, clock_);
  ASSERT_TRUE(
      old.Load({{"admin", "admin", "", 0, ""}, {"legacy", "agent", "", 0, ""}}, {}, "").ok());
  EXPECT_EQ(old.IssueToken(admin_, "legacy", std::nullopt).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(PrincipalsTest, AStoreThatFailsChangesNothing) {
  ASSERT_TRUE(principals_->Put(admin_, {"m", "member", "lab", 0, ""}, Fleet()).ok());
  Result<std::string> token = principals_->IssueToken(admin_, "m", std::nullopt);
  ASSERT_TRUE(token.ok());
  store_->Fail("disk full");
  EXPECT_EQ(principals_->Put(admin_, {"n", "member", "lab", 0, ""}, Fleet()).code(),
            StatusCode::kUnavailable);
  EXPECT_FALSE(principals_->auth().Find("n"));
  EXPECT_EQ(principals_->Delete(admin_, "m").code(), StatusCode::kUnavailable);
  EXPECT_TRUE(principals_->auth().Find("m"));
  EXPECT_EQ(principals_->RevokeTokens(admin_, "m").status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Who(*token).ok());
  EXPECT_EQ(principals_->IssueToken(admin_, "m", std::nullopt).status().code(),
            StatusCode::kUnavailable);
  store_->Heal();
  EXPECT_TRUE(principals_->Put(admin_, {"n", "member", "lab", 0, ""}, Fleet()).ok());
}

}  // namespace
}  // namespace tessera
