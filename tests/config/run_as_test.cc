// runAs: the host user a tenant's tasks run as, inherited by its children, with a default per
// cluster; names that cannot be host accounts are errors at their line.
#include "model/run_as.h"

#include <gtest/gtest.h>

#include <string>

#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

const char* kRunAs = R"(clusters:
  - name: lab
    region: north
    backend: local
    runAs: {user: tasks}
    nodes:
      - {name: lab-0, cpu: 8, memory: 32Gi}
tenants:
  - name: ops
    runAs: {user: svc-ops, group: ops}
    children:
      - name: batch
      - name: web
        runAs: {user: www-data}
)";

TEST(RunAs, ATenantsUserIsInheritedAndTheClusterDefaultsTheRest) {
  LoadResult r = testing::LoadWithBase(kRunAs);
  ASSERT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  const Spec& s = *r.spec;
  const ClusterId lab = *s.FindCluster("lab");
  const ClusterId train = *s.FindCluster("train");
  const RunAs* batch = s.RunAsFor(*s.FindTenant("ops/batch"), lab);
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->user, "svc-ops");
  EXPECT_EQ(batch->group, "ops");
  EXPECT_EQ(s.RunAsFor(*s.FindTenant("ops/web"), lab)->user, "www-data");
  EXPECT_EQ(s.RunAsFor(*s.FindTenant("ops/web"), lab)->group, "");
  // A tenant that names none takes the cluster's; on a cluster with none, there is none.
  EXPECT_EQ(s.RunAsFor(*s.FindTenant("acme/research/llm"), lab)->user, "tasks");
  EXPECT_EQ(s.RunAsFor(*s.FindTenant("acme/research/llm"), train), nullptr);
}

TEST(RunAs, NamesThatCannotBeHostAccountsAreErrorsAtTheirField) {
  LoadResult r = testing::LoadWithBase(R"(tenants:
  - name: ops
    runAs: {user: "Root Admin", group: "x;y"}
  - name: dev
    runAs: {group: dev}
)");
  ASSERT_FALSE(r.spec.has_value());
  const std::string text = r.diagnostics.ToString();
  EXPECT_NE(text.find("case.yaml:3:19: tenants[0].runAs.user: \"Root Admin\" is not a host "
                      "account name"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("tenants[0].runAs.group: \"x;y\" is not a host account name"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("case.yaml:5:12: tenants[1].runAs.user: missing required field \"user\""),
            std::string::npos)
      << text;
}

TEST(RunAs, OnAClusterItsAgentsDoNotRunItIsAnErrorNotIgnored) {
  LoadResult r = testing::LoadWithBase(R"(clusters:
  - name: hpc
    region: north
    backend: slurm
    backendOptions: {slurmConf: /etc/slurm/slurm.conf}
    runAs: {user: tasks}
    nodes:
      - {name: hpc-0, cpu: 8, memory: 32Gi}
)");
  ASSERT_FALSE(r.spec.has_value());
  EXPECT_NE(r.diagnostics.ToString().find(
                "clusters[0].runAs: runAs is for local clusters, whose agents run the tasks; a "
                "slurm cluster runs them as its own system does"),
            std::string::npos)
      << r.diagnostics.ToString();
}

TEST(RunAs, HostAccountNames) {
  EXPECT_TRUE(ValidHostAccountName("www-data"));
  EXPECT_TRUE(ValidHostAccountName("_svc.ml1"));
  EXPECT_TRUE(ValidHostAccountName("machine$"));
  EXPECT_FALSE(ValidHostAccountName(""));
  EXPECT_FALSE(ValidHostAccountName("1abc"));
  EXPECT_FALSE(ValidHostAccountName("Alice"));
  EXPECT_FALSE(ValidHostAccountName("$"));
  EXPECT_FALSE(ValidHostAccountName(std::string(33, 'a')));
}

}  // namespace
}  // namespace tessera
