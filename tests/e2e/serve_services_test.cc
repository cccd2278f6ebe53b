// Services through `tessera serve` end to end: a real daemon, a real store, loopback HTTP.
// Replicas follow the load (curve, then reported), survive a kill -9 without being started
// twice, and stop with their service; bad bodies and other tenants are refused.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "testutil/daemon_process.h"
#include "testutil/run_tessera.h"
#include "testutil/serve_client.h"

namespace tessera {
namespace {

using json = nlohmann::json;
using testing::Body;
using testing::DaemonProcess;
using testing::FreshDir;
using testing::Http;
using testing::RunTessera;
using testing::TokenOf;

using testing::kEnterprise;

// 40 rps at 10 per replica: 4 replicas of one L40S, between 2 and 6.
json Chat() {
  return {{"name", "chat"},
          {"tenant", "consumer/search/assistant"},
          {"priority", "critical"},
          {"replicas", {{"min", 2}, {"max", 6}}},
          {"replica",
           {{"cpu", 8}, {"memory", "64Gi"}, {"devices", {{"count", 1}, {"models", {"L40S"}}}}}},
          {"latencySLO", "800ms"},
          {"serviceTime", "300ms"},
          {"load", {{"peakRps", 40}, {"rpsPerReplica", 10}, {"curve", "flat"}}}};
}

// The service once `running` replicas run and none waits, or as it last was after 30 s.
json WaitForReplicas(Http& h, const std::string& name, int running) {
  json v;
  for (int i = 0; i < 300; ++i) {
    v = Body(h.Get("/v1/services/" + name));
    if (v.is_object() && v["replicas"]["running"] == running && v["replicas"]["pending"] == 0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return v;
}

std::set<int64_t> Ids(const json& service) {
  std::set<int64_t> out;
  for (const json& id : service["replica_jobs"])
    out.insert(id.get<int64_t>());
  return out;
}

TEST(ServeServices, ReplicasFollowTheLoadSurviveAKill9AndStopWithTheirService) {
  auto dir = FreshDir("services");
  DaemonProcess d(dir, kEnterprise);
  d.set_extra_args({"--scale-interval", "1s"});
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());

  auto r = admin.Post("/v1/services", Chat().dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  EXPECT_EQ(r->get_header_value("Location"), "/v1/services/chat");
  EXPECT_EQ(Body(r)["replicas"]["wanted"], 4) << r->body;
  json v = WaitForReplicas(admin, "chat", 4);
  ASSERT_EQ(v["replicas"]["running"], 4) << v.dump();
  EXPECT_EQ(v["load"]["source"], "curve");
  EXPECT_EQ(v["load"]["rps"], 40);
  // Replicas are jobs of the service's tenant, named after it.
  json job = Body(admin.Get("/v1/jobs/chat-r0"));
  EXPECT_EQ(job["class"], "inference") << job.dump();
  EXPECT_EQ(job["tenant"], "consumer/search/assistant");
  EXPECT_EQ(job["state"], "running");
  EXPECT_EQ(job["placement"][0]["model"], "L40S") << job.dump();

  // A reported load replaces the curve at once: 15 rps wants 2 (the newest are cancelled).
  r = admin.Post("/v1/services/chat/load", R"({"rps": 15})");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  EXPECT_EQ(Body(r)["load"]["source"], "reported");
  EXPECT_EQ(Body(r)["replicas"]["wanted"], 2);
  v = WaitForReplicas(admin, "chat", 2);
  EXPECT_EQ(v["replicas"]["running"], 2) << v.dump();
  EXPECT_EQ(Ids(v).size(), 2u);
  EXPECT_EQ(Body(admin.Get("/v1/jobs/chat-r3"))["state"], "cancelled");
  EXPECT_EQ(Body(admin.Get("/v1/jobs/chat-r0"))["state"], "running");
  // 100 rps would want 10: the maximum is 6.
  r = admin.Post("/v1/services/chat/load", R"({"rps": 100})");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  EXPECT_EQ(Body(r)["replicas"]["wanted"], 6);
  v = WaitForReplicas(admin, "chat", 6);
  ASSERT_EQ(v["replicas"]["running"], 6) << v.dump();
  std::string metrics = Http(d.url()).Get("/metrics")->body;
  EXPECT_NE(metrics.find(R"(tessera_service_replicas{service="chat",state="running"} 6)"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find(R"(tessera_service_load_rps{service="chat"} 100)"), std::string::npos)
      << metrics;

  // kill -9: the service is back, its running replicas go on where they were (none started
  // again); the reported load is gone, so the curve's 4 are kept and the newest 2 cancelled.
  const std::set<int64_t> before = Ids(v);
  const size_t jobs_before = Body(admin.Get("/v1/jobs?limit=1000"))["items"].size();
  // The runs' starts are written behind the engine (a run seen but not yet written starts
  // again after a crash); explain reads the store after everything queued before it.
  for (int64_t id : before) {
    json e = Body(admin.Get("/v1/jobs/" + std::to_string(id) + "/explain"));
    ASSERT_EQ(e["decisions"].back()["kind"], "start") << e.dump();
  }
  d.Kill9();
  ASSERT_TRUE(d.Start()) << d.log();
  Http again(d.url(), d.admin_token());  // a new port
  v = WaitForReplicas(again, "chat", 4);
  ASSERT_EQ(v["replicas"]["running"], 4) << v.dump();
  EXPECT_EQ(v["load"]["source"], "curve");
  for (int64_t id : Ids(v)) {
    EXPECT_TRUE(before.count(id)) << id << " is a new replica";
    json e = Body(again.Get("/v1/jobs/" + std::to_string(id) + "/explain"));
    EXPECT_EQ(e["decisions"].back()["reason"], "adopted") << e.dump();
    EXPECT_EQ(Body(again.Get("/v1/jobs/" + std::to_string(id)))["restarts"], 0);
  }
  EXPECT_EQ(Body(again.Get("/v1/jobs?limit=1000"))["items"].size(), jobs_before);

  // Deleted: its replicas are cancelled; it stays deleted across a restart.
  r = again.Delete("/v1/services/chat");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  EXPECT_EQ(Body(r)["state"], "deleted");
  for (int64_t id : Ids(v)) {
    json j = Body(again.Get("/v1/jobs/" + std::to_string(id)));
    EXPECT_EQ(j["state"], "cancelled") << j.dump();
  }
  EXPECT_EQ(again.Get("/v1/services/chat")->status, 404);
  d.Kill9();
  ASSERT_TRUE(d.Start()) << d.log();
  Http third(d.url(), d.admin_token());
  EXPECT_EQ(third.Get("/v1/services/chat")->status, 404);
  EXPECT_EQ(Body(third.Get("/v1/services"))["items"].size(), 0u);
  EXPECT_EQ(Body(third.Get("/v1/jobs?state=active&limit=1000"))["items"].size(), 0u);
  EXPECT_EQ(d.Stop(), 0) << d.log();
}

TEST(ServeServices, AReloadKeepsReplicasWhereTheyRunOrMarksTheServiceInvalid) {
  auto dir = FreshDir("services-reload");
  std::filesystem::path conf = dir / "conf";
  std::filesystem::copy(kEnterprise, conf, std::filesystem::copy_options::recursive);
  DaemonProcess d(dir, conf.string());
  d.set_extra_args({"--scale-interval", "1s"});
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  ASSERT_EQ(admin.Post("/v1/services", Chat().dump())->status, 201);
  json v = WaitForReplicas(admin, "chat", 4);
  ASSERT_EQ(v["replicas"]["running"], 4) << v.dump();
  const std::set<int64_t> before = Ids(v);

  // The same configuration again: the replicas rejoin the service where they run.
  auto r = admin.Post("/v1/policies/reload", "");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  EXPECT_EQ(Body(r)["jobs"]["resumed"], 4) << r->body;
  v = WaitForReplicas(admin, "chat", 4);
  EXPECT_EQ(v["state"], "active");
  EXPECT_EQ(Ids(v), before) << v.dump();
  for (int64_t id : before) {
    json e = Body(admin.Get("/v1/jobs/" + std::to_string(id) + "/explain"));
    EXPECT_EQ(e["decisions"].back()["reason"], "adopted") << e.dump();
  }

  // The service's tenant renamed: the service is invalid, with the reason, and runs nothing.
  std::filesystem::remove(conf / "jobs.yaml");
  std::filesystem::remove(conf / "services.yaml");
  std::string tenants = testing::ReadText(conf / "tenants.yaml");
  size_t at = tenants.find("- name: assistant\n");
  ASSERT_NE(at, std::string::npos);
  tenants.replace(at, 17, "- name: assistant2");
  std::ofstream(conf / "tenants.yaml") << tenants;
  r = admin.Post("/v1/policies/reload", "");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  ASSERT_EQ(Body(r)["applied"], true) << r->body;
  v = Body(admin.Get("/v1/services/chat"));
  EXPECT_EQ(v["state"], "invalid") << v.dump();
  EXPECT_NE(v.value("error", "").find("consumer/search/assistant"), std::string::npos) << v.dump();
  EXPECT_EQ(v["replicas"]["running"], 0);
  for (int64_t id : before) {
    json j = Body(admin.Get("/v1/jobs/" + std::to_string(id)));
    EXPECT_TRUE(j["state"] == "failed" || j["state"] == "cancelled") << j.dump();
  }
  EXPECT_EQ(admin.Post("/v1/services/chat/load", R"({"rps": 5})")->status, 409);
  EXPECT_EQ(admin.Delete("/v1/services/chat")->status, 200);
  EXPECT_EQ(admin.Get("/v1/services/chat")->status, 404);
  EXPECT_EQ(d.Stop(), 0) << d.log();
}

TEST(ServeServices, BadBodiesAndOtherTenantsAreRefusedAndChangeNothing) {
  auto dir = FreshDir("services-bad");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  Http search(d.url(), TokenOf(admin, "sam", "member", "consumer/search"));
  Http ads(d.url(), TokenOf(admin, "adam", "member", "consumer/ads"));
  Http viewer(d.url(), TokenOf(admin, "vic", "viewer", "consumer"));
  ASSERT_FALSE(search.token.empty() || ads.token.empty() || viewer.token.empty());

  auto r = search.Post("/v1/services", "{");
  EXPECT_EQ(r->status, 400) << r->body;
  json bad = Chat();
  bad["colour"] = "red";
  r = search.Post("/v1/services", bad.dump());
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(Body(r)["field"], "colour") << r->body;
  bad = Chat();
  bad["replicas"]["min"] = 9;
  r = search.Post("/v1/services", bad.dump());
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(Body(r)["field"], "replicas.min") << r->body;
  bad = Chat();
  bad["name"] = "../x";
  EXPECT_EQ(search.Post("/v1/services", bad.dump())->status, 400);
  // Another tenant's, and a viewer's, submissions are refused.
  EXPECT_EQ(ads.Post("/v1/services", Chat().dump())->status, 403);
  EXPECT_EQ(viewer.Post("/v1/services", Chat().dump())->status, 403);
  EXPECT_EQ(Body(admin.Get("/v1/services"))["items"].size(), 0u);

  r = search.Post("/v1/services", Chat().dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  r = search.Post("/v1/services", Chat().dump());
  EXPECT_EQ(r->status, 200);  // the same service again: a replay
  EXPECT_EQ(r->get_header_value("Idempotent-Replayed"), "true");
  json other = Chat();
  other["replicas"]["max"] = 8;
  EXPECT_EQ(search.Post("/v1/services", other.dump())->status, 409);

  // Another tenant does not see it; a viewer of the organisation sees it but changes nothing.
  EXPECT_EQ(ads.Get("/v1/services/chat")->status, 404);
  EXPECT_EQ(Body(ads.Get("/v1/services"))["items"].size(), 0u);
  EXPECT_EQ(ads.Delete("/v1/services/chat")->status, 404);
  EXPECT_EQ(ads.Post("/v1/services/chat/load", R"({"rps": 1})")->status, 404);
  EXPECT_EQ(viewer.Get("/v1/services/chat")->status, 200);
  EXPECT_EQ(viewer.Delete("/v1/services/chat")->status, 403);
  EXPECT_EQ(viewer.Post("/v1/services/chat/load", R"({"rps": 1})")->status, 403);

  // Load reports are checked field by field.
  for (const auto& [body, field] :
       std::vector<std::pair<std::string, std::string>>{{R"({"rps": -1})", "rps"},
                                                        {R"({"rps": "many"})", "rps"},
                                                        {R"({"rpm": 5})", "rpm"},
                                                        {"{}", "rps"},
                                                        {"[1]", ""}}) {
    r = search.Post("/v1/services/chat/load", body);
    EXPECT_EQ(r->status, 400) << body;
    EXPECT_EQ(Body(r).value("field", ""), field) << body << " " << r->body;
  }
  json v = Body(search.Get("/v1/services/chat"));
  EXPECT_EQ(v["load"]["source"], "curve") << v.dump();
  EXPECT_EQ(v["spec"]["replicas"]["max"], 6);

  json audit = Body(admin.Get("/v1/audit?limit=1000"));
  int posts = 0;
  for (const json& a : audit["items"])
    posts += a["path"] == "/v1/services";
  EXPECT_EQ(posts, 9) << audit.dump();
  EXPECT_EQ(d.Stop(), 0) << d.log();
}

TEST(ServeServices, TheCliSubmitsListsDescribesAndDeletesServices) {
  auto dir = FreshDir("services-cli");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  const std::string file = (dir / "services.yaml").string();
  std::ofstream(file) << "services:\n  - " << Chat().dump() << "\n";
  std::string out;
  ASSERT_EQ(RunTessera("submit -f " + file, &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("service chat submitted (consumer/search/assistant)"), std::string::npos)
      << out;
  ASSERT_EQ(RunTessera("get services", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("RUNNING/WANTED"), std::string::npos) << out;
  EXPECT_NE(out.find("chat"), std::string::npos) << out;
  EXPECT_NE(out.find("40 rps (curve)"), std::string::npos) << out;
  ASSERT_EQ(RunTessera("describe service chat", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("Service:    chat"), std::string::npos) << out;
  EXPECT_NE(out.find("SLO:        800 ms"), std::string::npos) << out;
  ASSERT_EQ(RunTessera("get services -o json", &out, false, d.CliEnv()), 0) << out;
  EXPECT_EQ(json::parse(out, nullptr, false)["items"][0]["replicas"]["wanted"], 4) << out;
  ASSERT_EQ(RunTessera("delete service chat", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("service chat deleted"), std::string::npos) << out;
  EXPECT_EQ(RunTessera("describe service chat", &out, true, d.CliEnv()), 5) << out;
  EXPECT_EQ(RunTessera("delete service chat", &out, true, d.CliEnv()), 5) << out;

  // The example's services, as the README's demo submits them.
  ASSERT_EQ(RunTessera("submit -f " + kEnterprise + "/services.yaml", &out, true, d.CliEnv()), 0)
      << out;
  for (const char* name : {"assistant-chat", "search-rerank", "assistant-sg", "creative-image-gen"})
    EXPECT_NE(out.find(std::string("service ") + name + " submitted"), std::string::npos) << out;
  ASSERT_EQ(RunTessera("get services -o json", &out, false, d.CliEnv()), 0) << out;
  json all = json::parse(out, nullptr, false);
  ASSERT_EQ(all["items"].size(), 4u) << out;
  for (const json& v : all["items"]) {
    EXPECT_EQ(v["state"], "active") << v.dump();
    EXPECT_GE(v["replicas"]["wanted"], v["replicas"]["min"]) << v.dump();
  }
  EXPECT_EQ(d.Stop(), 0) << d.log();
}

}  // namespace
}  // namespace tessera
