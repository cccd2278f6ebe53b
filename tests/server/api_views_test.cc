// The daemon's views as the API renders them, without a daemon: the shapes docs/api.md names,
// what a caller may not see (an agent's id), rounding, and the optional parts.
#include "server/api_views.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

using json = nlohmann::ordered_json;

NodeView GpuNode() {
  NodeView n;
  n.name = "gpu-0";
  n.cluster = "north";
  n.state = "ready";
  n.cpu = 64 * kMilliPerUnit;
  n.cpu_free = 62500;
  n.memory_mib = 512 * 1024;
  n.memory_free_mib = 1024;
  n.devices.push_back({"H800", 8, 7500});
  n.jobs.push_back({17, "train", "acme/prod"});
  return n;
}

TEST(ApiViews, ANodeNamesItsJobsByIdAndNameAndItsCapacityInUnits) {
  json out = ToJson(GpuNode());
  EXPECT_EQ(out["state"], "ready");
  EXPECT_EQ(out["cpu_free"], 62.5);
  EXPECT_EQ(out["devices"][0], json({{"model", "H800"}, {"count", 8}, {"free", 7.5}}));
  EXPECT_EQ(out["jobs"], json::parse(R"([{"id":17,"name":"train"}])"));
  EXPECT_TRUE(out["agent"].is_null());
  EXPECT_TRUE(out["slurm"].is_null());
  EXPECT_FALSE(out.contains("cordoned_by"));
}

TEST(ApiViews, AnAgentsIdIsShownOnlyToThoseWhoMaySeeIt) {
  NodeView n = GpuNode();
  n.agent = AgentNodeStatus{"agent-7", "10.0.0.7", true, 1000, 64000, 512, 1500, 100, {}, 2};
  n.agent->gpus.push_back({0, "GPU-1", "NVIDIA H800", 81920, 1024, 0.5});
  n.agent_mismatch = "the fleet declares 8 devices on this node; the agent's host has 1";
  json hidden = ToJson(n)["agent"];
  EXPECT_FALSE(hidden.contains("agent"));
  EXPECT_EQ(hidden["address"], "10.0.0.7");
  EXPECT_EQ(hidden["gpus"][0]["utilization"], 0.5);
  EXPECT_EQ(hidden["mismatch"], n.agent_mismatch);
  n.show_agent_id = true;
  json shown = ToJson(n)["agent"];
  EXPECT_EQ(shown["agent"], "agent-7");
  // The fields keep the order the fleet view has always had: by name, the mismatch last.
  std::vector<std::string> keys;
  for (const auto& [key, value] : shown.items())
    keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"address", "agent", "cpu", "cpu_used", "gpus",
                                            "last_seen_ms", "live", "memory_mib", "memory_used_mib",
                                            "tasks", "mismatch"}));
}

TEST(ApiViews, ASlurmNodeAndAConfigurationCordonAreShown) {
  NodeView n = GpuNode();
  n.state = "cordoned";
  n.cordoned_by_config = true;
  n.slurm = SlurmNode{"idle", 64, 515000, 4};
  n.slurm_mismatch = "the fleet declares 8 devices on this node; Slurm's GRES has 4";
  json out = ToJson(n);
  EXPECT_EQ(out["cordoned_by"], "configuration");
  EXPECT_EQ(out["slurm"]["gpus"], 4);
  EXPECT_EQ(out["slurm"]["mismatch"], n.slurm_mismatch);
}

TEST(ApiViews, ATenantsUnlimitedQuotaIsNullAndItsBudgetInUnits) {
  TenantView t{"acme/prod", {}, 250 * kMilliPerUnit};
  t.quotas.push_back({"H800", 2000, 8000, std::nullopt, false});
  t.quotas.push_back({"A100", 4000, 0, 16000, true});
  json out = ToJson(t);
  EXPECT_TRUE(out["quotas"][0]["limit"].is_null());
  EXPECT_EQ(out["quotas"][1]["limit"], 16.0);
  EXPECT_EQ(out["quotas"][1]["borrowing"], true);
  EXPECT_EQ(out["budget_per_day"], 250.0);
  EXPECT_FALSE(ToJson(TenantView{"acme", {}, std::nullopt}).contains("budget_per_day"));
}

TEST(ApiViews, AServiceSaysItsStateAndItsSloAttainment) {
  ServiceView s;
  s.name = "chat";
  s.body = R"({"name":"chat"})";
  s.rps = 12.34567;
  s.requests = 1000;
  s.served = 987.6;
  json out = ToJson(s);
  EXPECT_EQ(out["state"], "active");
  EXPECT_EQ(out["load"]["rps"], 12.346);
  EXPECT_EQ(out["slo"]["attainment"], 0.9876);
  EXPECT_EQ(out["spec"]["name"], "chat");
  s.error = "the model is gone";
  EXPECT_EQ(ToJson(s)["state"], "invalid");
  EXPECT_EQ(ToJson(s)["error"], "the model is gone");
  s.deleted = true;
  EXPECT_EQ(ToJson(s)["state"], "deleted");
  s.requests = 0;
  EXPECT_TRUE(ToJson(s)["slo"]["attainment"].is_null());
}

TEST(ApiViews, TheDecisionLogNamesEachJobAndTheNextPage) {
  DecisionPage page;
  page.items.push_back(
      {{41, 5000, "start", 17, "placed", R"({"nodes":["gpu-0"]})"}, {17, "train", "acme/prod"}});
  page.items.push_back({{42, 6000, "finish", 17, "done", ""}, {17, "train", "acme/prod"}});
  json out = ToJson(page);
  EXPECT_FALSE(out.contains("next"));
  EXPECT_EQ(out["items"][0]["seq"], 41);
  EXPECT_EQ(out["items"][0]["job"]["tenant"], "acme/prod");
  EXPECT_EQ(out["items"][0]["detail"]["nodes"][0], "gpu-0");
  EXPECT_FALSE(out["items"][1].contains("detail"));
  page.next = 42;
  EXPECT_EQ(ToJson(page)["next"], 42);
  // A job's own log has neither seq nor job.
  json own = ToJson(page.items[0].decision, nullptr);
  EXPECT_FALSE(own.contains("seq"));
  EXPECT_FALSE(own.contains("job"));
}

TEST(ApiViews, AnExplanationSaysWhyPendingOrWhyHere) {
  JobExplanation e;
  e.job.id = 3;
  e.job.state = "pending";
  e.job.reason = "quota";
  e.job.detail = "acme/prod is at its H800 limit";
  json pending = ToJson(e);
  EXPECT_EQ(pending["why_pending"]["code"], "quota");
  EXPECT_FALSE(pending.contains("why_here"));
  EXPECT_TRUE(pending["decisions"].empty());
  e.job.state = "running";
  e.job.detail = "best score";
  json running = ToJson(e);
  EXPECT_EQ(running["why_here"], "best score");
  EXPECT_TRUE(running["placement"].is_array());
}

TEST(ApiViews, SpendingIsRoundedToATenThousandth) {
  SpendingReport r{"project", 0, 3600000, "USD", 1234567, {{"acme/prod", 1234567}}};
  json out = ToJson(r);
  EXPECT_EQ(out["total"], 1.2346);
  EXPECT_EQ(out["items"][0], json({{"project", "acme/prod"}, {"amount", 1.2346}}));
}

TEST(ApiViews, AReloadReportsErrorsOrChangesAndWhatItDidToTheJobs) {
  ReloadReport bad;
  bad.errors.Error(SourcePos{"fleet.yaml", 12, 7}, "clusters[0].name", "expected a string");
  json refused = ToJson(bad);
  EXPECT_EQ(refused["ok"], false);
  EXPECT_EQ(refused["errors"][0]["line"], 12);
  EXPECT_FALSE(refused.contains("changes"));
  ReloadReport good;
  good.ok = good.applied = true;
  good.changes.push_back({"clusters", {"emu2"}, {}});
  good.jobs = ReloadReport::Jobs{1, 0, 2, 0};
  json applied = ToJson(good);
  EXPECT_EQ(applied["changes"]["clusters"]["added"][0], "emu2");
  EXPECT_TRUE(applied["changes"]["clusters"]["removed"].empty());
  EXPECT_EQ(applied["jobs"]["queued"], 2);
}

}  // namespace
}  // namespace tessera
