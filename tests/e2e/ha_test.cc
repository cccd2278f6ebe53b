// The control plane of several daemons on one PostgreSQL store (docs/operations.md, HA), end
// to end: real `tessera serve` processes on a real PostgreSQL 15 (durable: fsync on). Exactly
// one of two daemons started at once leads, the other stands by and names it; a leader killed
// (kill -9) again and again during a storm of submissions and cancels loses and duplicates
// nothing acknowledged; a leader frozen past its lease is deposed and its late writes are
// refused; one cut off from the database stops within its lease and says so; and a standby
// promoted while agents run tasks adopts them without starting any twice.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/client.h"
#include "testutil/agent_process.h"
#include "testutil/daemon_process.h"
#include "testutil/postgres_server.h"
#include "testutil/run_tessera.h"
#include "testutil/serve_client.h"

namespace tessera {
namespace {

using json = nlohmann::json;
using testing::AgentProcess;
using testing::AgentTokenOf;
using testing::Body;
using testing::DaemonProcess;
using testing::FreshDir;
using testing::Http;
using testing::kLocal;
using testing::PostgresServer;

class HaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    pg_ = std::make_unique<PostgresServer>(dir_ / "pg", /*durable=*/true);
    std::string error;
    ASSERT_TRUE(pg_->Up(&error)) << error;
    int port = 0;
    for (int i = 0; i < 2; ++i) {
      port = testing::FreeLoopbackPort(std::max(port, pg_->port()));
      urls_.push_back("http://127.0.0.1:" + std::to_string(port));
      daemons_.push_back(
          std::make_unique<DaemonProcess>(dir_ / ("daemon" + std::to_string(i)), kLocal));
      daemons_.back()->set_store(pg_->url());
      daemons_.back()->set_listen("127.0.0.1:" + std::to_string(port));
      // Where each says it answers when it leads, as the standbys name it.
      daemons_.back()->set_extra_args({"--lease", "2s", "--agent-heartbeat", "500ms",
                                       "--agent-lost-after", "10s", "--advertise-url",
                                       urls_.back()});
    }
  }
  void TearDown() override {
    for (auto& d : daemons_) {
      if (d->running()) kill(d->pid(), SIGCONT);  // one a test froze
      d->Stop();
    }
    pg_.reset();
    std::filesystem::remove_all(dir_);
  }

  // What /readyz of daemon `i` says: its status code and body (0 when it does not answer).
  std::pair<int, json> Ready(size_t i) {
    Http h(urls_[i]);
    h.client.set_connection_timeout(1);
    auto r = h.Get("/readyz");
    return {r ? r->status : 0, Body(r)};
  }

  // What /readyz of daemon `i` says once it answers `status` (or after `seconds`).
  std::pair<int, json> ReadyOnce(size_t i, int status, int seconds) {
    std::pair<int, json> ready;
    for (int tries = 0; tries < seconds * 10 && ready.first != status; ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ready = Ready(i);
    }
    return ready;
  }

  // The daemon that leads, once exactly one answers ready and every other running one says
  // standby (30 s at most); -1 when that never held.
  int WaitForOneLeader() {
    for (int tries = 0; tries < 300; ++tries) {
      int leaders = 0, leader = -1, others = 0;
      for (size_t i = 0; i < daemons_.size(); ++i) {
        if (!daemons_[i]->running()) continue;
        auto [status, body] = Ready(i);
        if (status == 200) {
          ++leaders;
          leader = static_cast<int>(i);
        } else if (status == 503 && body.value("status", "") == "standby") {
          ++others;
        }
      }
      int running = 0;
      for (auto& d : daemons_)
        running += d->running();
      if (leaders == 1 && leaders + others == running && StandbysName(leader)) return leader;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }

  // Whether every standby names `leader`'s address (it reads the lease a few times a lease).
  bool StandbysName(int leader) {
    for (size_t i = 0; i < daemons_.size(); ++i) {
      if (static_cast<int>(i) == leader || !daemons_[i]->running()) continue;
      if (Ready(i).second.value("leader_url", "") != urls_[leader]) return false;
    }
    return true;
  }

  std::string Both() const { return urls_[0] + "," + urls_[1]; }

  std::filesystem::path dir_;
  std::unique_ptr<PostgresServer> pg_;
  std::vector<std::unique_ptr<DaemonProcess>> daemons_;
  std::vector<std::string> urls_;
};

TEST_F(HaTest, OfTwoDaemonsStartedAtOnceOneLeadsAndTheOtherNamesIt) {
  daemons_[0]->Launch();
  daemons_[1]->Launch();
  int leader = WaitForOneLeader();
  ASSERT_GE(leader, 0) << daemons_[0]->log() << daemons_[1]->log();
  const size_t standby = 1 - static_cast<size_t>(leader);
  auto [status, ready] = Ready(standby);
  EXPECT_EQ(status, 503);
  EXPECT_EQ(ready["leader_url"], urls_[leader]) << ready.dump();
  // A write to the standby is answered with the leader's address; a read is redirected there.
  Http at_standby(urls_[standby], daemons_[leader]->admin_token());
  auto w = at_standby.Post("/v1/jobs", R"({"name": "x"})");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->status, 503);
  EXPECT_EQ(Body(w)["leader"], urls_[leader]) << w->body;
  auto r = at_standby.Get("/v1/jobs?state=pending");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 307);
  EXPECT_EQ(r->get_header_value("Location"), urls_[leader] + "/v1/jobs?state=pending");
  // The CLI given both, the standby first, follows the leader.
  std::string out;
  const std::string env = "TESSERA_SERVER=" + urls_[standby] + "," + urls_[leader] +
                          " TESSERA_TOKEN=" + daemons_[leader]->admin_token() +
                          " HOME=" + dir_.string() + " ";
  ASSERT_EQ(testing::RunTessera("submit -f " + std::string(kLocal) + "/jobs.yaml", &out, true, env),
            0)
      << out;
  ASSERT_EQ(testing::RunTessera("get jobs -o json", &out, false, env), 0) << out;
  EXPECT_EQ(json::parse(out, nullptr, false)["items"].size(), 2u) << out;
  // Only the leader's log says it leads; the standby's says whom it waits on.
  EXPECT_NE(daemons_[leader]->log().find("\"msg\":\"leading\""), std::string::npos);
  EXPECT_NE(daemons_[standby]->log().find("\"msg\":\"standing by\""), std::string::npos);
  EXPECT_EQ(daemons_[standby]->log().find("\"msg\":\"leading\""), std::string::npos);
}

TEST_F(HaTest, ALeaderKilledAgainAndAgainDuringAStormLosesAndDuplicatesNothing) {
  daemons_[0]->Launch();
  ASSERT_TRUE(daemons_[0]->WaitReady()) << daemons_[0]->log();
  daemons_[1]->Launch();
  ASSERT_EQ(WaitForOneLeader(), 0);
  const std::string token = daemons_[0]->admin_token();
  cli::ClientConfig cfg{Both(), token, ""};
  // Each submitter sends jobs with keys of its own, each until acknowledged (a lost answer is
  // sent again under the same key); the first cancels every fifth job it got acknowledged.
  std::atomic<bool> storming{true};
  std::mutex mu;
  std::map<std::string, int64_t> acknowledged;  // key -> job id
  std::set<int64_t> cancelled;
  std::atomic<int> unacknowledged{0};
  auto submitter = [&](int t) {
    for (int i = 0; storming; ++i) {
      const std::string key = "s" + std::to_string(t) + "-" + std::to_string(i);
      json job = {{"name", key},
                  {"class", "batch"},
                  {"tenant", "lab/batch"},
                  {"taskGroups", {{{"name", "main"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}}}},
                  {"command", "true"}};
      cli::HttpReply r;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      do {
        r = cli::Call(cfg, "POST", "/v1/jobs", job.dump(), {{"Idempotency-Key", key}});
        if (r.status == 200 || r.status == 201) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      } while (std::chrono::steady_clock::now() < until);
      if (r.status != 200 && r.status != 201) {
        ++unacknowledged;
        continue;
      }
      const int64_t id = r.body["id"].get<int64_t>();
      {
        std::lock_guard<std::mutex> lock(mu);
        acknowledged[key] = id;
      }
      if (t != 0 || i % 5 != 0) continue;
      const std::string path = "/v1/jobs/" + std::to_string(id) + "/cancel";
      do {
        r = cli::Call(cfg, "POST", path, "");
        if (r.status == 202 || r.status == 200) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      } while (std::chrono::steady_clock::now() < until);
      if (r.status == 202 || r.status == 200) {
        std::lock_guard<std::mutex> lock(mu);
        cancelled.insert(id);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back(submitter, t);
  // A drain during the storm, acknowledged before the first kill.
  cli::HttpReply drained;
  for (int tries = 0; tries < 100 && drained.status != 200; ++tries) {
    drained = cli::Call(cfg, "POST", "/v1/nodes/bench-gpu-0001/drain", "");
    if (drained.status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(drained.status, 200) << drained.body.dump();
  // Three kills of whichever daemon leads; each killed one comes back as a standby.
  for (int kill = 0; kill < 3; ++kill) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    int leader = WaitForOneLeader();
    ASSERT_GE(leader, 0) << daemons_[0]->log() << daemons_[1]->log();
    daemons_[leader]->Kill9();
    daemons_[leader]->Launch();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  storming = false;
  for (std::thread& t : threads)
    t.join();
  int leader = WaitForOneLeader();
  ASSERT_GE(leader, 0);
  EXPECT_EQ(unacknowledged, 0);
  // Every acknowledged submission is there once, and no other; every acknowledged cancel held.
  Http admin(urls_[leader], token);
  std::map<std::string, int> seen;
  std::map<int64_t, std::string> states;
  int64_t after = 0;
  for (;;) {
    json page = Body(admin.Get("/v1/jobs?limit=1000&after=" + std::to_string(after)));
    ASSERT_TRUE(page.is_object());
    for (const json& j : page["items"]) {
      ++seen[j["name"].get<std::string>()];
      states[j["id"].get<int64_t>()] = j["state"].get<std::string>();
    }
    if (page["next"].is_null()) break;
    after = page["next"].get<int64_t>();
  }
  std::cout << acknowledged.size() << " submissions and " << cancelled.size()
            << " cancels acknowledged across 3 kills\n";
  ASSERT_GT(acknowledged.size(), 20u);
  EXPECT_EQ(seen.size(), acknowledged.size());
  for (const auto& [key, id] : acknowledged) {
    EXPECT_EQ(seen[key], 1) << key;
    EXPECT_TRUE(states.count(id)) << key;
  }
  for (int64_t id : cancelled)
    EXPECT_EQ(states[id], "cancelled") << id;
  EXPECT_FALSE(cancelled.empty());
  EXPECT_EQ(pg_->Sql("SELECT draining FROM node_flags WHERE node = 'bench-gpu-0001'"), "1");
}

TEST_F(HaTest, ALeaderFrozenPastItsLeaseIsDeposedAndItsLateWritesRefused) {
  daemons_[0]->Launch();
  ASSERT_TRUE(daemons_[0]->WaitReady()) << daemons_[0]->log();
  daemons_[1]->Launch();
  ASSERT_EQ(WaitForOneLeader(), 0);
  // The leader stops (a pause, a partition) long enough for the standby to take the lease.
  kill(daemons_[0]->pid(), SIGSTOP);
  bool took = false;
  for (int i = 0; i < 150 && !took; ++i) {
    took = Ready(1).first == 200;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(took) << daemons_[1]->log();
  Http leader(urls_[1], daemons_[0]->admin_token());
  auto r = leader.Post(
      "/v1/jobs",
      json({{"name", "after-takeover"},
            {"class", "batch"},
            {"tenant", "lab/batch"},
            {"taskGroups", {{{"name", "m"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}}}},
            {"command", "true"}})
          .dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? std::to_string(r->status) + r->body : "no answer");
  // Woken, the old leader finds its term over: it stops (exit 1) and says why.
  kill(daemons_[0]->pid(), SIGCONT);
  int status = -1;
  for (int i = 0; i < 100; ++i) {
    pid_t pid = daemons_[0]->pid();
    int ws = 0;
    if (waitpid(pid, &ws, WNOHANG) == pid) {
      status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 1) << daemons_[0]->log();
  EXPECT_NE(daemons_[0]->log().find("deposed"), std::string::npos) << daemons_[0]->log();
  EXPECT_EQ(Ready(1).first, 200);
  EXPECT_EQ(pg_->Sql("SELECT COUNT(*) FROM jobs WHERE name = 'after-takeover'"), "1");
  EXPECT_EQ(pg_->Sql("SELECT term FROM tessera_lease"), "2");
}

TEST_F(HaTest, ALeaderCutOffFromTheDatabaseStopsWithinItsLeaseAndSaysSo) {
  daemons_[0]->Launch();
  ASSERT_TRUE(daemons_[0]->WaitReady()) << daemons_[0]->log();
  pg_->Crash();
  // Within its lease (2 s) and a look (0.1 s), the leader neither leads nor takes writes.
  std::pair<int, json> ready = ReadyOnce(0, 503, 5);
  EXPECT_EQ(ready.first, 503);
  EXPECT_EQ(ready.second["status"], "not-leading") << ready.second.dump();
  Http leader(urls_[0], daemons_[0]->admin_token());
  auto w = leader.Post("/v1/nodes/bench-gpu-0000/cordon", "");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->status, 503) << w->body;
  // The log says so too (the lease is watched ten times a second).
  for (int i = 0; i < 20 && daemons_[0]->log().find("\"msg\":\"not leading\"") == std::string::npos;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(daemons_[0]->log().find("\"msg\":\"not leading\""), std::string::npos)
      << daemons_[0]->log();
  // The database back before another daemon took over: it leads again, in the same term.
  std::string error;
  ASSERT_TRUE(pg_->Start(&error)) << error;
  for (int i = 0; i < 100 && Ready(0).first != 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(Ready(0).first, 200);
  for (int i = 0;
       i < 20 && daemons_[0]->log().find("\"msg\":\"leading again\"") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(daemons_[0]->log().find("\"msg\":\"leading again\""), std::string::npos);
  w = leader.Post("/v1/nodes/bench-gpu-0000/cordon", "");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->status, 200) << w->body;
  EXPECT_EQ(pg_->Sql("SELECT term FROM tessera_lease"), "1");
}

TEST_F(HaTest, ADaemonStartedBeforeItsDatabaseStandsByUntilItCanLead) {
  pg_->Crash();
  daemons_[0]->Launch();
  std::pair<int, json> ready = ReadyOnce(0, 503, 10);
  EXPECT_EQ(ready.first, 503);
  EXPECT_EQ(ready.second["status"], "standby") << ready.second.dump();
  EXPECT_EQ(ready.second["leader"], "") << ready.second.dump();
  std::string error;
  ASSERT_TRUE(pg_->Start(&error)) << error;
  EXPECT_TRUE(daemons_[0]->WaitReady(30)) << daemons_[0]->log();
  EXPECT_NE(daemons_[0]->log().find("the store cannot be reached; waiting for it"),
            std::string::npos)
      << daemons_[0]->log();
}

// docs/operations.md's backup and restore: pg_dump -Fc while the daemon runs; every daemon
// stopped, pg_restore --clean, started again: the jobs of the dump are back as they were, what
// came after it is not, and new submissions take ids after the dump's.
TEST_F(HaTest, ABackupTakenWhileTheDaemonRunsRestoresItsJobs) {
  daemons_[0]->Launch();
  ASSERT_TRUE(daemons_[0]->WaitReady()) << daemons_[0]->log();
  Http http(urls_[0], daemons_[0]->admin_token());
  auto submit = [&](const std::string& name) -> int64_t {
    json job = {{"name", name},
                {"class", "batch"},
                {"tenant", "lab/batch"},
                {"taskGroups", {{{"name", "main"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}}}},
                {"command", "sleep 600"}};
    auto r = http.Post("/v1/jobs", job.dump());
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    return r ? Body(r).value("id", int64_t{0}) : 0;
  };
  const int64_t first = submit("before-1"), second = submit("before-2");
  ASSERT_TRUE(http.Post("/v1/jobs/" + std::to_string(second) + "/cancel", ""));
  const std::string dump = (dir_ / "tessera.dump").string();
  std::string out;
  ASSERT_EQ(testing::RunShell("timeout 60 pg_dump -Fc -d '" + pg_->url() + "' -f " + dump, &out), 0)
      << out;
  submit("after-the-dump");
  EXPECT_EQ(daemons_[0]->Stop(), 0) << daemons_[0]->log();
  ASSERT_EQ(
      testing::RunShell("timeout 60 pg_restore --clean -d '" + pg_->url() + "' " + dump, &out), 0)
      << out;
  daemons_[0]->Launch();
  ASSERT_TRUE(daemons_[0]->WaitReady()) << daemons_[0]->log();
  auto jobs = http.Get("/v1/jobs");
  ASSERT_TRUE(jobs && jobs->status == 200);
  std::map<std::string, std::pair<int64_t, std::string>> by_name;  // name -> id, state
  const json listed = Body(jobs);
  for (const json& j : listed["items"])
    by_name[j["name"]] = {j["id"], j["state"]};
  ASSERT_EQ(by_name.size(), 2u) << jobs->body;
  EXPECT_EQ(by_name["before-1"].first, first);
  EXPECT_NE(by_name["before-1"].second, "cancelled");
  EXPECT_EQ(by_name["before-2"], std::make_pair(second, std::string("cancelled")));
  EXPECT_EQ(submit("after-the-restore"), second + 1);
}

TEST_F(HaTest, AStandbyPromotedWhileAgentsRunTasksAdoptsThemAndStartsNoneTwice) {
  daemons_[0]->Launch();
  ASSERT_TRUE(daemons_[0]->WaitReady()) << daemons_[0]->log();
  daemons_[1]->Launch();
  ASSERT_EQ(WaitForOneLeader(), 0);
  Http admin(urls_[0], daemons_[0]->admin_token());
  std::vector<std::unique_ptr<AgentProcess>> agents;
  int i = 0;
  for (const char* node : {"bench-gpu-0000", "bench-gpu-0001", "bench-gpu-0002"}) {
    std::string token = AgentTokenOf(admin, node);
    ASSERT_FALSE(token.empty());
    agents.push_back(
        std::make_unique<AgentProcess>(dir_ / "agents", node, "127.0.0." + std::to_string(++i)));
    agents.back()->Start(Both(), token);  // both daemons: they follow the leader
  }
  json job = {{"name", "steady"},
              {"class", "training"},
              {"tenant", "lab/research"},
              {"taskGroups",
               {{{"name", "w"},
                 {"count", 2},
                 {"cpu", 2},
                 {"memory", "1Gi"},
                 {"devices", {{"count", 2}, {"models", {"L4"}}}}}}},
              {"command", "echo start task=$TESSERA_TASK_INDEX; sleep 8; echo done"}};
  int64_t id = 0;
  for (int tries = 0; tries < 300 && id == 0; ++tries) {
    auto r = admin.Post("/v1/jobs", job.dump(), {{"Idempotency-Key", "steady"}});
    if (r && (r->status == 201 || r->status == 200)) id = Body(r)["id"].get<int64_t>();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(id, 0);
  const std::string path = "/v1/jobs/" + std::to_string(id);
  auto state = [](const json& j) { return j.is_object() ? j.value("state", "") : ""; };
  json j;
  for (int tries = 0; tries < 300 && state(j) != "running"; ++tries) {
    j = Body(admin.Get(path));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(j["state"], "running") << j.dump();
  daemons_[0]->Kill9();
  Http promoted(urls_[1], daemons_[0]->admin_token());
  for (int tries = 0; tries < 600 && state(j) != "succeeded"; ++tries) {
    j = Body(promoted.Get(path));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(j["state"], "succeeded") << j.dump() << daemons_[1]->log();
  EXPECT_EQ(j["restarts"], 0);
  int logs = 0;
  for (auto& a : agents) {
    if (!std::filesystem::exists(a->work_dir() / "logs")) continue;
    for (const auto& f : std::filesystem::directory_iterator(a->work_dir() / "logs")) {
      if (f.path().filename().string().rfind(std::to_string(id) + ".", 0) != 0) continue;
      ++logs;
      std::string text = testing::ReadText(f.path());
      EXPECT_EQ(testing::CountOf(text, "start task="), 1) << f.path() << ": " << text;
    }
  }
  EXPECT_EQ(logs, 2);
  for (auto& a : agents)
    a->Stop();
}

// Bad HA flags exit 2 before anything starts, naming the flag; a URL's password is never shown.
TEST(HaFlags, BadValuesAreRefusedByName) {
  std::string out;
  const std::string serve = "serve --config " + std::string(kLocal);
  EXPECT_EQ(testing::RunTessera(serve + " --store postgres://u@h/db --lease 100ms", &out), 2)
      << out;
  EXPECT_NE(out.find("--lease: expected a duration from 500ms to 60s"), std::string::npos) << out;
  EXPECT_EQ(testing::RunTessera(serve + " --store postgres://u@h/db --lease soon", &out), 2) << out;
  EXPECT_EQ(testing::RunTessera(serve + " --store 'postgres://u:secret@h:5432/db?bogus=1'", &out),
            2)
      << out;
  EXPECT_NE(out.find("not a PostgreSQL URL"), std::string::npos) << out;
  EXPECT_EQ(out.find("secret"), std::string::npos) << out;
  EXPECT_EQ(testing::RunTessera(serve + " --store mysql://u:secret@h/db", &out), 2) << out;
  EXPECT_NE(out.find("--store: expected sqlite:PATH or postgres://"), std::string::npos) << out;
  EXPECT_EQ(out.find("secret"), std::string::npos) << out;
  EXPECT_EQ(testing::RunTessera("get jobs", &out, true, "TESSERA_SERVER=http://a:1,ftp://b "), 2)
      << out;
  EXPECT_NE(out.find("expected http://HOST:PORT"), std::string::npos) << out;
}

// scripts/ha-demo, as docs/operations.md gives it: a PostgreSQL, two daemons, the leader killed.
TEST(HaDemo, TheStandbyTakesOverWithEveryJob) {
  auto dir = FreshDir("ha-demo");
  const int base = testing::FreeLoopbackPort(17000);
  std::string out;
  int rc = testing::RunShell("cd " + dir.string() + " && TESSERA=" + TESSERA_BINARY +
                                 " TESSERA_PORT_BASE=" + std::to_string(base) + " timeout 120 " +
                                 TESSERA_SOURCE_DIR + "/scripts/ha-demo " + (dir / "ha").string(),
                             &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ha-demo: daemon 2 leads after"), std::string::npos) << out;
  EXPECT_NE(out.find("ha-demo: every job submitted before the kill is there"), std::string::npos)
      << out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
