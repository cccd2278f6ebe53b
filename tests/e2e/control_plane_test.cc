// The live control plane's trust boundaries, end to end (issue "Trust the live control plane"):
// each test reproduces a hole found on the daemon and shows it closed: every agent credential
// acts for its own node only; the store is held by one daemon only, and a file that is not a
// store, or cannot be written, is refused.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "server/auth.h"
#include "store/sqlite.h"
#include "testutil/agent_process.h"
#include "testutil/daemon_process.h"
#include "testutil/run_tessera.h"
#include "testutil/serve_client.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::AgentTokenOf;
using testing::Body;
using testing::DaemonProcess;
using testing::FreshDir;
using testing::Http;
using testing::TokenOf;

using testing::kEnterprise;
using testing::kLocal;

// An agent principal without a node could sync every node: read other nodes' task commands
// and environments, mark their jobs succeeded, make the daemon requeue their gangs. Now every
// agent credential is bound to one node: an unbound one cannot be created, one left in an old
// store is refused (403, logged once) and gets no new token, and the agent id is shown to
// operators and admins only.
TEST(ControlPlaneAgents, AnAgentCredentialActsForItsOwnNodeOnly) {
  fs::path dir = FreshDir("agent-binding");
  auto daemon = std::make_unique<DaemonProcess>(dir, kLocal);
  ASSERT_TRUE(daemon->Start()) << daemon->log();
  Http admin(daemon->url(), daemon->admin_token());

  auto r = admin.Post("/v1/principals", R"({"name":"agents","role":"agent"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(Body(r)["field"], "node") << r->body;
  EXPECT_NE(Body(r).value("message", "").find("an agent is bound to exactly one node"),
            std::string::npos)
      << r->body;
  EXPECT_EQ(admin.Get("/v1/principals")->body.find("\"agents\""), std::string::npos);

  // A bound agent syncs its node and no other.
  const std::string hello = R"({"protocol":1,"agent":"a0"})";
  Http agent0(daemon->url(), AgentTokenOf(admin, "bench-gpu-0000"));
  r = agent0.Post("/v1/agents/bench-gpu-0000/sync", hello);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = agent0.Post("/v1/agents/bench-gpu-0001/sync", R"({"protocol":1,"agent":"a1"})");
  EXPECT_EQ(r->status, 403) << r->body;
  r = agent0.Post("/v1/agents/bench-gpu-0001/sync",
                  R"({"protocol":1,"agent":"a1","tasks":[{"key":"1/0/0","phase":"exited",)"
                  R"("exit_code":0}]})");
  EXPECT_EQ(r->status, 403) << r->body;

  // The agent id is the operators': a member sees the node's agent without it.
  Http member(daemon->url(), TokenOf(admin, "ann", "member", "lab/research"));
  json seen = Body(member.Get("/v1/nodes/bench-gpu-0000"));
  ASSERT_TRUE(seen["agent"].is_object()) << seen.dump();
  EXPECT_FALSE(seen["agent"].contains("agent")) << seen.dump();
  EXPECT_EQ(Body(admin.Get("/v1/nodes/bench-gpu-0000"))["agent"]["agent"], "a0");
  Http op(daemon->url(), TokenOf(admin, "olga", "operator", ""));
  EXPECT_EQ(Body(op.Get("/v1/nodes/bench-gpu-0000"))["agent"]["agent"], "a0");

  // An unbound agent principal left in a store by an older tessera, with a token.
  const std::string legacy = "tsk_legacy-unbound-agent-token-0123456789abcdefghij";
  daemon->KeepPort();
  ASSERT_EQ(daemon->Stop(), 0) << daemon->log();
  {
    auto db = Sqlite::Open(daemon->store().string());
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO principals(name, role, tenant, created_ms, node) "
                           "VALUES('old-agents', 'agent', '', 1, ''); "
                           "INSERT INTO tokens(hash, principal, expires_ms, created_ms) VALUES('" +
                           HashToken(legacy) + "', 'old-agents', NULL, 1)")
                    .ok());
  }
  ASSERT_TRUE(daemon->Start()) << daemon->log();
  Http old(daemon->url(), legacy);
  for (const char* node : {"bench-gpu-0001", "bench-gpu-0002", "bench-gpu-0001"}) {
    r = old.Post(std::string("/v1/agents/") + node + "/sync", R"({"protocol":1,"agent":"x"})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << r->body;
    EXPECT_NE(Body(r).value("message", "").find("\"old-agents\" is bound to no node"),
              std::string::npos)
        << r->body;
  }
  EXPECT_EQ(testing::CountOf(daemon->log(), "agent refused: its principal is bound to no node"), 1)
      << daemon->log();
  r = admin.Post("/v1/principals/old-agents/tokens", "{}");
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(Body(r).value("message", "").find("bound to no node"), std::string::npos) << r->body;
  // The node it tried for never came into service through it.
  EXPECT_FALSE(Body(admin.Get("/v1/nodes/bench-gpu-0001"))["agent"].is_object());
  daemon->Stop();
  fs::remove_all(dir);
}

// `tessera serve` on `store`, bounded: a daemon that should have refused to start is stopped
// after 20 s (and the test fails on its exit status).
int Serve(const fs::path& store, std::string* out) {
  return testing::RunTessera("serve --config " + kEnterprise + " --store sqlite:" + store.string() +
                                 " --listen 127.0.0.1:0",
                             out, true, "TESSERA_ADMIN_TOKEN=t timeout 20 ");
}

// A member's task printed TESSERA_TOKEN from its agent's environment, and the agent's --token
// from /proc/$PPID/cmdline. Now the agent takes its token from a file of mode 0600 or the
// environment (wiped once read), refuses --token, and starts tasks with a clean environment.
TEST(ControlPlaneAgents, ATaskSeesNoneOfItsAgentsCredentials) {
  fs::path dir = FreshDir("agent-credentials");
  DaemonProcess daemon(dir / "daemon", kLocal);
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  Http admin(daemon.url(), daemon.admin_token());
  const std::string token = AgentTokenOf(admin, "bench-gpu-0000");
  ASSERT_FALSE(token.empty());

  // --token on the command line, and a token file others may read, are refused.
  std::string out;
  EXPECT_EQ(testing::RunTessera(
                "agent --server " + daemon.url() + " --token " + token + " --node bench-gpu-0000",
                &out, true, "timeout 20 "),
            2)
      << out;
  EXPECT_NE(out.find("--token: the agent's token on its command line is readable"),
            std::string::npos)
      << out;
  fs::path loose = dir / "loose.token";
  std::ofstream(loose) << token << "\n";
  fs::permissions(loose, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                             fs::perms::others_read);
  EXPECT_EQ(testing::RunTessera("agent --server " + daemon.url() + " --token-file " +
                                    loose.string() + " --node bench-gpu-0000",
                                &out, true, "timeout 20 "),
            2)
      << out;
  EXPECT_NE(out.find("mode 0644 lets other users read the token; chmod 600 " + loose.string()),
            std::string::npos)
      << out;

  // The agent runs with its token in a 0600 file and, as a service manager might set it, in
  // TESSERA_TOKEN too; the task looks everywhere it could.
  setenv("TESSERA_TOKEN", token.c_str(), 1);
  setenv("TESSERA_SERVER", daemon.url().c_str(), 1);
  testing::AgentProcess agent(dir / "agents", "bench-gpu-0000", "127.0.0.1");
  agent.Start(daemon.url(), token);
  unsetenv("TESSERA_TOKEN");
  unsetenv("TESSERA_SERVER");
  json job = {{"name", "nosy"},
              {"class", "batch"},
              {"tenant", "lab/research"},
              {"taskGroups", {{{"name", "t"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}}}},
              {"env", {{"MINE", "kept"}}},
              {"command",
               "echo ENV; env; echo CMDLINE; tr '\\0' ' ' < /proc/$PPID/cmdline; echo; "
               "echo ENVIRON; tr '\\0' '\\n' < /proc/$PPID/environ; echo END"}};
  auto r = admin.Post("/v1/jobs", job.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
  json done;
  for (int i = 0; i < 300; ++i) {
    done = Body(admin.Get("/v1/jobs/nosy"));
    if (done["state"] == "succeeded" || done["state"] == "failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(done["state"], "succeeded") << done.dump() << agent.log();
  std::string log = Body(admin.Get("/v1/jobs/nosy/logs")).value("log", "");
  ASSERT_NE(log.find("END"), std::string::npos) << log;
  EXPECT_EQ(log.find(token), std::string::npos) << "the agent's token leaked:\n" << log;
  EXPECT_EQ(log.find(daemon.admin_token()), std::string::npos) << log;
  std::string env = log.substr(0, log.find("CMDLINE"));
  EXPECT_EQ(env.find("TESSERA_TOKEN"), std::string::npos) << env;
  EXPECT_EQ(env.find("TESSERA_SERVER"), std::string::npos) << env;
  EXPECT_NE(env.find("MINE=kept"), std::string::npos) << env;
  EXPECT_NE(env.find("TESSERA_TASK_INDEX=0"), std::string::npos) << env;
  EXPECT_NE(env.find("PATH="), std::string::npos) << env;
  EXPECT_NE(log.find("--token-file"), std::string::npos) << "the agent's command line: " << log;
  agent.Stop();
  daemon.Stop();
  fs::remove_all(dir);
}

// A node the configuration cordons was shown `down`, and `uncordon` of a down node printed
// "node … down" and exited 0. Now it shows `cordoned` (by the configuration), and uncordon of
// it, or of a down node with no hold to lift, is refused with the reason (409, exit 2).
TEST(ControlPlaneNodes, ConfigCordonsAndDownNodesSayWhatTheyAre) {
  fs::path dir = FreshDir("node-states");
  DaemonProcess d(dir / "enterprise", kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  json node = Body(admin.Get("/v1/nodes/dev-a800-02"));
  EXPECT_EQ(node["state"], "cordoned") << node.dump();
  EXPECT_EQ(node["cordoned_by"], "configuration") << node.dump();
  EXPECT_EQ(Body(admin.Get("/v1/nodes/dev-a800-01"))["state"], "ready");
  std::string out;
  EXPECT_EQ(testing::RunTessera("uncordon dev-a800-02", &out, true, d.CliEnv()), 2) << out;
  EXPECT_NE(out.find("error (409): node \"dev-a800-02\" is cordoned in the configuration"),
            std::string::npos)
      << out;
  EXPECT_EQ(Body(admin.Get("/v1/nodes/dev-a800-02"))["state"], "cordoned");

  // examples/local with no agent running: every node is down, with the reason.
  DaemonProcess local(dir / "local", kLocal);
  ASSERT_TRUE(local.Start()) << local.log();
  EXPECT_EQ(testing::RunTessera("uncordon bench-gpu-0001", &out, true, local.CliEnv()), 2) << out;
  EXPECT_NE(out.find("node \"bench-gpu-0001\" is down (no agent has synced it); uncordon lifts "
                     "an operator's cordon or drain, and there is none on it"),
            std::string::npos)
      << out;
  // A hold on a down node is the operator's to lift.
  ASSERT_EQ(testing::RunTessera("cordon bench-gpu-0001", &out, true, local.CliEnv()), 0) << out;
  EXPECT_EQ(testing::RunTessera("uncordon bench-gpu-0001", &out, true, local.CliEnv()), 0) << out;
  local.Stop();
  d.Stop();
  fs::remove_all(dir);
}

// `get jobs` showed the oldest 1,000 with "next": null, and `audit` the oldest 100, with no word
// of what was left out. Now both list newest first, with the count of all that match, a cursor
// to the older page (--after), and a footer saying how many are shown.
TEST(ControlPlaneLists, JobsAndAuditAreNewestFirstWithACursorAndAFooter) {
  fs::path dir = FreshDir("lists");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) {
    json job = {{"name", "list-" + std::to_string(i)},
                {"class", "batch"},
                {"tenant", "consumer/ads/ctr"},
                {"runtime", "1h"},
                {"taskGroups", {{{"name", "w"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}}}}};
    auto r = admin.Post("/v1/jobs", job.dump());
    ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    ids.push_back(Body(r)["id"].get<int64_t>());
  }
  json page = Body(admin.Get("/v1/jobs?limit=2"));
  ASSERT_EQ(page["items"].size(), 2u) << page.dump();
  EXPECT_EQ(page["items"][0]["id"], ids[4]);
  EXPECT_EQ(page["items"][1]["id"], ids[3]);
  EXPECT_EQ(page["total"], 5);
  EXPECT_EQ(page["next"], ids[3]);
  json older = Body(admin.Get("/v1/jobs?limit=2&after=" + std::to_string(ids[3])));
  ASSERT_EQ(older["items"].size(), 2u) << older.dump();
  EXPECT_EQ(older["items"][0]["id"], ids[2]);
  EXPECT_EQ(older["total"], 5);
  json last = Body(admin.Get("/v1/jobs?limit=2&after=" + std::to_string(ids[1])));
  ASSERT_EQ(last["items"].size(), 1u) << last.dump();
  EXPECT_TRUE(last["next"].is_null()) << last.dump();

  std::string out;
  ASSERT_EQ(testing::RunTessera("get jobs --limit 2", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("list-4"), std::string::npos) << out;
  EXPECT_EQ(out.find("list-0"), std::string::npos) << out;
  EXPECT_NE(out.find("2 of 5 shown, newest first; older: --after " + std::to_string(ids[3])),
            std::string::npos)
      << out;
  ASSERT_EQ(testing::RunTessera("get jobs --limit 2 --after " + std::to_string(ids[1]), &out, true,
                                d.CliEnv()),
            0)
      << out;
  EXPECT_NE(out.find("list-0"), std::string::npos) << out;
  EXPECT_NE(out.find("1 of 5 shown, newest first\n"), std::string::npos) << out;
  ASSERT_EQ(testing::RunTessera("get jobs", &out, true, d.CliEnv()), 0) << out;
  EXPECT_EQ(out.find(" shown"), std::string::npos) << "no footer when all are shown: " << out;

  // The audit log: five submissions, newest first.
  json audit = Body(admin.Get("/v1/audit?limit=2"));
  ASSERT_EQ(audit["items"].size(), 2u) << audit.dump();
  EXPECT_GT(audit["items"][0]["seq"].get<int64_t>(), audit["items"][1]["seq"].get<int64_t>());
  EXPECT_GE(audit["total"].get<int64_t>(), 5);
  ASSERT_EQ(testing::RunTessera("audit --limit 2", &out, true, d.CliEnv()), 0) << out;
  EXPECT_NE(out.find("2 of " + std::to_string(audit["total"].get<int64_t>()) +
                     " shown, newest first; older: --after " +
                     std::to_string(audit["items"][1]["seq"].get<int64_t>())),
            std::string::npos)
      << out;
  d.Stop();
  fs::remove_all(dir);
}

// A full disk: submissions got 503, but nothing said so in the log, and /readyz counted the
// refused rows as jobs. Now failing commits are an error line naming the store (one each time
// writes start failing),
// /readyz and /metrics say store_degraded, the count is of jobs that exist, and once space
// returns writes succeed again without a restart (one info line). Needs root for the tmpfs.
TEST(ControlPlaneStore, AFullDiskIsLoggedCountedTrulyAndRecoveredFromWithoutARestart) {
  ASSERT_EQ(::geteuid(), 0) << "this test mounts a small tmpfs (CI runs as root)";
  fs::path dir = FreshDir("full-disk");
  fs::path mnt = dir / "mnt";
  fs::create_directories(mnt);
  ASSERT_EQ(::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=3m"), 0) << "mount a tmpfs";
  {
    DaemonProcess d(mnt, kEnterprise);
    ASSERT_TRUE(d.Start()) << d.log();
    Http admin(d.url(), d.admin_token());
    int accepted = 0, refused = 0;
    for (int i = 0; i < 20000 && refused < 20; ++i) {
      json job = {{"name", "fill-" + std::to_string(i)},
                  {"class", "batch"},
                  {"tenant", "consumer/ads/ctr"},
                  {"runtime", "10h"},
                  {"labels", {{"padding", std::string(2000, 'x')}}},
                  {"taskGroups", {{{"name", "w"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}}}}};
      auto r = admin.Post("/v1/jobs", job.dump());
      ASSERT_TRUE(r);
      if (r->status == 201) {
        ++accepted;
      } else {
        EXPECT_EQ(r->status, 503) << r->body;
        ++refused;
      }
    }
    ASSERT_GT(refused, 0) << "the disk never filled";
    json ready = Body(Http(d.url()).Get("/readyz"));
    EXPECT_EQ(ready["store_degraded"], true) << ready;
    EXPECT_EQ(ready["jobs"], accepted) << ready;
    EXPECT_EQ(Body(admin.Get("/v1/jobs?limit=1"))["total"], accepted);
    EXPECT_NE(admin.Get("/metrics")->body.find("tessera_store_degraded 1"), std::string::npos);
    // One error line each time writes start failing (on a nearly full disk a small batch may
    // still fit between two that do not), never one per refused write.
    const int episodes = testing::CountOf(d.log(), "store writes fail");
    EXPECT_GE(episodes, 1) << d.log();
    EXPECT_LT(episodes, refused + 1) << d.log();
    EXPECT_NE(d.log().find("\"error\":\"store " + (mnt / "tessera.db").string()), std::string::npos)
        << d.log();
    // Space returns: the next submission is accepted, the store is healthy again.
    ASSERT_EQ(::mount("tmpfs", mnt.c_str(), "tmpfs", MS_REMOUNT, "size=256m"), 0);
    json job = {{"name", "after"},
                {"class", "batch"},
                {"tenant", "consumer/ads/ctr"},
                {"runtime", "10h"},
                {"taskGroups", {{{"name", "w"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}}}}};
    auto r = admin.Post("/v1/jobs", job.dump());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 201) << r->body;
    ready = Body(Http(d.url()).Get("/readyz"));
    EXPECT_EQ(ready["store_degraded"], false) << ready;
    EXPECT_EQ(ready["jobs"], accepted + 1) << ready;
    EXPECT_EQ(testing::CountOf(d.log(), "store writes succeed again"),
              testing::CountOf(d.log(), "store writes fail"))
        << "every episode of failing writes ends: " << d.log();
    d.Stop();
  }
  EXPECT_EQ(::umount(mnt.c_str()), 0);
  fs::remove_all(dir);
}

// A write the store did not take used to be acknowledged: a cancel answered 202 on a full disk,
// and after a restart the job ran again. While another program holds the store's write lock
// (an operator's sqlite3 shell in a transaction), cancel and cordon now answer 503 naming the
// store and change nothing the API shows; once the lock is gone the cancel is durable before
// it is answered, and a daemon killed right after finds the job cancelled.
TEST(ControlPlaneStore, ACancelOrCordonTheStoreDoesNotTakeIsRefusedAndChangesNothing) {
  fs::path dir = FreshDir("store-locked");
  DaemonProcess d(dir, kEnterprise);
  ASSERT_TRUE(d.Start()) << d.log();
  Http admin(d.url(), d.admin_token());
  json job = {{"name", "keep"},
              {"class", "batch"},
              {"tenant", "consumer/ads/ctr"},
              {"runtime", "10h"},
              {"taskGroups", {{{"name", "w"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}}}}};
  ASSERT_EQ(admin.Post("/v1/jobs", job.dump())->status, 201);
  const std::string node = Body(admin.Get("/v1/nodes?limit=1"))["items"][0]["name"];
  {
    auto db = Sqlite::Open(d.store().string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)->Exec("BEGIN IMMEDIATE").ok());
    const std::string before = Body(admin.Get("/v1/jobs/keep"))["state"];
    auto cancel = admin.Post("/v1/jobs/keep/cancel", "");
    ASSERT_TRUE(cancel);
    EXPECT_EQ(cancel->status, 503) << cancel->body;
    EXPECT_NE(
        Body(cancel)["message"].get<std::string>().find("the store did not record the cancel"),
        std::string::npos)
        << cancel->body;
    EXPECT_EQ(Body(admin.Get("/v1/jobs/keep"))["state"], before);
    auto cordon = admin.Post("/v1/nodes/" + node + "/cordon", "");
    ASSERT_TRUE(cordon);
    EXPECT_EQ(cordon->status, 503) << cordon->body;
    EXPECT_NE(Body(admin.Get("/v1/nodes/" + node))["state"], "cordoned");
    EXPECT_EQ(Body(Http(d.url()).Get("/readyz"))["store_degraded"], true);
    ASSERT_TRUE((*db)->Exec("COMMIT").ok());
  }
  auto cancel = admin.Post("/v1/jobs/keep/cancel", "");
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 202) << cancel->body;
  EXPECT_NE(d.log().find("store writes fail"), std::string::npos) << d.log();
  EXPECT_NE(d.log().find("database is locked"), std::string::npos) << d.log();
  d.Kill9();
  ASSERT_TRUE(d.Start()) << d.log();
  Http again(d.url(), d.admin_token());
  EXPECT_EQ(Body(again.Get("/v1/jobs/keep"))["state"], "cancelled");
  EXPECT_NE(Body(again.Get("/v1/nodes/" + node))["state"], "cordoned");
  d.Stop();
  fs::remove_all(dir);
}

// A second daemon on the store of a running one used to start without a word, and both
// scheduled; now it exits 2 naming the first, which goes on serving.
TEST(ControlPlaneStore, ASecondDaemonOnTheSameStoreExitsTwoNamingTheFirst) {
  fs::path dir = FreshDir("second-daemon");
  DaemonProcess first(dir, kEnterprise);
  ASSERT_TRUE(first.Start()) << first.log();
  std::string out;
  EXPECT_EQ(Serve(first.store(), &out), 2) << out;
  EXPECT_NE(out.find("error: store " + first.store().string() + " is in use by pid " +
                     std::to_string(first.pid()) + " on "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(" since 20"), std::string::npos) << out;
  testing::Http admin(first.url(), first.admin_token());
  auto r = admin.Get("/v1/jobs");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << "the first daemon still serves";
  // Once the first is gone (kill -9: the kernel drops its lock) a daemon takes the store.
  first.Kill9();
  DaemonProcess again(dir, kEnterprise);
  EXPECT_TRUE(again.Start()) << again.log();
  fs::remove_all(dir);
}

// An existing file that is not a store was taken as a new store with a new admin token; now the
// daemon exits 2 naming it, writes nothing into it and makes no token.
TEST(ControlPlaneStore, AnExistingFileThatIsNotAStoreIsRefused) {
  fs::path dir = FreshDir("not-a-store");
  fs::path empty = dir / "empty.db";
  std::ofstream(empty).flush();
  std::string out;
  EXPECT_EQ(Serve(empty, &out), 2) << out;
  EXPECT_NE(
      out.find("error: store " + empty.string() + " is not a Tessera store: the file is empty"),
      std::string::npos)
      << out;
  EXPECT_EQ(out.find("token"), std::string::npos) << out;
  EXPECT_EQ(fs::file_size(empty), 0u);
  fs::path yaml = dir / "fleet.yaml";
  std::ofstream(yaml) << "regions:\n  - name: r\n";
  EXPECT_EQ(Serve(yaml, &out), 2) << out;
  EXPECT_NE(out.find("is not a Tessera store: not an SQLite database"), std::string::npos) << out;
  EXPECT_EQ(testing::ReadText(yaml), "regions:\n  - name: r\n");
  fs::remove_all(dir);
}

// A store that cannot be written says "read-only" (a read-only mount when the test runs as root,
// as CI does; file and folder modes otherwise).
TEST(ControlPlaneStore, AReadOnlyStoreIsRefusedAsReadOnly) {
  fs::path dir = FreshDir("read-only");
  fs::path mnt = dir / "mnt";
  fs::create_directories(mnt);
  const bool root = ::geteuid() == 0;
  if (root) {
    ASSERT_EQ(::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=8m"), 0) << "mount a tmpfs";
  }
  {
    DaemonProcess d(mnt, kEnterprise);
    ASSERT_TRUE(d.Start()) << d.log();
    ASSERT_EQ(d.Stop(), 0) << d.log();
  }
  fs::path store = mnt / "tessera.db";
  if (root) {
    ASSERT_EQ(::mount("tmpfs", mnt.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=8m"), 0);
  } else {
    fs::permissions(store, fs::perms::owner_read);
    fs::permissions(store.string() + ".lock", fs::perms::owner_read);
    fs::permissions(mnt, fs::perms::owner_read | fs::perms::owner_exec);
  }
  std::string out;
  EXPECT_EQ(Serve(store, &out), 2) << out;
  EXPECT_NE(out.find("error: store " + store.string() + " is read-only"), std::string::npos) << out;
  if (root) {
    EXPECT_EQ(::umount(mnt.c_str()), 0);
  } else {
    fs::permissions(mnt, fs::perms::owner_all);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera
