// The local backend end to end: a real daemon on examples/local and three real `tessera
// agent` processes on loopback. Jobs run as real processes with their device variables, a
// killed agent's gang is requeued whole and completes elsewhere, a daemon killed while tasks
// run adopts them without starting any twice, cancellation sends SIGTERM first, and agents'
// syncs are checked like every request.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "backends/local/containment.h"
#include "testutil/agent_process.h"
#include "testutil/daemon_process.h"
#include "testutil/run_tessera.h"
#include "testutil/serve_client.h"
#include "testutil/two_speed_fleet.h"

namespace tessera {
namespace {

using json = nlohmann::json;
using testing::AgentProcess;
using testing::AgentTokenOf;
using testing::Body;
using testing::DaemonProcess;
using testing::FreshDir;
using testing::Http;
using testing::ReadText;
using testing::RunTessera;
using testing::TokenOf;

using testing::kLocal;
const char* kNodes[] = {"bench-gpu-0000", "bench-gpu-0001", "bench-gpu-0002"};

class AgentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    daemon_ = std::make_unique<DaemonProcess>(dir_ / "daemon", kLocal);
    daemon_->set_extra_args({"--agent-heartbeat", "500ms", "--agent-lost-after", "2s"});
    ASSERT_TRUE(daemon_->Start()) << daemon_->log();
    admin_ = std::make_unique<Http>(daemon_->url(), daemon_->admin_token());
    for (int i = 0; i < 3; ++i) {
      agent_tokens_[kNodes[i]] = AgentTokenOf(*admin_, kNodes[i]);
      ASSERT_FALSE(agent_tokens_[kNodes[i]].empty());
      agents_.push_back(std::make_unique<AgentProcess>(dir_ / "agents", kNodes[i],
                                                       "127.0.0." + std::to_string(i + 1)));
      agents_.back()->Start(daemon_->url(), agent_tokens_[kNodes[i]]);
    }
    ASSERT_TRUE(WaitForNodes(3)) << Body(admin_->Get("/v1/nodes")).dump();
  }
  void TearDown() override {
    for (auto& a : agents_) {
      a->Stop();
      // An agent killed and never restarted leaves its (empty) cgroups: removed here.
      std::filesystem::path subtree = CgroupDirOf(getpid());
      subtree /= "tessera-" + AgentIdentity(a->node(), a->work_dir().string());
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(subtree, ec))
        if (e.is_directory()) rmdir(e.path().c_str());
      rmdir(subtree.c_str());
    }
    daemon_->Stop();
    std::filesystem::remove_all(dir_);
  }

  // Until `ready` of the fleet's nodes are in service with an agent (30 s at most).
  bool WaitForNodes(int ready) {
    for (int i = 0; i < 300; ++i) {
      int n = 0;
      json nodes = Body(admin_->Get("/v1/nodes"));
      for (const json& node : nodes["items"])
        n += node["state"] == "ready" && node["agent"].is_object();
      if (n == ready) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  int64_t Submit(const json& job) {
    auto r = admin_->Post("/v1/jobs", job.dump());
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    return r && r->status == 201 ? Body(r)["id"].get<int64_t>() : 0;
  }

  // The job once `done(job)` holds, or as it last was after 60 s.
  template <typename Pred>
  json WaitFor(int64_t id, Pred done) {
    json j;
    for (int i = 0; i < 600; ++i) {
      j = Body(admin_->Get("/v1/jobs/" + std::to_string(id)));
      if (j.is_object() && done(j)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return j;
  }
  json WaitForState(int64_t id, const std::string& state) {
    return WaitFor(id, [&](const json& j) { return j["state"] == state; });
  }

  AgentProcess* AgentOf(const std::string& node) {
    for (auto& a : agents_)
      if (a->node() == node) return a.get();
    return nullptr;
  }

  std::string Cli(const std::string& args, int* code = nullptr) {
    std::string out;
    int rc = RunTessera(args, &out, true, daemon_->CliEnv());
    if (code != nullptr) *code = rc;
    return out;
  }

  std::filesystem::path dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<Http> admin_;
  std::map<std::string, std::string> agent_tokens_;  // by node: each agent's own, bound to it
  std::vector<std::unique_ptr<AgentProcess>> agents_;
};

// Two tasks of one GPU each, a gang: each prints what it was given, then sleeps `seconds`.
json Gang(const std::string& name, int seconds, int checkpoint_s = 0) {
  json j = {{"name", name},
            {"class", "training"},
            {"tenant", "lab/research"},
            {"taskGroups",
             {{{"name", "w"},
               {"count", 2},
               {"cpu", 2},
               {"memory", "1Gi"},
               {"devices", {{"count", 2}, {"models", {"L4"}}}}}}},
            {"command",
             "echo start task=$TESSERA_TASK_INDEX node=$TESSERA_NODE "
             "restart=$TESSERA_RESTART_COUNT; sleep " +
                 std::to_string(seconds) + "; echo done"}};
  if (checkpoint_s > 0) j["checkpointInterval"] = std::to_string(checkpoint_s) + "s";
  return j;
}

// Two agents' nodes of one cluster, a slow model on one and a fast one on the other, under
// the hetero policy.
class HeteroAgentsTest : public AgentsTest {
 protected:
  void SetUp() override {
    dir_ = FreshDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "config");
    std::ofstream(dir_ / "config" / "fleet.yaml") << testing::TwoSpeedFleet("mixed", "local");
    daemon_ = std::make_unique<DaemonProcess>(dir_ / "daemon", (dir_ / "config").string());
    daemon_->set_extra_args({"--agent-heartbeat", "500ms", "--agent-lost-after", "5s"});
    ASSERT_TRUE(daemon_->Start()) << daemon_->log();
    admin_ = std::make_unique<Http>(daemon_->url(), daemon_->admin_token());
    int i = 0;
    for (const char* node : {"mixed-slow-0000", "mixed-fast-0000"}) {
      agent_tokens_[node] = AgentTokenOf(*admin_, node);
      agents_.push_back(
          std::make_unique<AgentProcess>(dir_ / "agents", node, "127.0.0." + std::to_string(++i)));
      agents_.back()->Start(daemon_->url(), agent_tokens_[node]);
    }
    ASSERT_TRUE(WaitForNodes(2)) << Body(admin_->Get("/v1/nodes")).dump();
  }
};

// hetero's move of a running preemptible job to a faster model, live on agents: its run on the
// slow model is stopped (its process gets TERM) and it starts again on the fast one, once the
// fast one frees; the decision log says "migrate" and which policy moved it.
TEST_F(HeteroAgentsTest, AJobMovesToTheFasterModelOnceItFrees) {
  auto job = [](const std::string& name, const std::string& command, json models) {
    return json{{"name", name},
                {"class", "batch"},
                {"tenant", "lab"},
                {"preemptible", true},
                {"runtime", "10h"},
                {"taskGroups",
                 {{{"name", "w"},
                   {"count", 1},
                   {"cpu", 1},
                   {"memory", "1Gi"},
                   {"devices", {{"count", 1}, {"models", models}}}}}},
                {"command", command}};
  };
  const int64_t blocker = Submit(job("blocker", "sleep 2", {"V100"}));
  ASSERT_EQ(WaitForState(blocker, "running")["state"], "running");
  const int64_t mover =
      Submit(job("mover", "echo start node=$TESSERA_NODE restart=$TESSERA_RESTART_COUNT; sleep 600",
                 {{{"model", "V100"}, {"speed", 1}}, {{"model", "K80"}, {"speed", 0.25}}}));
  json first = WaitForState(mover, "running");
  ASSERT_EQ(first["state"], "running") << first.dump();
  EXPECT_EQ(first["placement"][0]["node"], "mixed-slow-0000") << first.dump();
  json moved = WaitFor(mover, [](const json& j) {
    return j["restarts"] == 1 && j["state"] == "running" &&
           j["placement"][0]["node"] == "mixed-fast-0000";
  });
  ASSERT_EQ(moved["restarts"], 1) << moved.dump() << daemon_->log();
  EXPECT_EQ(moved["placement"][0]["node"], "mixed-fast-0000") << moved.dump();
  EXPECT_EQ(WaitForState(blocker, "succeeded")["state"], "succeeded");
  // Its task runs on the fast node's agent now, as its second run; none is left on the slow one.
  std::string log;
  for (int i = 0; i < 100 && log.find("restart=1") == std::string::npos; ++i) {
    log = Cli("logs mover");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(log.find("start node=mixed-fast-0000 restart=1"), std::string::npos) << log;
  json slow;
  for (int i = 0; i < 100; ++i) {
    slow = Body(admin_->Get("/v1/nodes/mixed-slow-0000"));
    if (slow["agent"].is_object() && slow["agent"]["tasks"] == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(slow["agent"]["tasks"], 0) << slow.dump();
  json explained = Body(admin_->Get("/v1/jobs/mover/explain"));
  std::vector<std::string> kinds;
  for (const json& d : explained["decisions"]) {
    kinds.push_back(d["kind"]);
    if (d["kind"] == "migrate") {
      EXPECT_EQ(d["reason"], "faster-model:V100 x4.00");
      EXPECT_EQ(d["detail"]["policy"], "hetero");
    }
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"start", "migrate", "start"})) << explained.dump();
}

TEST_F(AgentsTest, TheExampleJobsRunAsProcessesWithTheirDevicesAndPeers) {
  int code = 0;
  std::string out = Cli("submit -f " + kLocal + "/jobs.yaml", &code);
  ASSERT_EQ(code, 0) << out;
  json gang = WaitForState(1, "succeeded");
  json batch = WaitForState(2, "succeeded");
  ASSERT_EQ(gang["state"], "succeeded") << gang.dump();
  ASSERT_EQ(batch["state"], "succeeded") << batch.dump();

  // Each task saw its own node, both of its node's GPUs, the gang's size and both peers.
  std::string t0 = Cli("logs gang-hello --task 0", &code);
  ASSERT_EQ(code, 0) << t0;
  std::string t1 = Cli("logs gang-hello --task 1");
  for (const std::string* t : {&t0, &t1}) {
    EXPECT_NE(t->find("of 2 on bench-gpu-000"), std::string::npos) << *t;
    EXPECT_NE(t->find("GPUs 0,1 peers 127.0.0."), std::string::npos) << *t;
    EXPECT_NE(t->find("restart 0"), std::string::npos) << *t;
  }
  EXPECT_NE(t0.find("task 0 of 2"), std::string::npos) << t0;
  EXPECT_NE(t1.find("task 1 of 2"), std::string::npos) << t1;
  std::string batch_log = Cli("logs batch-hello");
  EXPECT_NE(batch_log.find("batch on bench-gpu-000"), std::string::npos) << batch_log;
  EXPECT_NE(batch_log.find(" GPU 0"), std::string::npos) << batch_log;

  // explain says why; the decision log has the start on both nodes and the finish.
  std::string why = Cli("explain job gang-hello");
  EXPECT_NE(why.find("start"), std::string::npos) << why;
  EXPECT_NE(why.find("finish"), std::string::npos) << why;

  // The fleet view shows each node's agent and its telemetry.
  json node = Body(admin_->Get("/v1/nodes/bench-gpu-0000"));
  ASSERT_TRUE(node["agent"].is_object()) << node.dump();
  EXPECT_EQ(node["agent"]["address"], "127.0.0.1");
  EXPECT_EQ(node["agent"]["live"], true);
  EXPECT_GT(node["agent"]["cpu"].get<int64_t>(), 0);
  EXPECT_GT(node["agent"]["memory_mib"].get<int64_t>(), 0);
  // /metrics has each agent's liveness and its host's telemetry.
  auto metrics = Http(daemon_->url()).Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("tessera_agent_up{node=\"bench-gpu-0000\"} 1"), std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("tessera_node_memory_used_bytes{node=\"bench-gpu-0002\"}"),
            std::string::npos);

  // The tails of ended tasks are in the store: a restarted daemon still shows them, though
  // the agents reported them to the previous one.
  daemon_->Kill9();
  daemon_->KeepPort();
  ASSERT_TRUE(daemon_->Start()) << daemon_->log();
  admin_ = std::make_unique<Http>(daemon_->url(), daemon_->admin_token());
  std::string again = Cli("logs gang-hello --task 1", &code);
  ASSERT_EQ(code, 0) << again;
  EXPECT_EQ(again, t1);
  EXPECT_EQ(Cli("logs batch-hello"), batch_log);
}

// An elastic gang on agents: three 2-GPU tasks, only one node free. Its first task runs and
// exits while the blocker holds the other two nodes; the run has not ended (two of its tasks
// never ran), grows onto them once the blocker ends, and succeeds when all three exited 0 —
// each task run once, none started twice.
TEST_F(AgentsTest, AnElasticGangGrowsOntoNodesAsTheyFreeAndEndsWhenEveryTaskRan) {
  json blocker = Gang("blocker", 3);
  const int64_t b = Submit(blocker);
  ASSERT_EQ(WaitForState(b, "running")["state"], "running");
  json array = {{"name", "array"},
                {"class", "batch"},
                {"tenant", "lab/batch"},
                {"taskGroups",
                 {{{"name", "w"},
                   {"count", 3},
                   {"cpu", 2},
                   {"memory", "1Gi"},
                   {"devices", {{"count", 2}, {"models", {"L4"}}}}}}},
                {"gang", {{"minMembers", 1}}},
                {"command", "echo ran task=$TESSERA_TASK_INDEX on $TESSERA_NODE; sleep 1"}};
  const int64_t a = Submit(array);
  json done = WaitForState(a, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump();
  EXPECT_EQ(done["restarts"], 0) << done.dump();
  for (int task = 0; task < 3; ++task) {
    std::string log = Cli("logs array --task " + std::to_string(task));
    EXPECT_NE(log.find("ran task=" + std::to_string(task)), std::string::npos) << log;
    EXPECT_EQ(log.find("ran task="), log.rfind("ran task=")) << "task " << task << " ran twice";
  }
  std::vector<std::string> kinds;
  json why = Body(admin_->Get("/v1/jobs/" + std::to_string(a) + "/explain"));
  for (const json& d : why["decisions"])
    kinds.push_back(d["kind"]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"start", "grow", "finish"})) << why.dump();
}

TEST_F(AgentsTest, AServicesReplicasRunOnAgentsUntilTheServiceIsDeleted) {
  json svc = {{"name", "echo"},
              {"tenant", "lab/research"},
              {"replicas", {{"min", 2}, {"max", 2}}},
              {"replica", {{"cpu", 1}, {"memory", "1Gi"}, {"devices", {{"count", 1}}}}},
              {"latencySLO", "500ms"},
              {"serviceTime", "100ms"},
              {"load", {{"peakRps", 10}, {"rpsPerReplica", 10}, {"curve", "flat"}}}};
  auto r = admin_->Post("/v1/services", svc.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  // Both replicas run as processes: the agents hold two tasks between them.
  auto tasks = [&] {
    int n = 0;
    json nodes = Body(admin_->Get("/v1/nodes"));
    for (const json& node : nodes["items"])
      n += node["agent"].is_object() ? node["agent"]["tasks"].get<int>() : 0;
    return n;
  };
  int held = 0;
  for (int i = 0; i < 300 && (held = tasks()) != 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(held, 2) << Body(admin_->Get("/v1/services/echo")).dump();
  r = admin_->Delete("/v1/services/echo");
  ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
  for (int i = 0; i < 300 && (held = tasks()) != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(held, 0);
}

TEST_F(AgentsTest, AKilledAgentsGangIsRequeuedWholeAndCompletesOnOtherNodes) {
  int64_t id = Submit(Gang("resilient", 4, 60));
  json running = WaitFor(
      id, [](const json& j) { return j["state"] == "running" && j["placement"].size() == 2; });
  ASSERT_EQ(running["state"], "running") << running.dump();
  std::string lost_node = running["placement"][0]["node"];
  auto why_here = [&] {
    return Body(admin_->Get("/v1/jobs/" + std::to_string(id) + "/explain")).value("why_here", "");
  };
  EXPECT_EQ(why_here(), "bench (the fleet's only cluster)");
  // The placement names each task's kind, not the number the store keeps.
  EXPECT_EQ(running["placement"][0]["kind"], "2 devices") << running.dump();
  // The task has started before its agent dies.
  std::string first;
  for (int i = 0; i < 100 && first.find("start") == std::string::npos; ++i) {
    first = Body(admin_->Get("/v1/jobs/" + std::to_string(id) + "/logs?task=0")).value("log", "");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(first.find("node=" + lost_node), std::string::npos) << first;
  AgentOf(lost_node)->Kill9();
  // Running again elsewhere, it says where and why, as the first run did.
  json again = WaitFor(id, [](const json& j) {
    return j["state"] == "succeeded" || (j["state"] == "running" && j["restarts"] == 1);
  });
  ASSERT_EQ(again["state"], "running") << again.dump();
  EXPECT_EQ(why_here(), "bench (the fleet's only cluster)");

  json done = WaitForState(id, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump();
  EXPECT_EQ(done["restarts"], 1);
  for (const json& p : done["placement"])
    EXPECT_NE(p["node"], lost_node) << done.dump();
  // The second run knows it is one, on both tasks; the first run's tasks were stopped.
  for (int task = 0; task < 2; ++task) {
    json log =
        Body(admin_->Get("/v1/jobs/" + std::to_string(id) + "/logs?task=" + std::to_string(task)));
    EXPECT_EQ(log["run"], 1);
    EXPECT_NE(log["log"].get<std::string>().find("restart=1"), std::string::npos) << log.dump();
    EXPECT_NE(log["log"].get<std::string>().find("done"), std::string::npos) << log.dump();
  }
  // Why: the node was lost, the gang requeued as a whole.
  json why = Body(admin_->Get("/v1/jobs/" + std::to_string(id) + "/explain"));
  std::string decisions = why["decisions"].dump();
  EXPECT_NE(decisions.find("node-lost:" + lost_node), std::string::npos) << decisions;
  // The work the lost run threw away is accounted: two tasks of two devices each, running
  // for a while since their start (the job's checkpoints are a minute apart).
  for (const json& d : why["decisions"]) {
    if (d["kind"] != "requeue") continue;
    ASSERT_TRUE(d.contains("detail")) << d.dump();
    EXPECT_GT(d["detail"]["lost_device_seconds"].get<double>(), 0.0) << d.dump();
    EXPECT_EQ(d["detail"]["restarts"], 1);
  }
  json node = Body(admin_->Get("/v1/nodes/" + lost_node));
  EXPECT_EQ(node["state"], "down") << node.dump();
}

// A job of one task that double-forks a sleeper into a session of its own (writing its pid to
// CHECKPOINT_DIR/sleeper-RESTART.pid), then sleeps itself.
json Escaper(const std::string& name) {
  return {{"name", name},
          {"class", "training"},
          {"tenant", "lab/research"},
          {"taskGroups",
           {{{"name", "w"},
             {"count", 1},
             {"cpu", 1},
             {"memory", "1Gi"},
             {"devices", {{"count", 1}, {"models", {"L4"}}}}}}},
          {"command",
           "(setsid sh -c 'sleep 600 & echo $! > "
           "$TESSERA_CHECKPOINT_DIR/sleeper-$TESSERA_RESTART_COUNT.pid; wait' &); sleep 600"}};
}

// The sleeper's pid a run of the job wrote on `node` (0 after 10 s).
pid_t SleeperOf(AgentProcess* agent, int64_t id, int run) {
  std::filesystem::path file = agent->work_dir() / "checkpoints" / std::to_string(id) /
                               ("sleeper-" + std::to_string(run) + ".pid");
  for (int i = 0; i < 100; ++i) {
    std::ifstream in(file);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return 0;
}

bool DiesWithin10s(pid_t pid) {
  for (int i = 0; i < 100 && ProcessAlive(pid); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return !ProcessAlive(pid);
}

// A task's setsid'd grandchild ran on after a cancel, and after its agent's kill -9 while the job
// restarted elsewhere. Each task now runs in a cgroup of its own (CI runs as root): a cancel
// kills all of it and removes the cgroup, and a restarted agent kills what its predecessor left
// before it reports to the daemon.
TEST_F(AgentsTest, NoProcessOfARunOutlivesItsCancelOrItsAgentsKillAndRestart) {
  for (auto& a : agents_)
    EXPECT_NE(a->log().find("tasks are contained by cgroup v2"), std::string::npos) << a->log();
  int64_t id = Submit(Escaper("cancelled"));
  json running = WaitForState(id, "running");
  ASSERT_EQ(running["state"], "running") << running.dump();
  AgentProcess* agent = AgentOf(running["placement"][0]["node"]);
  ASSERT_NE(agent, nullptr);
  pid_t sleeper = SleeperOf(agent, id, 0);
  ASSERT_GT(sleeper, 0) << agent->log();
  const std::string cgroup = CgroupDirOf(sleeper);
  EXPECT_NE(cgroup.find("/tessera-" + agent->node() + "-"), std::string::npos) << cgroup;
  auto r = admin_->Post("/v1/jobs/" + std::to_string(id) + "/cancel", "");
  ASSERT_TRUE(r && r->status == 202) << (r ? r->body : "");
  EXPECT_TRUE(DiesWithin10s(sleeper)) << "the sleeper " << sleeper << " outlived the cancel";
  for (int i = 0; i < 100 && std::filesystem::exists(cgroup); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(std::filesystem::exists(cgroup)) << cgroup;

  // The agent dies (kill -9) while the run goes on: its task dies with it, the sleeper does not;
  // the daemon requeues the job elsewhere, and the agent, restarted, kills the sleeper.
  id = Submit(Escaper("moved"));
  running = WaitForState(id, "running");
  ASSERT_EQ(running["state"], "running") << running.dump();
  const std::string node = running["placement"][0]["node"];
  agent = AgentOf(node);
  sleeper = SleeperOf(agent, id, 0);
  ASSERT_GT(sleeper, 0) << agent->log();
  agent->Kill9();
  json moved =
      WaitFor(id, [](const json& j) { return j["restarts"] == 1 && j["state"] == "running"; });
  ASSERT_EQ(moved["state"], "running") << moved.dump();
  EXPECT_NE(moved["placement"][0]["node"], node);
  EXPECT_TRUE(ProcessAlive(sleeper))
      << "the sleeper died with its agent: the restart has nothing to do";
  agent->Start(daemon_->url(), agent_tokens_[node]);
  EXPECT_TRUE(DiesWithin10s(sleeper))
      << "the sleeper " << sleeper << " outlived its agent's restart: " << agent->log();
  // The agent says so once the kill is done, which may be just after the sleeper is gone.
  const std::string said = " processes of tasks an earlier run of this agent left";
  for (int i = 0; i < 100 && agent->log().find(said) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_NE(agent->log().find(said), std::string::npos) << agent->log();
  ASSERT_EQ(admin_->Post("/v1/jobs/" + std::to_string(id) + "/cancel", "")->status, 202);
}

TEST_F(AgentsTest, ADaemonKilledWhileTasksRunAdoptsThemAndStartsNoneTwice) {
  int64_t id = Submit(Gang("steady", 4));
  json running = WaitFor(id, [](const json& j) { return j["state"] == "running"; });
  ASSERT_EQ(running["state"], "running");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  daemon_->Kill9();
  daemon_->KeepPort();
  ASSERT_TRUE(daemon_->Start()) << daemon_->log();
  admin_ = std::make_unique<Http>(daemon_->url(), daemon_->admin_token());
  json done = WaitForState(id, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump() << daemon_->log();
  EXPECT_EQ(done["restarts"], 0);
  // Each task's output has one start: nothing ran twice.
  int logs = 0;
  for (auto& a : agents_) {
    if (!std::filesystem::exists(a->work_dir() / "logs")) continue;  // ran nothing
    for (const auto& f : std::filesystem::directory_iterator(a->work_dir() / "logs")) {
      if (f.path().filename().string().rfind(std::to_string(id) + ".", 0) != 0) continue;
      ++logs;
      std::string text = ReadText(f.path());
      EXPECT_EQ(testing::CountOf(text, "start task="), 1) << f.path() << ": " << text;
      EXPECT_EQ(testing::CountOf(text, "done"), 1) << f.path() << ": " << text;
    }
  }
  EXPECT_EQ(logs, 2);
  std::string decisions =
      Body(admin_->Get("/v1/jobs/" + std::to_string(id) + "/explain"))["decisions"].dump();
  EXPECT_NE(decisions.find("adopted"), std::string::npos) << decisions;
}

TEST_F(AgentsTest, CancellingAJobSendsItsTasksTermFirst) {
  json job = Gang("patient", 60);
  job["command"] = "trap 'echo got-term; exit 0' TERM; echo up; while true; do sleep 0.1; done";
  int64_t id = Submit(job);
  json running = WaitFor(id, [](const json& j) { return j["state"] == "running"; });
  ASSERT_EQ(running["state"], "running");
  std::string up;
  for (int i = 0; i < 100 && up.find("up") == std::string::npos; ++i) {
    up = Body(admin_->Get("/v1/jobs/" + std::to_string(id) + "/logs?task=1")).value("log", "");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto r = admin_->Post("/v1/jobs/" + std::to_string(id) + "/cancel", "");
  ASSERT_TRUE(r && r->status == 202);
  std::string log;
  for (int i = 0; i < 100 && log.find("got-term") == std::string::npos; ++i) {
    log = Body(admin_->Get("/v1/jobs/" + std::to_string(id) + "/logs?task=1")).value("log", "");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(log.find("got-term"), std::string::npos) << log;
  EXPECT_EQ(WaitForState(id, "cancelled")["state"], "cancelled");
}

TEST_F(AgentsTest, AnAgentGivenDevicesHandsTasksTheHostsIndices) {
  // bench-gpu-0002's agent answers for host GPUs 7 and 3: the node's devices 0 and 1.
  AgentProcess* a = AgentOf("bench-gpu-0002");
  a->Stop();
  a->Start(daemon_->url(), agent_tokens_["bench-gpu-0002"], {"--devices", "7,3"});
  for (const char* n : {"bench-gpu-0000", "bench-gpu-0001"})
    ASSERT_EQ(admin_->Post(std::string("/v1/nodes/") + n + "/cordon", "")->status, 200);
  json job = Gang("mapped", 0);
  job["taskGroups"][0]["count"] = 1;
  job["taskGroups"][0]["devices"]["count"] = 1;
  job["command"] = "echo cuda=$CUDA_VISIBLE_DEVICES tessera=$TESSERA_VISIBLE_DEVICES";
  int64_t id = Submit(job);
  json done = WaitForState(id, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump();
  std::string log = Body(admin_->Get("/v1/jobs/" + std::to_string(id) + "/logs")).value("log", "");
  EXPECT_EQ(log, "cuda=7 tessera=7\n");
}

TEST_F(AgentsTest, AgentSyncsAreCheckedLikeEveryRequest) {
  const std::string sync = "/v1/agents/bench-gpu-0000/sync";
  const std::string hello = R"({"protocol":1,"agent":"probe"})";
  Http anonymous(daemon_->url());
  auto r = anonymous.Post(sync, hello);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  std::string member = TokenOf(*admin_, "ann", "member", "lab/research");
  Http as_member(daemon_->url(), member);
  r = as_member.Post(sync, hello);
  EXPECT_EQ(r->status, 403) << r->body;
  Http agent(daemon_->url(), agent_tokens_["bench-gpu-0000"]);
  Http admin_as_agent(daemon_->url(), daemon_->admin_token());
  r = admin_as_agent.Post("/v1/agents/no-such-node/sync", hello);
  EXPECT_EQ(r->status, 404) << r->body;
  r = agent.Post(sync, R"({"protocol":1,"agent":"probe","tasks":[{"key":"x"}]})");
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(Body(r)["field"], "tasks[0].key");
  r = agent.Post(sync, "{");
  EXPECT_EQ(r->status, 400) << r->body;
  // An agent's token reads and changes nothing else.
  r = agent.Post("/v1/jobs", Gang("sneaky", 1).dump());
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_TRUE(Body(agent.Get("/v1/jobs"))["items"].empty());
  // Logs of a job that never ran on an agent: 404 with why.
  r = admin_->Get("/v1/jobs/999/logs");
  EXPECT_EQ(r->status, 404);

  // A principal bound to a node (docs/operations.md): its token syncs that node and no other.
  int code = -1;
  std::string out =
      Cli("principal create agent-0 --role agent --node bench-gpu-0000 -o json", &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_EQ(json::parse(out)["node"], "bench-gpu-0000") << out;
  out = Cli("token create agent-0 -o json", &code);
  ASSERT_EQ(code, 0) << out;
  Http bound(daemon_->url(), json::parse(out)["token"].get<std::string>());
  r = bound.Post("/v1/agents/bench-gpu-0001/sync", hello);
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_NE(Body(r).value("message", "").find("\"bench-gpu-0000\" only"), std::string::npos)
      << r->body;
  // Only an agent is bound to a node, and only to one the fleet has.
  out =
      Cli("principal create ann --role member --tenant lab/research --node bench-gpu-0000", &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("only an agent is bound to a node"), std::string::npos) << out;
  r = admin_->Post("/v1/principals", R"({"name":"agent-x","role":"agent","node":"no-such-node"})");
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(Body(r)["field"], "node") << r->body;
  EXPECT_EQ(admin_->Get("/v1/principals")->body.find("agent-x"), std::string::npos);
  // Its own node it syncs (last: the probe takes the node over from the agent running there).
  r = bound.Post(sync, hello);
  EXPECT_EQ(r->status, 200) << r->body;
}

// The agents' GPU telemetry is what idle-reclaim rules judge: a run whose GPUs its agents
// report idle past the rule's `after` gets the rule's action (here: the owner is notified).
// Three agents are played over the protocol itself, reporting every GPU idle.
TEST(AgentTelemetry, IdleGpusTriggerIdleReclaimAndAnotherGpuCountIsFlagged) {
  auto dir = FreshDir("idle-telemetry");
  std::filesystem::create_directories(dir / "config");
  std::filesystem::copy_file(kLocal + "/fleet.yaml", dir / "config" / "fleet.yaml");
  std::ofstream(dir / "config" / "policies.yaml") << R"(policies:
  - name: idle-gpus
    kind: idleReclaim
    after: 1s
    utilizationBelow: 0.05
    action: notify
)";
  DaemonProcess daemon(dir / "daemon", (dir / "config").string());
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  Http admin(daemon.url(), daemon.admin_token());
  std::map<std::string, Http> agents;  // each node's agent, with its own bound token
  for (const char* n : kNodes)
    agents.try_emplace(n, daemon.url(), AgentTokenOf(admin, n));
  auto sync_all = [&](double busy) {
    for (int i = 0; i < 3; ++i) {
      json req = {
          {"protocol", 1},
          {"agent", "played-" + std::to_string(i)},
          {"telemetry",
           {{"gpus",
             {{{"index", 0}, {"utilization", busy}}, {{"index", 1}, {"utilization", busy}}}}}}};
      auto r =
          agents.at(kNodes[i]).Post(std::string("/v1/agents/") + kNodes[i] + "/sync", req.dump());
      ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "");
    }
  };
  sync_all(0.0);
  json job = {
      {"name", "notebook"},
      {"class", "batch"},
      {"tenant", "lab/research"},
      {"taskGroups",
       {{{"name", "m"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}, {"devices", {{"count", 2}}}}}},
      {"command", "sleep 600"}};
  auto r = admin.Post("/v1/jobs", job.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  std::string decisions;
  for (int i = 0; i < 150 && decisions.find("\"idle\"") == std::string::npos; ++i) {
    sync_all(0.0);
    decisions = Body(admin.Get("/v1/jobs/notebook/explain"))["decisions"].dump();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(decisions.find("\"idle\""), std::string::npos) << decisions;
  // The played agents list two GPUs, as the fleet declares; one listing three is flagged.
  json node = Body(admin.Get("/v1/nodes/bench-gpu-0000"));
  EXPECT_FALSE(node["agent"].contains("mismatch")) << node.dump();
  json three = {{"protocol", 1},
                {"agent", "played-0"},
                {"telemetry", {{"gpus", {{{"index", 0}}, {{"index", 1}}, {{"index", 2}}}}}}};
  ASSERT_EQ(
      agents.at("bench-gpu-0000").Post("/v1/agents/bench-gpu-0000/sync", three.dump())->status,
      200);
  node = Body(admin.Get("/v1/nodes/bench-gpu-0000"));
  EXPECT_EQ(node["agent"]["mismatch"],
            "the fleet declares 2 devices on this node; the agent's host has 3")
      << node.dump();
  daemon.Stop();
  std::filesystem::remove_all(dir);
}

// Tasks ran as the agent's user, root on most hosts. A tenant's runAs now names the host user
// its tasks run as (the root agent drops to it before the program starts), in a checkpoint
// directory that is that user's; a tenant that names none takes the cluster's.
TEST(AgentRunAs, ATenantsTasksRunAsItsHostUser) {
  ASSERT_EQ(geteuid(), 0u) << "switching users needs a root agent (CI runs as root)";
  const passwd* nobody = getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  const uid_t uid = nobody->pw_uid;
  auto dir = FreshDir("run-as");
  std::filesystem::create_directories(dir / "config");
  std::ofstream(dir / "config" / "fleet.yaml") << R"(deviceModels:
  - {name: L4, kind: gpu, vendor: nvidia, memory: 24Gi}
regions:
  - name: lab
clusters:
  - name: bench
    region: lab
    backend: local
    runAs: {user: nobody}
    nodeGroups:
      - {name: gpu, count: 1, cpu: 4, memory: 8Gi, devices: {model: L4, count: 2}}
tenants:
  - name: lab
    children:
      - name: ops
        runAs: {user: daemon}
      - name: research
)";
  DaemonProcess daemon(dir / "daemon", (dir / "config").string());
  daemon.set_extra_args({"--agent-heartbeat", "500ms"});
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  Http admin(daemon.url(), daemon.admin_token());
  AgentProcess agent(dir / "agents", "bench-gpu-0000", "127.0.0.1");
  agent.Start(daemon.url(), AgentTokenOf(admin, "bench-gpu-0000"));
  auto submit = [&](const std::string& tenant) {
    json job = {{"name", "who-" + tenant.substr(4)},
                {"class", "batch"},
                {"tenant", tenant},
                {"taskGroups", {{{"name", "w"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}}}},
                {"command", "echo uid=$(id -u) user=$USER; touch $TESSERA_CHECKPOINT_DIR/mine"}};
    auto r = admin.Post("/v1/jobs", job.dump());
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "");
    return r && r->status == 201 ? Body(r)["id"].get<int64_t>() : 0;
  };
  const int64_t research = submit("lab/research");
  const int64_t ops = submit("lab/ops");
  auto done = [&](int64_t id) {
    json j;
    for (int i = 0; i < 300; ++i) {
      j = Body(admin.Get("/v1/jobs/" + std::to_string(id)));
      if (j["state"] == "succeeded" || j["state"] == "failed") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return j;
  };
  json r = done(research);
  EXPECT_EQ(r["state"], "succeeded") << r.dump() << agent.log();
  std::string log =
      Body(admin.Get("/v1/jobs/" + std::to_string(research) + "/logs")).value("log", "");
  EXPECT_NE(log.find("uid=" + std::to_string(uid) + " user=nobody"), std::string::npos) << log;
  struct stat st {};
  ASSERT_EQ(
      stat((agent.work_dir() / "checkpoints" / std::to_string(research) / "mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid);
  json o = done(ops);
  EXPECT_EQ(o["state"], "succeeded") << o.dump() << agent.log();
  const passwd* daemon_user = getpwnam("daemon");
  ASSERT_NE(daemon_user, nullptr);
  log = Body(admin.Get("/v1/jobs/" + std::to_string(ops) + "/logs")).value("log", "");
  EXPECT_NE(log.find("uid=" + std::to_string(daemon_user->pw_uid) + " user=daemon"),
            std::string::npos)
      << log;
  agent.Stop();
  daemon.Stop();
  std::filesystem::remove_all(dir);
}

TEST(AgentTelemetry, AnAscendHostReportsItsNpusFromNpuSmi) {
  // A host with `npu-smi` (a script printing the table an Atlas A2 host prints): the agent
  // lists its NPUs, the task gets ASCEND_RT_VISIBLE_DEVICES, the AI Core use reaches the node
  // view and /metrics.
  auto dir = FreshDir("ascend-telemetry");
  std::filesystem::create_directories(dir / "config");
  std::filesystem::create_directories(dir / "bin");
  std::ofstream(dir / "config" / "fleet.yaml") << R"(deviceModels:
  - {name: 910B3, kind: npu, vendor: huawei, memory: 64Gi}
regions:
  - name: lab
clusters:
  - name: ascend
    region: lab
    tier: dedicated
    backend: local
    prices: {910B3: 1}
    nodeGroups:
      - {name: npu, count: 1, cpu: 4, memory: 8Gi, devices: {model: 910B3, count: 2}}
tenants:
  - name: lab
    quotas:
      910B3: {guaranteed: 2}
)";
  {
    std::ofstream smi(dir / "bin" / "npu-smi");
    smi << "#!/bin/sh\n[ \"$1\" = info ] || exit 2\nexec cat " << TESSERA_SOURCE_DIR
        << "/tests/backends/testdata/npu-smi-atlas-a2.txt\n";
  }
  std::filesystem::permissions(dir / "bin" / "npu-smi", std::filesystem::perms::owner_all);
  DaemonProcess daemon(dir / "daemon", (dir / "config").string());
  daemon.set_extra_args({"--agent-heartbeat", "500ms"});
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  Http admin(daemon.url(), daemon.admin_token());
  AgentProcess agent(dir / "agents", "ascend-npu-0000", "127.0.0.1");
  const std::string path = getenv("PATH");
  setenv("PATH", ((dir / "bin").string() + ":" + path).c_str(), 1);  // the agent inherits it
  agent.Start(daemon.url(), AgentTokenOf(admin, "ascend-npu-0000"), {"--device-tool", "npu-smi"});
  setenv("PATH", path.c_str(), 1);
  json node;
  for (int i = 0; i < 100; ++i) {
    node = Body(admin.Get("/v1/nodes/ascend-npu-0000"));
    if (node["state"] == "ready" && node["agent"].is_object()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(node["agent"].is_object()) << node.dump() << agent.log();
  ASSERT_EQ(node["agent"]["gpus"].size(), 2u) << node.dump();
  EXPECT_EQ(node["agent"]["gpus"][0]["name"], "910B3");
  EXPECT_EQ(node["agent"]["gpus"][0]["uuid"], "npu0.chip0@0000:C1:00.0");
  EXPECT_DOUBLE_EQ(node["agent"]["gpus"][0]["utilization"].get<double>(), 0.57);
  EXPECT_EQ(node["agent"]["gpus"][0]["memory_used_mib"], 41230);
  EXPECT_FALSE(node["agent"].contains("mismatch")) << node.dump();
  auto metrics = admin.Get("/metrics");
  ASSERT_TRUE(metrics && metrics->status == 200);
  EXPECT_NE(
      metrics->body.find("tessera_device_utilization{node=\"ascend-npu-0000\",device=\"0\"} 0.57"),
      std::string::npos)
      << metrics->body;

  json job = {
      {"name", "on-npu"},
      {"class", "batch"},
      {"tenant", "lab"},
      {"taskGroups",
       {{{"name", "m"}, {"count", 1}, {"cpu", 1}, {"memory", "1Gi"}, {"devices", {{"count", 2}}}}}},
      {"command", "echo \"npus=$ASCEND_RT_VISIBLE_DEVICES cuda=${CUDA_VISIBLE_DEVICES-unset}\""}};
  auto r = admin.Post("/v1/jobs", job.dump());
  ASSERT_TRUE(r && r->status == 201) << (r ? r->body : "");
  json j;
  for (int i = 0; i < 300 && j["state"] != "succeeded"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    j = Body(admin.Get("/v1/jobs/on-npu"));
  }
  ASSERT_EQ(j["state"], "succeeded") << j.dump() << agent.log();
  std::string log = Body(admin.Get("/v1/jobs/on-npu/logs"))["log"].get<std::string>();
  EXPECT_NE(log.find("npus=0,1 cuda=unset"), std::string::npos) << log;
  agent.Stop();
  daemon.Stop();
  std::filesystem::remove_all(dir);
}

// bench/gpu-host, the check docs/operations.md gives for a real GPU host, on a host whose
// nvidia-smi (a script here) lists two GPUs, one 37% busy.
TEST(GpuHostScript, RunsAJobOnTheHostsGpuAndRecordsItsTelemetry) {
  auto dir = FreshDir("gpu-host-script");
  std::filesystem::create_directories(dir / "bin");
  {
    std::ofstream smi(dir / "bin" / "nvidia-smi");
    smi << R"SH(#!/bin/sh
case "$*" in
  *--query-gpu=index,uuid,name,memory.total*)
    echo "0, GPU-0321fd62-2dee-7ed5-4a41-5b88d801a79d, NVIDIA H200, 143771, 1485, 37"
    echo "1, GPU-3d16901f-0e6b-ad9e-d777-4a2d6d8a82c4, NVIDIA H200, 143771, 0, 0" ;;
  *-i*) echo "$2, GPU-probe, NVIDIA H200" ;;
  *) echo "NVIDIA-SMI (a test's stand-in)" ;;
esac
)SH";
  }
  std::filesystem::permissions(dir / "bin" / "nvidia-smi", std::filesystem::perms::owner_all);
  std::string out;
  EXPECT_EQ(testing::RunShell("PATH=" + (dir / "bin").string() + ":$PATH timeout 120 " +
                                  std::string(TESSERA_SOURCE_DIR) + "/bench/gpu-host " +
                                  (dir / "out").string() + " " + TESSERA_BINARY,
                              &out),
            0)
      << out;
  EXPECT_NE(out.find("gpu-host: nvidia-smi lists 2 GPU(s)"), std::string::npos) << out;
  EXPECT_NE(out.find("GPU utilization max 0.37, memory used max 1485 MiB"), std::string::npos)
      << out;
  EXPECT_NE(out.find("gpu-host: the job succeeded"), std::string::npos) << out;
  // The task was given one GPU and asked nvidia-smi about it.
  std::string log = ReadText(dir / "out" / "job.log");
  EXPECT_NE(log.find("CUDA_VISIBLE_DEVICES=0 TESSERA_NODE=host-gpu-0000"), std::string::npos)
      << log;
  EXPECT_NE(log.find("0, GPU-probe, NVIDIA H200"), std::string::npos) << log;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
