// `tessera serve` end to end over loopback: a real daemon process, a real SQLite file, real
// HTTP. Submission, explain, restart after kill -9, idempotency, bad input, and tenant
// isolation endpoint by endpoint.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "store/sqlite.h"
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

using testing::kEnterprise;

// A small job of `tenant` (JSON), named `name`.
std::string JobBody(const std::string& name, const std::string& tenant,
                    const std::string& runtime = "1h") {
  return json{
      {"name", name},
      {"class", "batch"},
      {"tenant", tenant},
      {"runtime", runtime},
      {"taskGroups", json::array({{{"name", "w"}, {"count", 1}, {"cpu", 2}, {"memory", "8Gi"}}})}}
      .dump();
}

// The job `ref` as `h` sees it once in `state`, or as it last was after `tries` looks 100 ms
// apart.
json WaitForState(Http& h, const std::string& ref, const std::string& state, int tries = 100) {
  json job;
  for (int i = 0; i < tries; ++i) {
    job = Body(h.Get("/v1/jobs/" + ref));
    if (job.is_object() && job["state"] == state) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return job;
}

size_t JobCount(Http& admin) {
  auto r = admin.Get("/v1/jobs?limit=1000");
  return r && r->status == 200 ? Body(r)["items"].size() : 0;
}

// Field `key` of the daemon's "state restored" log line (null when there is none).
json Restored(const DaemonProcess& d, const std::string& key) {
  std::istringstream lines(d.log());
  for (std::string line; std::getline(lines, line);) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("msg", "") == "state restored") return j[key];
  }
  return nullptr;
}

TEST(Serve, TheExampleJobsRunAreExplainedAndSurviveAKill9) {
  auto dir = FreshDir("example");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  std::string out;
  ASSERT_EQ(RunTessera("submit -f " + kEnterprise + "/jobs.yaml", &out, true, d.CliEnv()), 0)
      << out;
  EXPECT_NE(out.find("job 1 llm-pretrain-70b submitted"), std::string::npos) << out;
  // The engine starts them within a cycle; wait for the first to run.
  for (int i = 0; i < 50; ++i) {
    RunTessera("get jobs -o json", &out, false, d.CliEnv());
    if (json::parse(out, nullptr, false)["items"][0]["state"] == "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  json jobs = json::parse(out, nullptr, false);
  ASSERT_EQ(jobs["items"].size(), 10u) << out;
  EXPECT_EQ(jobs["items"][0]["state"], "running") << out;
  ASSERT_EQ(RunTessera("explain job vision-backbone", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("Why here: "), std::string::npos) << out;
  EXPECT_NE(out.find("passed over"), std::string::npos) << out;
  ASSERT_EQ(RunTessera("explain job vision-backbone -o json", &out, false, d.CliEnv()), 0) << out;
  const json why_here = json::parse(out, nullptr, false)["why_here"];
  ASSERT_TRUE(why_here.is_string() && !why_here.get<std::string>().empty()) << out;
  ASSERT_EQ(RunTessera("describe job llm-pretrain-70b", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("north-h800-gpu-0063"), std::string::npos) << out;

  d.Kill9();
  ASSERT_TRUE(d.Start()) << d.log();
  // Every job read back from its resolved form, none checked again from its submission.
  EXPECT_EQ(Restored(d, "jobs"), 10) << d.log();
  EXPECT_EQ(Restored(d, "rechecked"), 0) << d.log();
  ASSERT_EQ(RunTessera("get jobs -o json", &out, false, d.CliEnv()), 0) << out;
  json after = json::parse(out, nullptr, false);
  ASSERT_EQ(after["items"].size(), 10u) << out;
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(after["items"][i]["id"], jobs["items"][i]["id"]);
    EXPECT_EQ(after["items"][i]["name"], jobs["items"][i]["name"]);
  }
  // Every run goes on where it was, none started a second time elsewhere.
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(after["items"][i]["state"], "running") << out;
    EXPECT_EQ(after["items"][i]["placement"], jobs["items"][i]["placement"]) << out;
    EXPECT_EQ(after["items"][i]["restarts"], 0) << out;
    EXPECT_EQ(after["items"][i]["first_start_ms"], jobs["items"][i]["first_start_ms"]) << out;
  }
  // Why each runs where it does outlives the process that decided it.
  ASSERT_EQ(RunTessera("explain job vision-backbone -o json", &out, false, d.CliEnv()), 0) << out;
  EXPECT_EQ(json::parse(out, nullptr, false)["why_here"], why_here) << out;
  ASSERT_EQ(RunTessera("explain job 1 -o json", &out, false, d.CliEnv()), 0) << out;
  json e = json::parse(out, nullptr, false);
  ASSERT_EQ(e["decisions"].size(), 2u) << out;
  EXPECT_EQ(e["decisions"][1]["kind"], "start") << out;
  EXPECT_EQ(e["decisions"][1]["reason"], "adopted") << out;
  EXPECT_EQ(d.Stop(), 0) << d.log();
}

// Starts the daemon and submits the example's jobs; returns once job 3 runs.
void StartWithTheExampleJobs(DaemonProcess& d) {
  ASSERT_TRUE(d.Start()) << d.log();
  std::string out;
  ASSERT_EQ(RunTessera("submit -f " + kEnterprise + "/jobs.yaml", &out, true, d.CliEnv()), 0)
      << out;
  Http admin(d.url(), d.admin_token());
  for (int i = 0; i < 50 && Body(admin.Get("/v1/jobs/3"))["state"] != "running"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(Body(admin.Get("/v1/jobs/3"))["state"], "running");
}

TEST(Serve, ARunThatCannotBeResumedWhereItWasIsRequeuedOnRestart) {
  auto dir = FreshDir("resume");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_NO_FATAL_FAILURE(StartWithTheExampleJobs(d));
  Http admin(d.url(), d.admin_token());
  d.Kill9();
  {
    // What the store says of two runs no longer holds: job 1's node left the fleet, job 2's
    // placement cannot be read.
    auto db = Sqlite::Open(d.store().string());
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE((*db)
                    ->Exec("UPDATE jobs SET placement = '[{\"node\":\"gone-0001\",\"cpu\":1000,"
                           "\"memory\":1024,\"devices\":[]}]' WHERE id = 1")
                    .ok());
    ASSERT_TRUE((*db)->Exec("UPDATE jobs SET placement = '[{\"node\":' WHERE id = 2").ok());
  }
  d.KeepPort();  // the client keeps its address
  ASSERT_TRUE(d.Start()) << d.log();
  for (const auto& [id, note] : std::vector<std::pair<std::string, std::string>>{
           {"1", "the run could not be resumed where it was: node \"gone-0001\" is gone"},
           {"2", "the run could not be resumed where it was: no stored placement"}}) {
    json job = Body(admin.Get("/v1/jobs/" + id));
    EXPECT_EQ(job["restarts"], 1) << job;
    json e = Body(admin.Get("/v1/jobs/" + id + "/explain"));
    bool requeued = false;
    for (const json& line : e["decisions"]) {
      if (line["kind"] == "requeue" && line["reason"] == "daemon-restart") {
        requeued = true;
        EXPECT_EQ(line["detail"]["note"], note) << e;
      }
    }
    EXPECT_TRUE(requeued) << e;
  }
  // The others go on where they were.
  json third = Body(admin.Get("/v1/jobs/3"));
  EXPECT_EQ(third["state"], "running") << third;
  EXPECT_EQ(third["restarts"], 0) << third;
  EXPECT_EQ(d.Stop(), 0) << d.log();
}

// One integer the query selects from the store at `path`.
int64_t StoredInt(const std::string& path, const std::string& sql) {
  auto db = Sqlite::Open(path);
  EXPECT_TRUE(db.ok()) << db.status().message();
  if (!db.ok()) return -1;
  auto q = (*db)->Prepare(sql);
  EXPECT_TRUE(q.ok()) << sql;
  int64_t v = -1;
  if (q.ok()) {
    EXPECT_TRUE(q->Each([&] { v = q->Int(0); }).ok()) << sql;
  }
  return v;
}

TEST(Serve, AResumedRunKeepsItsProgressAndAGapInTheIdsStaysHidden) {
  auto dir = FreshDir("progress");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_NO_FATAL_FAILURE(StartWithTheExampleJobs(d));
  Http admin(d.url(), d.admin_token());
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // a mark of being alive
  d.Kill9();
  const std::string store = d.store().string();
  // Job 9's insert never happened (a gap in the ids, as a failed insert leaves).
  {
    auto db = Sqlite::Open(store);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("DELETE FROM jobs WHERE id = 9").ok());
  }
  const int64_t started = StoredInt(store, "SELECT run_start_ms FROM jobs WHERE id = 3");
  const int64_t kept = StoredInt(store, "SELECT kept_ms FROM jobs WHERE id = 3");
  // The last moment the killed process is known to have been alive (StoreSnapshot::last_seen).
  const int64_t seen = StoredInt(
      store,
      "SELECT MAX((SELECT MAX(time_ms) FROM decisions), (SELECT MAX(time_ms) FROM audit), "
      "(SELECT MAX(submitted_ms) FROM jobs), (SELECT CAST(value AS INTEGER) FROM meta WHERE "
      "key = 'alive_ms'))");
  ASSERT_GT(started, 0);
  ASSERT_GT(seen, started);
  d.KeepPort();
  ASSERT_TRUE(d.Start()) << d.log();
  EXPECT_EQ(admin.Get("/v1/jobs/9")->status, 404);
  json list = Body(admin.Get("/v1/jobs?limit=100"));
  ASSERT_EQ(list["items"].size(), 9u) << list;
  EXPECT_EQ(list["items"][0]["id"], 10) << list;  // newest first
  EXPECT_EQ(list["total"], 9) << list;
  // /readyz counts the jobs that exist, not the hidden placeholder of the gap.
  EXPECT_EQ(Body(Http(d.url()).Get("/readyz"))["jobs"], 9);
  json third = Body(admin.Get("/v1/jobs/3"));
  EXPECT_EQ(third["state"], "running") << third;
  EXPECT_EQ(third["restarts"], 0) << third;
  // Resumed: its progress until the killed process was last seen is kept, its run starts anew
  // (a second restart counts from here, not from the first start again).
  ASSERT_EQ(d.Stop(), 0) << d.log();
  EXPECT_EQ(StoredInt(store, "SELECT kept_ms FROM jobs WHERE id = 3"), kept + (seen - started));
  EXPECT_GE(StoredInt(store, "SELECT run_start_ms FROM jobs WHERE id = 3"), seen);
  EXPECT_EQ(StoredInt(store, "SELECT first_start_ms FROM jobs WHERE id = 3"),
            third["first_start_ms"].get<int64_t>());
  // Its decisions: the start, then the adoption with its nodes.
  auto db = Sqlite::Open(store);
  ASSERT_TRUE(db.ok());
  auto q =
      (*db)->Prepare("SELECT kind, reason, detail FROM decisions WHERE job_id = 3 ORDER BY seq");
  ASSERT_TRUE(q.ok());
  std::vector<std::string> lines;
  ASSERT_TRUE(
      q->Each([&] { lines.push_back(q->Text(0) + " " + q->Text(1) + " " + q->Text(2)); }).ok());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].rfind("start adopted {\"nodes\":[\"", 0), 0u) << lines[1];
  // The first run's cost rows closed where the killed process was last seen; the resumed
  // run's open from its new start.
  EXPECT_EQ(StoredInt(store, "SELECT MIN(end_ms) FROM costs WHERE job_id = 3"), seen);
  EXPECT_GE(StoredInt(store, "SELECT MAX(start_ms) FROM costs WHERE job_id = 3"), seen);
}

TEST(Serve, AJobWhoseResolvedFormCannotBeReadIsCheckedAgainFromItsSubmission) {
  auto dir = FreshDir("reread");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_NO_FATAL_FAILURE(StartWithTheExampleJobs(d));
  Http admin(d.url(), d.admin_token());
  const json fourth = Body(admin.Get("/v1/jobs/4"));
  d.Kill9();
  {
    // Job 4's resolved form is unreadable, job 5's too and its submission names a tenant the
    // configuration does not have.
    auto db = Sqlite::Open(d.store().string());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("UPDATE jobs SET resolved = '{' WHERE id IN (4, 5)").ok());
    ASSERT_TRUE((*db)
                    ->Exec("UPDATE jobs SET body = json_set(body, '$.tenant', 'nobody/x') "
                           "WHERE id = 5")
                    .ok());
  }
  d.KeepPort();
  ASSERT_TRUE(d.Start()) << d.log();
  json job = Body(admin.Get("/v1/jobs/4"));
  EXPECT_EQ(job["state"], fourth["state"]) << job;
  EXPECT_EQ(job["placement"], fourth["placement"]) << job;
  EXPECT_EQ(job["restarts"], 0) << job;
  EXPECT_EQ(Restored(d, "rechecked"), 2) << d.log();
  job = Body(admin.Get("/v1/jobs/5"));
  EXPECT_EQ(job["state"], "failed") << job;
  EXPECT_EQ(job["reason"], "invalid") << job;
  EXPECT_EQ(job["detail"].get<std::string>().rfind("no longer valid under the configuration", 0),
            0u)
      << job;
  EXPECT_NE(job["detail"].get<std::string>().find("nobody/x"), std::string::npos) << job;
  EXPECT_EQ(d.Stop(), 0) << d.log();
}

TEST(Serve, AFinishedJobIsRecordedAndACancelledOneStops) {
  auto dir = FreshDir("finish");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  auto r = admin.Post("/v1/jobs", JobBody("quick", "consumer/ads/ctr", "1s"));
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  r = admin.Post("/v1/jobs", JobBody("long", "consumer/ads/ctr", "10h"));
  ASSERT_TRUE(r && r->status == 201);
  json quick;
  quick = WaitForState(admin, "quick", "succeeded");
  EXPECT_EQ(quick["state"], "succeeded") << quick.dump();
  EXPECT_TRUE(quick["finished_ms"].is_number()) << quick.dump();
  r = admin.Post("/v1/jobs/long/cancel", "");
  ASSERT_TRUE(r && r->status == 202) << (r ? r->body : "no answer");
  EXPECT_EQ(Body(admin.Get("/v1/jobs/long"))["state"], "cancelled");
  // Cancelling twice is a conflict, not a second change.
  r = admin.Post("/v1/jobs/long/cancel", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 409);
  // A finished job keeps its name free: the same name may run again.
  r = admin.Post("/v1/jobs", JobBody("quick", "consumer/ads/ctr", "1s"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201) << r->body;
}

TEST(Serve, AnIdempotencyKeyMakesARetriedSubmissionOneJob) {
  auto dir = FreshDir("idem");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  std::string body = JobBody("once", "consumer/ads/ctr");
  auto first = admin.Post("/v1/jobs", body, {{"Idempotency-Key", "k-1"}});
  auto second = admin.Post("/v1/jobs", body, {{"Idempotency-Key", "k-1"}});
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->status, 201);
  EXPECT_EQ(second->status, 200);
  EXPECT_EQ(second->get_header_value("Idempotent-Replayed"), "true");
  EXPECT_EQ(Body(first)["id"], Body(second)["id"]);
  // The same document re-indented (a client that formats its JSON otherwise on the retry) is the
  // same request: replayed, not refused.
  auto reindented = admin.Post("/v1/jobs", json::parse(body).dump(4), {{"Idempotency-Key", "k-1"}});
  ASSERT_TRUE(reindented);
  EXPECT_EQ(reindented->status, 200) << reindented->body;
  EXPECT_EQ(Body(reindented)["id"], Body(first)["id"]);
  // The same key with another body is refused, not silently answered with the first job.
  auto other =
      admin.Post("/v1/jobs", JobBody("twice", "consumer/ads/ctr"), {{"Idempotency-Key", "k-1"}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 409) << other->body;
  EXPECT_EQ(JobCount(admin), 1u);
  // After a restart the key is still known.
  d.Kill9();
  ASSERT_TRUE(d.Start()) << d.log();
  Http again(d.url(), d.admin_token());
  auto third = again.Post("/v1/jobs", body, {{"Idempotency-Key", "k-1"}});
  ASSERT_TRUE(third);
  EXPECT_EQ(third->status, 200);
  EXPECT_EQ(JobCount(again), 1u);
}

TEST(Serve, BadRequestsGetAClearErrorAndChangeNothing) {
  auto dir = FreshDir("bad");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  struct BadRequest {
    std::string what, body;
    int status;
    std::string field, message;
  };
  std::vector<BadRequest> cases = {
      {"malformed JSON", R"({"name": "x", )", 400, "", "syntax error"},
      {"wrong type", R"({"name": "x", "class": "batch", "tenant": "consumer/ads/ctr",
        "taskGroups": [{"count": "many", "cpu": 1, "memory": "1Gi"}]})",
       400, "taskGroups[0].count", ""},
      {"missing field", R"({"name": "x", "class": "batch", "taskGroups": []})", 400, "tenant", ""},
      {"unknown field", R"({"name": "x", "class": "batch", "tenant": "consumer/ads/ctr",
        "colour": "red", "taskGroups": [{"cpu": 1, "memory": "1Gi"}]})",
       400, "colour", "unknown field"},
      {"path traversal", JobBody("../../etc/passwd", "consumer/ads/ctr"), 400, "name",
       "invalid name"},
      {"unknown tenant", JobBody("x", "nobody/here"), 400, "tenant", "unknown tenant"},
      {"oversized body", std::string(2 << 20, ' '), 413, "", "size limit"},
  };
  for (const BadRequest& c : cases) {
    auto r = admin.Post("/v1/jobs", c.body);
    ASSERT_TRUE(r) << c.what;
    EXPECT_EQ(r->status, c.status) << c.what << ": " << r->body;
    json e = Body(r);
    ASSERT_TRUE(e.is_object()) << c.what << ": " << r->body;
    EXPECT_TRUE(e["code"].is_string()) << c.what;
    EXPECT_TRUE(e["message"].is_string()) << c.what;
    if (!c.field.empty()) {
      EXPECT_EQ(e.value("field", ""), c.field) << c.what << ": " << r->body;
    }
    if (!c.message.empty()) {
      EXPECT_NE(e["message"].get<std::string>().find(c.message), std::string::npos)
          << c.what << ": " << r->body;
    }
  }
  // Credentials: none, malformed, unknown, expired.
  Http anonymous(d.url());
  auto r = anonymous.Post("/v1/jobs", JobBody("x", "consumer/ads/ctr"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  Http wrong(d.url(), "not-a-token");
  r = wrong.Get("/v1/jobs");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  r = admin.Post("/v1/principals",
                 R"({"name": "short-lived", "role": "member", "tenant": "consumer"})");
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  r = admin.Post("/v1/principals/short-lived/tokens", R"({"expires_in_s": 1})");
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  Http expiring(d.url(), Body(r)["token"]);
  EXPECT_EQ(expiring.Get("/v1/jobs")->status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  r = expiring.Get("/v1/jobs");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("expired"), std::string::npos) << r->body;
  // A client that sends half a request and disconnects.
  {
    httplib::Client raw(d.url());
    std::string host = d.url().substr(7);
    std::string cmd = "printf 'POST /v1/jobs HTTP/1.1\\r\\nHost: " + host +
                      "\\r\\nContent-Length: 1000\\r\\nAuthorization: Bearer " + d.admin_token() +
                      "\\r\\n\\r\\n{\"name\"' | timeout 2 python3 -c \"" +
                      "import socket,sys; h,p='" + host.substr(0, host.find(':')) + "'," +
                      host.substr(host.find(':') + 1) +
                      "; s=socket.create_connection((h,p)); s.sendall(sys.stdin.buffer.read()); "
                      "s.close()\"";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  EXPECT_EQ(JobCount(admin), 0u);
  EXPECT_EQ(admin.Get("/healthz")->status, 200);
  // Every refused mutation is in the audit log with its status.
  auto audit = Body(admin.Get("/v1/audit?limit=1000"));
  std::set<int> statuses;
  for (const json& a : audit["items"])
    statuses.insert(a["status"].get<int>());
  EXPECT_TRUE(statuses.count(400) && statuses.count(401)) << audit.dump();
}

TEST(Serve, AMemberSeesAndChangesOnlyItsOwnTenantSubtree) {
  auto dir = FreshDir("tenants");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  auto token_of = [&](const std::string& name, const std::string& role, const std::string& tenant) {
    json p = {{"name", name}, {"role", role}};
    if (!tenant.empty()) p["tenant"] = tenant;
    auto r = admin.Post("/v1/principals", p.dump());
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "");
    r = admin.Post("/v1/principals/" + name + "/tokens", "{}");
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "");
    return Body(r)["token"].get<std::string>();
  };
  Http vision(d.url(), token_of("vera", "member", "ai-lab/applied/vision"));
  Http ads(d.url(), token_of("adam", "member", "consumer/ads"));
  Http viewer(d.url(), token_of("vic", "viewer", "ai-lab"));
  Http op(d.url(), token_of("otto", "operator", ""));

  auto r = vision.Post("/v1/jobs", JobBody("vision-job", "ai-lab/applied/vision"));
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  std::string id = std::to_string(Body(r)["id"].get<int>());
  r = ads.Post("/v1/jobs", JobBody("ads-job", "consumer/ads/creative"));
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");

  // Another tenant's job does not exist for adam, by id or by name, on every endpoint.
  for (const std::string& ref : {id, std::string("vision-job")}) {
    for (const char* tail : {"", "/explain", "/events"}) {
      auto g = ads.Get("/v1/jobs/" + ref + std::string(tail));
      ASSERT_TRUE(g);
      EXPECT_EQ(g->status, 404) << ref << tail << ": " << g->body;
    }
    auto c = ads.Post("/v1/jobs/" + ref + "/cancel", "");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->status, 404) << ref;
  }
  json listed = Body(ads.Get("/v1/jobs"));
  ASSERT_EQ(listed["items"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["items"][0]["name"], "ads-job");
  EXPECT_EQ(Body(ads.Get("/v1/jobs?tenant=ai-lab"))["items"].size(), 0u);
  // adam may not submit into vision's tenant.
  r = ads.Post("/v1/jobs", JobBody("intruder", "ai-lab/applied/vision"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403) << r->body;
  // A viewer of ai-lab reads vision's job, but neither submits nor cancels.
  EXPECT_EQ(viewer.Get("/v1/jobs/" + id)->status, 200);
  EXPECT_EQ(Body(viewer.Get("/v1/jobs"))["items"].size(), 1u);
  EXPECT_EQ(viewer.Post("/v1/jobs", JobBody("v", "ai-lab/applied/vision"))->status, 403);
  EXPECT_EQ(viewer.Post("/v1/jobs/" + id + "/cancel", "")->status, 403);
  // Members read neither the audit log nor create principals or tokens.
  EXPECT_EQ(vision.Get("/v1/audit")->status, 403);
  EXPECT_EQ(vision.Post("/v1/principals", R"({"name": "x", "role": "admin"})")->status, 403);
  EXPECT_EQ(vision.Post("/v1/principals/vera/tokens", "{}")->status, 403);
  // An operator reads everything and the audit log, but submits nothing.
  EXPECT_EQ(Body(op.Get("/v1/jobs"))["items"].size(), 2u);
  EXPECT_EQ(op.Get("/v1/audit")->status, 200);
  EXPECT_EQ(op.Post("/v1/jobs", JobBody("o", "consumer/ads/ctr"))->status, 403);
  // The node the vision job runs on lists it for its owner, not for another project.
  json vjob;
  vjob = WaitForState(admin, id, "running");
  ASSERT_EQ(vjob["state"], "running") << vjob.dump();
  std::string node = vjob["placement"][0]["node"];
  auto on_node = [&](Http& who) {
    std::set<std::string> names;
    json n = Body(who.Get("/v1/nodes/" + node));
    for (const json& j : n["jobs"])
      names.insert(j["name"].get<std::string>());
    return names;
  };
  EXPECT_TRUE(on_node(vision).count("vision-job"));
  EXPECT_FALSE(on_node(ads).count("vision-job"));
  // Spending and quotas: each sees its own subtree only.
  json tenants = Body(ads.Get("/v1/tenants"));
  ASSERT_FALSE(tenants["items"].empty());
  for (const json& t : tenants["items"])
    EXPECT_EQ(t["tenant"].get<std::string>().rfind("consumer/ads", 0), 0u) << t.dump();
  json costs = Body(ads.Get("/v1/costs?by=project"));
  for (const json& c : costs["items"])
    EXPECT_EQ(c["project"].get<std::string>().rfind("consumer/ads", 0), 0u) << c.dump();
  // The owner cancels its own.
  EXPECT_EQ(vision.Post("/v1/jobs/" + id + "/cancel", "")->status, 202);
  EXPECT_EQ(JobCount(admin), 2u);
  // Revoked, vera's token opens nothing, also after a restart; members may not revoke.
  EXPECT_EQ(ads.client.Delete("/v1/principals/vera/tokens", ads.Headers())->status, 403);
  std::string out;
  ASSERT_EQ(RunTessera("token revoke vera", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("revoked 1 token(s) of vera"), std::string::npos) << out;
  EXPECT_EQ(vision.Get("/v1/jobs")->status, 401);
  d.Kill9();
  ASSERT_TRUE(d.Start()) << d.log();
  Http vision_again(d.url(), vision.token);
  EXPECT_EQ(vision_again.Get("/v1/jobs")->status, 401);
  Http admin_again(d.url(), d.admin_token());
  json principals = Body(admin_again.Get("/v1/principals"));
  EXPECT_EQ(principals["items"].size(), 5u) << principals.dump();

  // Deleted, a principal and its tokens are gone, also after a restart; its jobs stay. Only
  // admins delete; never themselves nor the last admin.
  Http ads_again(d.url(), ads.token);
  EXPECT_EQ(ads_again.Delete("/v1/principals/vic")->status, 403);
  EXPECT_EQ(admin_again.Delete("/v1/principals/admin")->status, 409);
  EXPECT_EQ(admin_again.Delete("/v1/principals/nobody")->status, 404);
  ASSERT_EQ(RunTessera("principal delete adam", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("principal adam deleted"), std::string::npos) << out;
  EXPECT_EQ(ads_again.Get("/v1/jobs")->status, 401);
  EXPECT_EQ(RunTessera("principal delete adam", &out, true, d.CliEnv()), 5) << out;
  ASSERT_EQ(admin_again.Post("/v1/principals", R"({"name": "root2", "role": "admin"})")->status,
            201);
  std::string root2 = Body(admin_again.Post("/v1/principals/root2/tokens", "{}"))["token"];
  EXPECT_EQ(Http(d.url(), root2).Delete("/v1/principals/admin")->status, 200);
  EXPECT_EQ(Http(d.url(), root2).Delete("/v1/principals/root2")->status, 409);  // itself
  d.Kill9();
  ASSERT_TRUE(d.Start()) << d.log();
  Http root(d.url(), root2);
  principals = Body(root.Get("/v1/principals"));
  std::set<std::string> names;
  for (const json& p : principals["items"])
    names.insert(p["name"]);
  EXPECT_EQ(names, (std::set<std::string>{"otto", "root2", "vera", "vic"})) << principals.dump();
  EXPECT_EQ(Http(d.url(), d.admin_token()).Get("/v1/jobs")->status, 401);
  EXPECT_EQ(Body(root.Get("/v1/jobs/ads-job"))["submitted_by"], "adam");
}

// kill -9 at random moments during a storm of submissions: every acknowledged submission is
// there exactly once after the restart.
TEST(Serve, Kill9DuringASubmissionStormLosesNothingAcknowledged) {
  auto dir = FreshDir("storm");
  DaemonProcess d(dir, kEnterprise);
  std::mt19937 rng(7);
  std::set<std::string> acknowledged;
  std::mutex mu;
  int round_count = 3;
  for (int round = 0; round < round_count; ++round) {
    ASSERT_TRUE(d.Start()) << d.log();
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int c = 0; c < 8; ++c) {
      clients.emplace_back([&, c] {
        Http h(d.url(), d.admin_token());
        h.client.set_connection_timeout(1);
        for (int i = 0; !stop; ++i) {
          std::string key =
              "r" + std::to_string(round) + "c" + std::to_string(c) + "i" + std::to_string(i);
          auto r = h.Post("/v1/jobs", JobBody(key, "consumer/ads/ctr"), {{"Idempotency-Key", key}});
          if (r && r->status == 201) {
            std::lock_guard<std::mutex> lock(mu);
            acknowledged.insert(key);
          }
          if (!r) break;
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + rng() % 700));
    d.Kill9();
    stop = true;
    for (auto& t : clients)
      t.join();
  }
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  std::multiset<std::string> present;
  int64_t after = 0;
  for (;;) {
    json page = Body(admin.Get("/v1/jobs?limit=1000&after=" + std::to_string(after)));
    for (const json& j : page["items"])
      present.insert(j["name"].get<std::string>());
    if (!page["next"].is_number_integer()) break;  // null on the last (oldest) page
    after = page["next"].get<int64_t>();
  }
  std::printf("kill -9 storm: %zu submissions acknowledged over %d kills, %zu jobs stored\n",
              acknowledged.size(), round_count, present.size());
  EXPECT_GT(acknowledged.size(), 20u) << "the storm submitted too little to test anything";
  for (const std::string& k : acknowledged)
    EXPECT_EQ(present.count(k), 1u) << k;
  for (const std::string& k : present)
    EXPECT_EQ(present.count(k), 1u) << k << " stored twice";
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// The value of one exposition line `series` ("name{labels}"), or -1 when absent.
double Sample(const std::string& text, const std::string& series) {
  size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST(Serve, MetricsShowRequestsDecisionsQueuesAndAllocation) {
  auto dir = FreshDir("metrics");
  DaemonProcess d(dir, kEnterprise);
  d.set_extra_args({"--log-requests"});
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(admin.Post("/v1/jobs", JobBody("m" + std::to_string(i), "consumer/ads/ctr"))->status,
              201);
  }
  // One job beyond its project's limit (creative may hold at most 64 H800): it waits, and
  // says it can never start.
  std::string big =
      json{{"name", "big"},
           {"class", "training"},
           {"tenant", "consumer/ads/creative"},
           {"runtime", "1h"},
           {"taskGroups",
            json::array({{{"count", 16},
                          {"cpu", 8},
                          {"memory", "64Gi"},
                          {"devices", {{"count", 8}, {"models", json::array({"H800"})}}}}})}}
          .dump();
  ASSERT_EQ(admin.Post("/v1/jobs", big)->status, 201);
  EXPECT_EQ(admin.Post("/v1/jobs", "{")->status, 400);
  std::string text;
  // Up to 30 s: a loaded CI machine runs other daemons beside this one. A request is counted
  // once its answer has left (the latency includes sending it): wait for the last one too, and
  // for the engine's pass that judged the last job (the three starts may come before it).
  for (int i = 0; i < 300; ++i) {
    text = Http(d.url()).Get("/metrics")->body;
    if (Sample(text, R"(tessera_decisions_total{kind="start"})") >= 3 &&
        Sample(text,
               R"(tessera_http_requests_total{route="/v1/jobs",method="POST",status="400"})") >=
            1 &&
        Body(admin.Get("/v1/jobs/big"))["reason"] != "New")
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(
      Sample(text, R"(tessera_http_requests_total{route="/v1/jobs",method="POST",status="201"})"),
      4)
      << text;
  EXPECT_EQ(
      Sample(text, R"(tessera_http_requests_total{route="/v1/jobs",method="POST",status="400"})"),
      1)
      << text;
  EXPECT_EQ(Body(admin.Get("/v1/jobs/big"))["reason"], "Infeasible");
  EXPECT_EQ(Sample(text, R"(tessera_decisions_total{kind="start"})"), 3) << text;
  EXPECT_EQ(Sample(text, R"(tessera_queue_depth{class="training",tenant="consumer/ads/creative"})"),
            1)
      << text;
  EXPECT_EQ(Sample(text, R"(tessera_jobs{state="running"})"), 3) << text;
  EXPECT_GT(Sample(text, "tessera_scheduling_cycle_seconds_count"), 0) << text;
  // The cycles' time on a core is a part of their wall time.
  EXPECT_GT(Sample(text, "tessera_scheduling_cycle_cpu_seconds_total"), 0) << text;
  EXPECT_LE(Sample(text, "tessera_scheduling_cycle_cpu_seconds_total"),
            Sample(text, "tessera_scheduling_cycle_seconds_sum"))
      << text;
  EXPECT_EQ(Sample(text, R"(tessera_devices{cluster="north-h800",model="H800"})"), 2048) << text;
  EXPECT_NE(text.find("tessera_http_request_duration_seconds_bucket{route=\"/v1/jobs\""),
            std::string::npos);
  // --log-requests: every request is a JSON line on standard error.
  EXPECT_EQ(d.Stop(), 0);
  std::istringstream log(d.log());
  int created = 0, refused = 0, lines = 0;
  for (std::string line; std::getline(log, line);) {
    json l = json::parse(line, nullptr, false);
    if (!l.is_object()) continue;  // the log file also holds standard output
    ++lines;
    EXPECT_TRUE(l.contains("ts_ms") && l.contains("level")) << line;
    if (l["msg"] != "request" || l["path"] != "/v1/jobs") continue;
    EXPECT_EQ(l["method"], "POST") << line;
    EXPECT_EQ(l["route"], "/v1/jobs") << line;
    EXPECT_GE(l["ms"].get<double>(), 0) << line;
    EXPECT_EQ(l["remote"], "127.0.0.1") << line;
    created += l["status"] == 201;
    refused += l["status"] == 400;
  }
  EXPECT_EQ(created, 4) << d.log();
  EXPECT_EQ(refused, 1) << d.log();
  EXPECT_GT(lines, 5);
}

// The scheduler is the policies' section unless the command line names another; /metrics,
// explain and the decision log say which decided.
TEST(Serve, TheSchedulerFlagsTakeThePlaceOfThePoliciesSection) {
  std::string out;
  EXPECT_EQ(RunTessera("serve --config " + kEnterprise + " --policy lottery", &out, true), 2)
      << out;
  EXPECT_NE(out.find("--policy: expected one of fifo, backfill, las, hetero, got \"lottery\""),
            std::string::npos)
      << out;
  EXPECT_EQ(RunTessera("serve --config " + kEnterprise + " --placement best", &out, true), 2)
      << out;
  EXPECT_NE(out.find("--placement: expected one of random, first-fit, best-fit"), std::string::npos)
      << out;
  auto dir = FreshDir("scheduler-flags");
  DaemonProcess d(dir, kEnterprise);
  d.set_extra_args({"--policy", "las"});
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  json body = json::parse(JobBody("decided", "consumer/ads/ctr"));
  body["deadline"] = "2099-01-01T00:00:00Z";
  ASSERT_EQ(admin.Post("/v1/jobs", body.dump())->status, 201);
  EXPECT_EQ(WaitForState(admin, "decided", "running")["state"], "running");
  // The example's section says backfill and tessera: the flag replaces the policy only.
  const std::string metrics = Http(d.url()).Get("/metrics")->body;
  EXPECT_EQ(Sample(metrics, R"(tessera_scheduler{policy="las",placement="tessera"})"), 1)
      << metrics;
  json explained = Body(admin.Get("/v1/jobs/decided/explain"));
  EXPECT_EQ(explained["scheduler"], json({{"policy", "las"}, {"placement", "tessera"}}));
  ASSERT_EQ(RunTessera("explain job decided", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("Scheduler: las, placement tessera"), std::string::npos) << out;
  // Its deadline: running, an hour's estimate, far from it.
  EXPECT_EQ(explained["deadline"]["state"], "on-track") << explained.dump();
  EXPECT_EQ(explained["deadline"]["end_ms"].get<int64_t>() -
                explained["deadline"]["start_ms"].get<int64_t>(),
            3600 * 1000);
  EXPECT_NE(out.find("Deadline: 2099-01-01T00:00:00Z, on track: start "), std::string::npos) << out;
  EXPECT_EQ(Sample(metrics, R"(tessera_job_deadlines_total{outcome="met"})"), 0) << metrics;
  ASSERT_EQ(RunTessera("get decisions", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("las/tessera"), std::string::npos) << out;
  EXPECT_NE(d.log().find(R"("msg":"scheduler","policy":"las","placement":"tessera")"),
            std::string::npos)
      << d.log();
}

// Under a storm every submission asks for a cycle; --cycle-interval runs at most one per
// interval, each taking what arrived meanwhile (and none between them). Bad values exit 2.
TEST(Serve, ACycleIntervalGathersWhatArrivesMeanwhileIntoFewerCycles) {
  std::string out;
  EXPECT_EQ(RunTessera("serve --config " + kEnterprise + " --cycle-interval 20s", &out, true), 2)
      << out;
  EXPECT_NE(out.find("--cycle-interval: expected a duration from 0 to 10s"), std::string::npos)
      << out;
  EXPECT_EQ(RunTessera("serve --config " + kEnterprise + " --cycle-interval soon", &out, true), 2)
      << out;

  auto dir = FreshDir("cycle-interval");
  DaemonProcess d(dir, kEnterprise);
  d.set_extra_args({"--cycle-interval", "300ms"});
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  auto cycles = [&] {
    return Sample(Http(d.url()).Get("/metrics")->body, "tessera_scheduling_cycle_seconds_count");
  };
  const double before = cycles();
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kJobs = 20;
  for (int i = 0; i < kJobs; ++i) {
    ASSERT_EQ(admin.Post("/v1/jobs", JobBody("c" + std::to_string(i), "consumer/ads/ctr"))->status,
              201);
  }
  size_t running = 0;
  for (int i = 0; i < 300 && running < kJobs; ++i) {
    running = Body(admin.Get("/v1/jobs?state=running&limit=100"))["items"].size();
    if (running < kJobs) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double after = cycles();
  const auto elapsed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_EQ(running, kJobs);
  // Cycles are at least 300 ms apart: at most one more than the intervals that passed.
  EXPECT_LE(after - before, 1 + static_cast<double>(elapsed_ms) / 300)
      << "cycles " << before << " -> " << after << " in " << elapsed_ms << " ms";
  EXPECT_GE(after - before, 1);
  EXPECT_EQ(d.Stop(), 0);
}

// An accepted submission waits for the engine's thread to take it at its next pass (the 10-s
// interval keeps these in its inbox; on a slower machine a pass may take them first, and every
// expectation holds either way): it counts as pending, a cancel and a reload take it first.
TEST(Serve, JobsAcceptedBetweenPassesAreCountedCancellableAndReloaded) {
  auto dir = FreshDir("inbox");
  DaemonProcess d(dir, kEnterprise);
  d.set_extra_args({"--cycle-interval", "10s"});
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  ASSERT_EQ(admin.Post("/v1/jobs", JobBody("inbox-a", "consumer/ads/ctr"))->status, 201);
  ASSERT_EQ(admin.Post("/v1/jobs", JobBody("inbox-b", "consumer/ads/ctr"))->status, 201);
  const json ready = Body(Http(d.url()).Get("/readyz"));
  EXPECT_EQ(ready["pending"].get<int>() + ready["running"].get<int>(), 2) << ready;
  auto cancelled = admin.Post("/v1/jobs/inbox-a/cancel", "");
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->status, 202) << cancelled->body;
  EXPECT_EQ(Body(admin.Get("/v1/jobs/inbox-a"))["state"], "cancelled");
  // The cancel's pass took inbox-b too; inbox-c waits for the next one.
  ASSERT_EQ(admin.Post("/v1/jobs", JobBody("inbox-c", "consumer/ads/ctr"))->status, 201);
  auto reloaded = admin.Post("/v1/policies/reload", "");
  ASSERT_TRUE(reloaded);
  ASSERT_EQ(reloaded->status, 200) << reloaded->body;
  const json jobs = Body(reloaded)["jobs"];
  EXPECT_EQ(jobs["queued"].get<int>() + jobs["resumed"].get<int>(), 2) << reloaded->body;
  EXPECT_EQ(WaitForState(admin, "inbox-b", "running", 250)["state"], "running");
  EXPECT_EQ(WaitForState(admin, "inbox-c", "running", 250)["state"], "running");
  EXPECT_EQ(d.Stop(), 0);
}

// Each thread of process `pid` by name: the nice values of the threads of that name.
std::map<std::string, std::vector<int>> NiceByThread(pid_t pid) {
  std::map<std::string, std::vector<int>> out;
  for (const auto& task :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream comm(task.path() / "comm"), stat(task.path() / "stat");
    std::string name, line;
    std::getline(comm, name);
    std::getline(stat, line);
    // Fields after the command's closing parenthesis: state is field 3, nice field 19.
    std::istringstream fields(line.substr(line.rfind(')') + 2));
    std::vector<std::string> f{std::istream_iterator<std::string>(fields), {}};
    if (f.size() > 16) out[name].push_back(std::stoi(f[16]));
  }
  return out;
}

TEST(Serve, TheEngineThreadComesBeforeTheApisWorkers) {
  auto dir = FreshDir("threads");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  ASSERT_EQ(admin.Post("/v1/jobs", JobBody("t", "consumer/ads/ctr"))->status, 201);
  auto threads = NiceByThread(d.pid());
  ASSERT_EQ(threads["engine"], std::vector<int>{0});
  ASSERT_EQ(threads["store-writer"], std::vector<int>{0});
  ASSERT_EQ(threads["view"], std::vector<int>{0});  // applies what cycles change
  // The workers that answered (at least the submission's) run at nice 10.
  ASSERT_FALSE(threads["api"].empty());
  for (int nice : threads["api"])
    EXPECT_EQ(nice, 10);
  EXPECT_EQ(d.Stop(), 0);
}

// With a backlog of 5 (cpp-httplib's, before the API's own server) a burst of new connections
// had all but a few SYNs dropped, and those clients waited a second for TCP to retry. The
// daemon listens with 4096 (the kernel caps it at net.core.somaxconn), as ss shows.
TEST(Serve, TheApisSocketQueuesABurstOfNewConnections) {
  auto dir = FreshDir("backlog");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  const std::string port = d.url().substr(d.url().rfind(':') + 1);
  std::string out;
  ASSERT_EQ(testing::RunShell("ss -Hltn 'sport = :" + port + "'", &out), 0) << out;
  // LISTEN  0  <backlog>  127.0.0.1:<port>  0.0.0.0:*
  std::istringstream line(out);
  std::string state, queued;
  long backlog = 0;
  line >> state >> queued >> backlog;
  ASSERT_EQ(state, "LISTEN") << out;
  EXPECT_GE(backlog, 128) << out;
  EXPECT_EQ(d.Stop(), 0);
}

TEST(Serve, TheBinaryAllocatesWithHugePagesAndABackgroundPurge) {
  // jemalloc's options compiled into the binary (src/cli/allocator.cc), as its statistics
  // at exit report them.
  std::string out;
  ASSERT_EQ(
      testing::RunShell(
          "MALLOC_CONF=stats_print:true " + std::string(TESSERA_BINARY) + " --version 2>&1", &out),
      0);
  EXPECT_NE(out.find("opt.thp: \"always\""), std::string::npos) << out;
  EXPECT_NE(out.find("opt.metadata_thp: \"always\""), std::string::npos) << out;
  EXPECT_NE(out.find("opt.background_thread: true"), std::string::npos) << out;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Serve, OperatorsCordonAndDrainNodesAndTheHoldSurvivesARestart) {
  auto dir = FreshDir("fleet");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  ASSERT_EQ(admin.Post("/v1/principals", R"({"name": "otto", "role": "operator"})")->status, 201);
  std::string otto = Body(admin.Post("/v1/principals/otto/tokens", "{}"))["token"];
  ASSERT_EQ(admin
                .Post("/v1/principals",
                      R"({"name": "mia", "role": "member", "tenant": "ai-lab/applied/speech"})")
                ->status,
            201);
  std::string mia = Body(admin.Post("/v1/principals/mia/tokens", "{}"))["token"];
  std::string out;
  ASSERT_EQ(RunTessera("submit -f " + kEnterprise + "/jobs.yaml", &out, true, d.CliEnv()), 0)
      << out;
  // speech-lora runs on one A800 node; find it.
  json job;
  job = WaitForState(admin, "speech-lora", "running");
  ASSERT_EQ(job["state"], "running") << job.dump();
  std::string node = job["placement"][0]["node"];

  // A member may not hold nodes; an operator may.
  EXPECT_EQ(RunTessera("drain " + node, &out, true, d.CliEnv(mia)), 4) << out;
  ASSERT_EQ(RunTessera("drain " + node, &out, true, d.CliEnv(otto)), 0) << out;
  EXPECT_NE(out.find("drained"), std::string::npos) << out;
  json after = Body(admin.Get("/v1/jobs/speech-lora"));
  EXPECT_EQ(after["restarts"], 1) << after.dump();
  if (after["state"] == "running") {
    EXPECT_NE(after["placement"][0]["node"], node);
  }
  ASSERT_EQ(RunTessera("get nodes --cluster north-a800 -o json", &out, false, d.CliEnv(mia)), 0);
  json nodes = json::parse(out, nullptr, false);
  bool found = false;
  for (const json& n : nodes["items"]) {
    if (n["name"] != node) continue;
    found = true;
    EXPECT_EQ(n["state"], "drained");
    EXPECT_TRUE(n["jobs"].empty()) << n.dump();
  }
  EXPECT_TRUE(found) << out;
  // The hold is durable: after a restart the node still takes no work.
  d.Kill9();
  ASSERT_TRUE(d.Start()) << d.log();
  Http again(d.url(), d.admin_token());
  EXPECT_EQ(Body(again.Get("/v1/nodes/" + node))["state"], "drained");
  json c = Body(again.Get("/v1/clusters"));
  for (const json& cl : c["items"]) {
    if (cl["name"] == "north-a800") {
      EXPECT_EQ(cl["cordoned"], 1) << cl.dump();
    }
  }
  ASSERT_EQ(RunTessera("uncordon " + node, &out, true, d.CliEnv(otto)), 0) << out;
  EXPECT_EQ(Body(again.Get("/v1/nodes/" + node))["state"], "ready");
  EXPECT_EQ(again.Get("/v1/nodes/no-such-node")->status, 404);
  // Every hold is in the audit log, the refused one too (newest first).
  ASSERT_EQ(RunTessera("audit -o json", &out, false, d.CliEnv()), 0);
  json audit = json::parse(out, nullptr, false);
  std::vector<std::pair<std::string, int>> holds;
  for (const json& a : audit["items"]) {
    if (a["path"].get<std::string>().find("/v1/nodes/") == 0)
      holds.push_back({a["principal"], a["status"]});
  }
  std::vector<std::pair<std::string, int>> expected = {{"otto", 200}, {"otto", 200}, {"mia", 403}};
  EXPECT_EQ(holds, expected);
  // Paged one record at a time: the footer's cursor (--after) gives the next older record.
  ASSERT_GE(audit["items"].size(), 2u);
  ASSERT_EQ(RunTessera("audit --limit 1", &out, false, d.CliEnv()), 0);
  const std::string cursor = "--after " + audit["items"][0]["seq"].dump();
  EXPECT_NE(out.find("1 of " + audit["total"].dump() + " shown, newest first; older: " + cursor),
            std::string::npos)
      << out;
  ASSERT_EQ(RunTessera("audit -o json --limit 1 " + cursor, &out, false, d.CliEnv()), 0);
  json older = json::parse(out, nullptr, false);
  ASSERT_EQ(older["items"].size(), 1u) << out;
  EXPECT_EQ(older["items"][0]["seq"], audit["items"][1]["seq"]) << out;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Serve, CostsAndQuotasAreAccountedAndScopedToTheCallersTenants) {
  auto dir = FreshDir("cost");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  ASSERT_EQ(admin
                .Post("/v1/principals",
                      R"({"name": "sam", "role": "member", "tenant": "ai-lab/applied/speech"})")
                ->status,
            201);
  std::string sam = Body(admin.Post("/v1/principals/sam/tokens", "{}"))["token"];
  Http speech(d.url(), sam);
  // 8 A800 for 2 s at 16 CNY per device-hour: 8 x 16 x 2 / 3600 = 0.0711 CNY.
  json job = {{"name", "asr-sweep"},
              {"class", "finetune"},
              {"tenant", "ai-lab/applied/speech"},
              {"runtime", "2s"},
              {"taskGroups",
               json::array({{{"cpu", 16},
                             {"memory", "128Gi"},
                             {"devices", {{"count", 8}, {"models", json::array({"A800"})}}}}})}};
  ASSERT_EQ(speech.Post("/v1/jobs", job.dump())->status, 201);
  ASSERT_EQ(admin.Post("/v1/jobs", JobBody("ads-cpu", "consumer/ads/ctr", "1h"))->status, 201);
  // While it runs, the tenant's quota shows the 8 A800 in use.
  json tenants;
  WaitForState(speech, "asr-sweep", "running");
  tenants = Body(speech.Get("/v1/tenants"));
  ASSERT_EQ(tenants["items"].size(), 1u) << tenants.dump();  // only its own subtree
  EXPECT_EQ(tenants["items"][0]["tenant"], "ai-lab/applied/speech");
  bool a800 = false;
  for (const json& q : tenants["items"][0]["quotas"]) {
    if (q["model"] != "A800") continue;
    a800 = true;
    EXPECT_EQ(q["used"], 8) << q.dump();
  }
  EXPECT_TRUE(a800) << tenants.dump();
  json done;
  done = WaitForState(speech, "asr-sweep", "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump();
  json mine = Body(speech.Get("/v1/costs?by=project"));
  ASSERT_EQ(mine["items"].size(), 1u) << mine.dump();
  EXPECT_EQ(mine["items"][0]["project"], "ai-lab/applied/speech");
  // The run lasted from its start to its recorded end: the declared 2 s, and the few ms by
  // which the daemon's loop noticed the end later.
  double ran_ms = done["finished_ms"].get<double>() - done["first_start_ms"].get<double>();
  EXPECT_GE(ran_ms, 2000);
  double expected = 8 * 16 * ran_ms / 3.6e6;
  EXPECT_NEAR(mine["items"][0]["amount"].get<double>(), expected, 0.0001) << mine.dump();
  EXPECT_EQ(mine["currency"], "CNY");
  // The admin sees both organisations; the consumer job is CPU-only on a priced cluster.
  json all = Body(admin.Get("/v1/costs?by=tenant"));
  std::set<std::string> orgs;
  for (const json& i : all["items"])
    orgs.insert(i["tenant"].get<std::string>());
  EXPECT_TRUE(orgs.count("ai-lab")) << all.dump();
  // A period before the run saw nothing of it.
  json before = Body(speech.Get("/v1/costs?by=project&since_ms=0&until_ms=1000"));
  EXPECT_EQ(before["total"], 0) << before.dump();
  auto bad = speech.Get("/v1/costs?by=colour");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(Body(bad)["field"], "by");
  // What was spent is in the store: after a restart the figure is the same.
  std::string out;
  d.Kill9();
  ASSERT_TRUE(d.Start()) << d.log();
  ASSERT_EQ(RunTessera("cost --by project --since 1h -o json", &out, false, d.CliEnv(sam)), 0);
  json again = json::parse(out, nullptr, false);
  ASSERT_EQ(again["items"].size(), 1u) << out;
  EXPECT_NEAR(again["items"][0]["amount"].get<double>(), expected, 0.0001) << out;
  ASSERT_EQ(RunTessera("quota", &out, true, d.CliEnv(sam)), 0) << out;
  EXPECT_NE(out.find("ai-lab/applied/speech"), std::string::npos) << out;
  EXPECT_EQ(out.find("consumer"), std::string::npos) << out;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// docs/api/openapi.yaml, as served: every path it describes is answered by a route (not the
// "no such route" 404), and every path of docs/serve.md's API table is in it.
TEST(Serve, TheOpenApiDocumentMatchesTheRoutesAndTheDocs) {
  auto dir = FreshDir("openapi");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  auto r = Http(d.url()).Get("/openapi.json");
  ASSERT_TRUE(r && r->status == 200);
  json doc = json::parse(r->body, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r->body.substr(0, 200);
  EXPECT_EQ(doc["openapi"], "3.0.3");
  ASSERT_GE(doc["paths"].size(), 20u);
  std::set<std::string> documented;
  for (const auto& [path, methods] : doc["paths"].items()) {
    documented.insert(path);
    std::string concrete = path;
    for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
             {"{job}", "999"}, {"{node}", "north-a800-gpu-0001"}, {"{name}", "admin"}}) {
      size_t at = concrete.find(from);
      if (at != std::string::npos) concrete.replace(at, from.size(), to);
    }
    for (const auto& [method, op] : methods.items()) {
      auto answer = method == "get"      ? admin.Get(concrete)
                    : method == "delete" ? admin.client.Delete(concrete, admin.Headers())
                                         : admin.Post(concrete, "{}");
      ASSERT_TRUE(answer) << method << " " << concrete;
      json body = json::parse(answer->body, nullptr, false);
      bool no_route =
          answer->status == 404 && body.is_object() && body.value("message", "") == "no such route";
      EXPECT_FALSE(no_route) << method << " " << path << " is documented but not served";
      EXPECT_TRUE(op.contains("responses")) << method << " " << path;
    }
  }
  // The API table of docs/serve.md names the same paths.
  std::string serve_md = testing::ReadText(std::string(TESSERA_SOURCE_DIR) + "/docs/serve.md");
  size_t at = 0;
  int rows = 0;
  while ((at = serve_md.find("\n| `", at)) != std::string::npos) {
    at += 4;
    size_t end = serve_md.find('`', at);
    std::string cell = serve_md.substr(at, end - at);  // "GET /v1/jobs?..." or a metric name
    size_t space = cell.find(' ');
    if (space == std::string::npos ||
        cell.substr(0, space).find_first_not_of("GETPOS") != std::string::npos)
      continue;
    std::string path = cell.substr(space + 1);
    path = path.substr(0, path.find('?'));
    path = path.substr(0, path.find('['));
    for (const auto& [from, to] :
         std::vector<std::pair<std::string, std::string>>{{"{id-or-name}", "{job}"}}) {
      size_t p = path.find(from);
      if (p != std::string::npos) path.replace(p, from.size(), to);
    }
    ++rows;
    EXPECT_TRUE(documented.count(path)) << path << " is in docs/serve.md but not in openapi.yaml";
  }
  EXPECT_GE(rows, 20);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Serve, TlsFromConfigurationServesHttpsThatTheCliVerifies) {
  auto dir = FreshDir("tls");
  std::string cert = (dir / "cert.pem").string(), key = (dir / "key.pem").string();
  std::string gen =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 -keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  ASSERT_EQ(std::system(gen.c_str()), 0) << "openssl could not make a test certificate";
  DaemonProcess d(dir, kEnterprise);
  d.set_extra_args({"--tls-cert", cert, "--tls-key", key});
  ASSERT_TRUE(d.Start()) << d.log();
  ASSERT_EQ(d.url().rfind("https://", 0), 0u) << d.url();
  std::string out;
  ASSERT_EQ(RunTessera("submit -f " + kEnterprise + "/jobs.yaml --ca-cert " + cert, &out, true,
                       d.CliEnv()),
            0)
      << out;
  ASSERT_EQ(
      RunTessera("get jobs -o json", &out, false, d.CliEnv() + "TESSERA_CA_CERT=" + cert + " "), 0);
  EXPECT_EQ(json::parse(out, nullptr, false)["items"].size(), 10u) << out;
  // Without the CA the client refuses the server's certificate.
  EXPECT_EQ(RunTessera("get jobs", &out, true, d.CliEnv()), 6) << out;
  // Plain HTTP to the HTTPS port gets no answer.
  std::string plain = "http://" + d.url().substr(8);
  EXPECT_NE(RunTessera("get jobs --server " + plain, &out, true, d.CliEnv()), 0) << out;
  // A key without its certificate is refused before anything starts.
  EXPECT_EQ(RunTessera("serve --config " + kEnterprise + " --tls-key " + key, &out, true), 2)
      << out;
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Serve, AReloadPutsEditedPoliciesInForceAndRunningJobsGoOn) {
  auto dir = FreshDir("reload");
  std::filesystem::path conf = dir / "conf";
  std::filesystem::copy(kEnterprise, conf, std::filesystem::copy_options::recursive);
  DaemonProcess d(dir, conf.string());
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  std::string out;
  ASSERT_EQ(RunTessera("submit -f " + (conf / "jobs.yaml").string(), &out, true, d.CliEnv()), 0);
  json before;
  before = WaitForState(admin, "llm-pretrain-70b", "running");
  ASSERT_EQ(before["state"], "running");
  // Rename a rule: a dry run shows the change and applies nothing.
  std::string policies = testing::ReadText(conf / "policies.yaml");
  size_t at = policies.find("name: research-stays-onshore");
  ASSERT_NE(at, std::string::npos);
  policies.replace(at, 28, "name: research-stays-in-cn");
  std::ofstream(conf / "policies.yaml") << policies;
  ASSERT_EQ(RunTessera("policies validate -o json", &out, false, d.CliEnv()), 0) << out;
  json dry = json::parse(out, nullptr, false);
  EXPECT_EQ(dry["ok"], true) << out;
  EXPECT_EQ(dry["applied"], false) << out;
  EXPECT_EQ(dry["changes"]["policies"]["added"], json::array({"research-stays-in-cn"})) << out;
  // A broken file: validate says where; reload is refused and changes nothing.
  std::ofstream(conf / "tenants.yaml", std::ios::app) << "  broken: [\n";
  EXPECT_EQ(RunTessera("policies validate", &out, true, d.CliEnv()), 2) << out;
  EXPECT_NE(out.find("tenants.yaml:"), std::string::npos) << out;
  auto refused = admin.Post("/v1/policies/reload", "");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_NE(Body(refused)["message"].get<std::string>().find("tenants.yaml"), std::string::npos);
  EXPECT_EQ(Body(admin.Get("/v1/jobs/llm-pretrain-70b"))["restarts"], 0);
  // Members may do neither.
  ASSERT_EQ(
      admin.Post("/v1/principals", R"({"name": "m", "role": "member", "tenant": "consumer"})")
          ->status,
      201);
  std::string m = Body(admin.Post("/v1/principals/m/tokens", "{}"))["token"];
  EXPECT_EQ(Http(d.url(), m).Post("/v1/policies/validate", "")->status, 403);
  // Fixed, the reload applies; every running job goes on where it was.
  std::string tenants = testing::ReadText(conf / "tenants.yaml");
  tenants.erase(tenants.rfind("  broken: ["));
  std::ofstream(conf / "tenants.yaml") << tenants;
  ASSERT_EQ(RunTessera("policies reload -o json", &out, false, d.CliEnv()), 0) << out;
  json applied = json::parse(out, nullptr, false);
  EXPECT_EQ(applied["applied"], true) << out;
  EXPECT_EQ(applied["jobs"]["resumed"], 10) << out;
  EXPECT_EQ(applied["jobs"]["requeued"], 0) << out;
  json after = Body(admin.Get("/v1/jobs/llm-pretrain-70b"));
  EXPECT_EQ(after["state"], "running");
  EXPECT_EQ(after["placement"], before["placement"]);
  EXPECT_EQ(after["restarts"], 0);
  EXPECT_EQ(after["first_start_ms"], before["first_start_ms"]);
  // New work is placed under the configuration in force.
  EXPECT_EQ(admin.Post("/v1/jobs", JobBody("after-reload", "consumer/ads/ctr"))->status, 201);
  json next;
  next = WaitForState(admin, "after-reload", "running");
  EXPECT_EQ(next["state"], "running") << next.dump();
  // And the reload holds across a restart (the store, not the old configuration).
  d.Kill9();
  ASSERT_TRUE(d.Start()) << d.log();
  EXPECT_EQ(Body(Http(d.url(), d.admin_token()).Get("/v1/jobs/llm-pretrain-70b"))["placement"],
            before["placement"]);
}

TEST(Serve, TheDecisionLogAcrossJobsIsScopedAndPaged) {
  auto dir = FreshDir("decisions");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  Http ads(d.url(), testing::TokenOf(admin, "adam", "member", "consumer/ads"));
  for (const char* name : {"d1", "d2", "d3"})
    ASSERT_EQ(admin.Post("/v1/jobs", JobBody(name, "consumer/ads/ctr"))->status, 201);
  ASSERT_EQ(admin.Post("/v1/jobs", JobBody("v1", "ai-lab/applied/vision"))->status, 201);
  for (const char* name : {"d1", "d2", "d3", "v1"})
    ASSERT_EQ(WaitForState(admin, name, "running")["state"], "running") << name;
  ASSERT_EQ(admin.Post("/v1/jobs/d2/cancel", "")->status, 202);
  WaitForState(admin, "d2", "cancelled");

  json all = Body(admin.Get("/v1/decisions"));
  ASSERT_EQ(all["items"].size(), 5u) << all.dump();
  EXPECT_FALSE(all.contains("next"));
  std::set<std::string> started;
  for (const json& e : all["items"])
    if (e["kind"] == "start") started.insert(e["job"]["name"]);
  EXPECT_EQ(started, (std::set<std::string>{"d1", "d2", "d3", "v1"})) << all.dump();
  EXPECT_EQ(all["items"][4]["kind"], "cancel");
  EXPECT_EQ(all["items"][4]["job"]["name"], "d2");
  EXPECT_TRUE(all["items"][0]["detail"].contains("nodes")) << all.dump();
  EXPECT_EQ(Body(admin.Get("/v1/decisions?kind=start"))["items"].size(), 4u);
  // Pages: two, two, one, in order and without repeats.
  std::vector<int64_t> seqs;
  json page = Body(admin.Get("/v1/decisions?limit=2"));
  for (int i = 0; i < 5 && page.is_object(); ++i) {
    for (const json& e : page["items"])
      seqs.push_back(e["seq"]);
    if (!page.contains("next")) break;
    page = Body(admin.Get("/v1/decisions?limit=2&after=" + page["next"].dump()));
  }
  ASSERT_EQ(seqs.size(), 5u);
  EXPECT_TRUE(std::is_sorted(seqs.begin(), seqs.end()));
  EXPECT_EQ(std::set<int64_t>(seqs.begin(), seqs.end()).size(), 5u);
  // A member sees its own subtree's decisions only.
  json mine = Body(ads.Get("/v1/decisions"));
  ASSERT_EQ(mine["items"].size(), 4u) << mine.dump();
  for (const json& e : mine["items"])
    EXPECT_EQ(e["job"]["tenant"], "consumer/ads/ctr") << e.dump();
  auto bad = admin.Get("/v1/decisions?kind=explode");
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(Body(bad)["field"], "kind");
  EXPECT_EQ(admin.Get("/v1/decisions?limit=-1")->status, 400);
  EXPECT_EQ(Http(d.url()).Get("/v1/decisions")->status, 401);
  // The CLI.
  std::string out;
  ASSERT_EQ(RunTessera("get decisions --kind start --since 1h", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("TIME"), std::string::npos) << out;
  for (const char* name : {" d1 ", " d3 ", " v1 "})
    EXPECT_NE(out.find(name), std::string::npos) << out;
  EXPECT_EQ(out.find("cancel"), std::string::npos) << out;
  ASSERT_EQ(RunTessera("get decisions --limit 3 -o json", &out, false, d.CliEnv()), 0) << out;
  EXPECT_EQ(json::parse(out, nullptr, false)["items"].size(), 3u) << out;
  EXPECT_EQ(RunTessera("get decisions --since soon", &out, true, d.CliEnv()), 2) << out;
}

}  // namespace
}  // namespace tessera
