// The Slurm backend end to end: two real Slurm clusters (east and west, two regions, two
// nodes of two fake GPUs each) under a real daemon. A gang runs as one Slurm allocation with
// its devices; a stopped controller's cluster takes no new work until it returns; a node set
// DOWN loses its run, which is requeued and completes elsewhere; a preempted batch job gets
// SIGTERM first and completes later; a daemon killed while Slurm runs its jobs adopts them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "testutil/daemon_process.h"
#include "testutil/postgres_server.h"
#include "testutil/run_tessera.h"
#include "testutil/serve_client.h"
#include "testutil/slurm_cluster.h"

namespace tessera {
namespace {

using json = nlohmann::json;
using testing::Body;
using testing::DaemonProcess;
using testing::FreshDir;
using testing::Http;
using testing::RunTessera;
using testing::SlurmCluster;

// Cluster east of `slurm`'s two nodes: slow K80s on the first, fast V100s on the second,
// under the hetero policy.
std::string HeteroFleet(const SlurmCluster& slurm) {
  return "deviceModels:\n"
         "  - {name: K80, kind: gpu, vendor: nvidia, memory: 12Gi}\n"
         "  - {name: V100, kind: gpu, vendor: nvidia, memory: 32Gi}\n"
         "regions:\n  - name: east\n"
         "clusters:\n  - name: east\n    region: east\n    backend: slurm\n"
         "    backendOptions: {slurmConf: " +
         slurm.conf() + ", workDir: " + (slurm.dir() / "work").string() +
         "}\n"
         "    nodes:\n"
         "      - {name: east-gpu-0000, cpu: 2, memory: 1000Mi, devices: {model: K80, count: 2}}\n"
         "      - {name: east-gpu-0001, cpu: 2, memory: 1000Mi, devices: {model: V100, count: 2}}\n"
         "tenants:\n  - name: lab\n"
         "scheduler: {ordering: hetero}\n";
}

class SlurmTest : public ::testing::Test {
 protected:
  // `clusters`: how many of east and west (1 = east only). `hetero`: east only, its first node
  // of slow K80s and its second of fast V100s, under the hetero policy. `store`: the daemon's
  // --store (default: SQLite in its folder).
  void Start(int clusters, bool hetero = false, const std::string& store = "") {
    dir_ = FreshDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    const int base = testing::SlurmPortBase();
    const char* names[] = {"east", "west"};
    for (int i = 0; i < clusters; ++i) {
      std::string n = names[i];
      // Slurm's sockets live under its spool directory: a short path (108 bytes at most).
      slurm_.push_back(std::make_unique<SlurmCluster>(
          "/tmp/tsl" + std::to_string(getpid()) + n, n, base + 10 * i,
          std::vector<std::string>{n + "-gpu-0000", n + "-gpu-0001"}, 2));
      std::string error;
      ASSERT_TRUE(slurm_.back()->Up(&error)) << error;
    }
    std::filesystem::create_directories(dir_ / "config");
    std::ofstream f(dir_ / "config" / "fleet.yaml");
    if (hetero) {
      f << HeteroFleet(*slurm_[0]);
    } else {
      f << "deviceModels:\n"
           "  - {name: L4, kind: gpu, vendor: nvidia, memory: 24Gi}\n"
           "regions:\n";
      for (int i = 0; i < clusters; ++i)
        f << "  - name: " << names[i] << "\n";
      f << "clusters:\n";
      for (int i = 0; i < clusters; ++i) {
        f << "  - name: " << names[i] << "\n    region: " << names[i]
          << "\n    backend: slurm\n    backendOptions: {slurmConf: " << slurm_[i]->conf()
          << ", workDir: " << (slurm_[i]->dir() / "work").string() << "}\n"
          << "    nodeGroups:\n"
             "      - {name: gpu, count: 2, cpu: 2, memory: 1000Mi, devices: {model: L4, count: "
             "2}}\n";
      }
      // Preempted at once (the tests watch the signals, not the victims' age).
      f << "tenants:\n  - name: lab\n"
           "priorityClasses:\n"
           "  - {name: high, value: 800}\n"
           "  - {name: normal, value: 500}\n"
           "  - {name: low, value: 200, preemptible: true, minRunTime: 0s}\n"
           "policies:\n"
           "  - name: high-preempts-batch\n"
           "    kind: preemption\n"
           "    match: {minPriority: high}\n"
           "    victimClasses: [batch]\n"
           "    gracePeriod: 2s\n";
    }
    f.close();
    daemon_ = std::make_unique<DaemonProcess>(dir_ / "daemon", (dir_ / "config").string());
    if (!store.empty()) {
      daemon_->set_store(store);
      daemon_->set_extra_args({"--lease", "2s"});
    }
    ASSERT_TRUE(daemon_->Start()) << daemon_->log();
    admin_ = std::make_unique<Http>(daemon_->url(), daemon_->admin_token());
  }
  void TearDown() override {
    if (daemon_) daemon_->Stop();
    for (auto& c : slurm_) {
      auto d = c->dir();
      c.reset();
      if (!std::getenv("TESSERA_KEEP")) std::filesystem::remove_all(d);
    }
    slurm_.clear();
    if (!std::getenv("TESSERA_KEEP")) std::filesystem::remove_all(dir_);
  }

  int64_t Submit(const json& job) {
    auto r = admin_->Post("/v1/jobs", job.dump());
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    return r && r->status == 201 ? Body(r)["id"].get<int64_t>() : 0;
  }
  template <typename Pred>
  json WaitFor(const std::string& path, Pred done, int seconds = 60) {
    json j;
    for (int i = 0; i < seconds * 10; ++i) {
      j = Body(admin_->Get(path));
      if (j.is_object() && done(j)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return j;
  }
  json WaitForState(int64_t id, const std::string& state) {
    return WaitFor("/v1/jobs/" + std::to_string(id),
                   [&](const json& j) { return j["state"] == state; });
  }
  std::string LogOf(int64_t id, int task, int run = -1) {
    std::string path = "/v1/jobs/" + std::to_string(id) + "/logs?task=" + std::to_string(task);
    if (run >= 0) path += "&run=" + std::to_string(run);
    return Body(admin_->Get(path)).value("log", "");
  }

  std::filesystem::path dir_;
  std::vector<std::unique_ptr<SlurmCluster>> slurm_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<Http> admin_;
};

json Job(const std::string& name, const std::string& job_class, int tasks, int gpus,
         const std::string& command) {
  return {{"name", name},
          {"class", job_class},
          {"tenant", "lab"},
          {"taskGroups",
           {{{"name", "w"},
             {"count", tasks},
             {"cpu", 1},
             {"memory", "100Mi"},
             {"devices", {{"count", gpus}, {"models", {"L4"}}}}}}},
          {"command", command}};
}

const char* kPrint =
    "echo task=$TESSERA_TASK_INDEX of=$TESSERA_GANG_SIZE node=$TESSERA_NODE "
    "cuda=$CUDA_VISIBLE_DEVICES restart=$TESSERA_RESTART_COUNT slurm=$SLURM_JOB_ID";

TEST_F(SlurmTest, AGangRunsAsOneSlurmAllocationWithItsDevices) {
  Start(1);
  int64_t id = Submit(Job("gang", "training", 2, 2, std::string(kPrint) + "; sleep 1"));
  json done = WaitForState(id, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump() << daemon_->log();
  std::string t0 = LogOf(id, 0), t1 = LogOf(id, 1);
  EXPECT_NE(t0.find("task=0 of=2 node=east-gpu-000"), std::string::npos) << t0;
  EXPECT_NE(t1.find("task=1 of=2 node=east-gpu-000"), std::string::npos) << t1;
  EXPECT_NE(t0.find("cuda=0,1"), std::string::npos) << t0;
  EXPECT_NE(t1.find("cuda=0,1"), std::string::npos) << t1;
  // One Slurm job for the gang: both tasks name it.
  std::string slurm_id = t0.substr(t0.find("slurm=") + 6);
  EXPECT_NE(t1.find("slurm=" + slurm_id.substr(0, slurm_id.find('\n'))), std::string::npos);
  // The node view has what the controller says of the node.
  json node = Body(admin_->Get("/v1/nodes/east-gpu-0000"));
  EXPECT_EQ(node["slurm"]["gpus"], 2) << node.dump();
  EXPECT_FALSE(node["slurm"].contains("mismatch")) << node.dump();
  std::string jobs = slurm_[0]->Run("squeue --states=all -h -o %j");
  EXPECT_EQ(jobs, "tessera-" + std::to_string(id) + "-0\n");
  // A job that fails in Slurm fails in Tessera, saying how.
  int64_t bad = Submit(Job("bad", "batch", 1, 1, "exit 3"));
  json failed = WaitForState(bad, "failed");
  ASSERT_EQ(failed["state"], "failed") << failed.dump();
  EXPECT_NE(failed["detail"].get<std::string>().find("exit 3"), std::string::npos) << failed.dump();
}

TEST_F(SlurmTest, AStoppedControllersClusterTakesNoNewWorkUntilItReturns) {
  Start(2);
  slurm_[0]->StopController();
  json cordoned =
      WaitFor("/v1/nodes/east-gpu-0000", [](const json& n) { return n["state"] == "cordoned"; });
  ASSERT_EQ(cordoned["state"], "cordoned") << cordoned.dump();
  auto metrics = Http(daemon_->url()).Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("tessera_cluster_reachable{cluster=\"east\"} 0"), std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("tessera_cluster_reachable{cluster=\"west\"} 1"), std::string::npos);
  // New work goes to west while east is out of touch.
  for (int i = 0; i < 2; ++i) {
    int64_t id = Submit(Job("w" + std::to_string(i), "batch", 1, 2, kPrint));
    json done = WaitForState(id, "succeeded");
    ASSERT_EQ(done["state"], "succeeded") << done.dump();
    EXPECT_NE(LogOf(id, 0).find("node=west-gpu-000"), std::string::npos) << LogOf(id, 0);
  }
  std::string error;
  ASSERT_TRUE(slurm_[0]->StartController(&error)) << error;
  json back =
      WaitFor("/v1/nodes/east-gpu-0000", [](const json& n) { return n["state"] == "ready"; });
  EXPECT_EQ(back["state"], "ready") << back.dump();
}

TEST_F(SlurmTest, ANodeSetDownLosesItsRunWhichCompletesElsewhere) {
  Start(1);
  int64_t id = Submit(Job("moved", "batch", 1, 2, std::string(kPrint) + "; sleep 4"));
  json running = WaitFor("/v1/jobs/" + std::to_string(id), [](const json& j) {
    return j["state"] == "running" && !j["placement"].empty();
  });
  ASSERT_EQ(running["state"], "running") << running.dump();
  std::string node = running["placement"][0]["node"];
  slurm_[0]->Run("scontrol update nodename=" + node + " state=down reason=tessera-test");
  json done = WaitForState(id, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump();
  EXPECT_EQ(done["restarts"], 1);
  std::string log = LogOf(id, 0);
  EXPECT_NE(log.find("restart=1"), std::string::npos) << log;
  EXPECT_EQ(log.find("node=" + node), std::string::npos) << log;
  json why = Body(admin_->Get("/v1/jobs/" + std::to_string(id) + "/explain"));
  EXPECT_NE(why["decisions"].dump().find("node-lost:" + node), std::string::npos) << why.dump();
}

TEST_F(SlurmTest, APreemptedBatchJobGetsTermFirstAndCompletesLater) {
  Start(1);
  json victim = Job("victim", "batch", 2, 2,
                    "trap 'echo got-term; exit 0' TERM; echo up restart=$TESSERA_RESTART_COUNT; "
                    "if [ $TESSERA_RESTART_COUNT = 0 ]; then while true; do sleep 0.1; done; fi");
  victim["priority"] = "low";
  int64_t v = Submit(victim);
  std::string up;
  for (int i = 0; i < 300 && up.find("up") == std::string::npos; ++i) {
    up = LogOf(v, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(up.find("up restart=0"), std::string::npos) << up << daemon_->log();
  json urgent = Job("urgent", "training", 2, 2, "echo urgent; sleep 1");
  urgent["priority"] = "high";
  int64_t u = Submit(urgent);
  ASSERT_EQ(WaitForState(u, "succeeded")["state"], "succeeded");
  json done = WaitForState(v, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump();
  EXPECT_EQ(done["restarts"], 1);
  std::string first = LogOf(v, 0, 0);
  EXPECT_NE(first.find("got-term"), std::string::npos) << first;
  EXPECT_NE(LogOf(v, 0, 1).find("up restart=1"), std::string::npos) << LogOf(v, 0, 1);
  json why = Body(admin_->Get("/v1/jobs/" + std::to_string(v) + "/explain"));
  EXPECT_NE(why["decisions"].dump().find("preempt"), std::string::npos) << why.dump();
}

// An elastic gang on Slurm: two 2-GPU tasks, one node free. Each task is a Slurm job of its
// own: the first starts at once, the second joins when the blocker ends, and the run succeeds
// once both completed.
TEST_F(SlurmTest, AnElasticGangGrowsByASlurmJobPerTaskAndSucceedsWhenEveryTaskDid) {
  Start(1);
  const int64_t b = Submit(Job("blocker", "batch", 1, 2, "sleep 3"));
  ASSERT_EQ(WaitForState(b, "running")["state"], "running");
  json array = Job("array", "batch", 2, 2, std::string(kPrint) + "; sleep 1");
  array["gang"] = {{"minMembers", 1}};
  const int64_t a = Submit(array);
  json done = WaitForState(a, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump() << daemon_->log();
  EXPECT_EQ(done["restarts"], 0);
  std::string t0 = LogOf(a, 0), t1 = LogOf(a, 1);
  EXPECT_NE(t0.find("task=0"), std::string::npos) << t0;
  EXPECT_NE(t1.find("task=1"), std::string::npos) << t1;
  auto slurm_id = [](const std::string& log) {
    const size_t at = log.find("slurm=");
    return at == std::string::npos ? std::string() : log.substr(at, log.find('\n', at) - at);
  };
  EXPECT_NE(slurm_id(t0), slurm_id(t1)) << t0 << t1;
  std::vector<std::string> kinds;
  json why = Body(admin_->Get("/v1/jobs/" + std::to_string(a) + "/explain"));
  for (const json& d : why["decisions"])
    kinds.push_back(d["kind"]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"start", "grow", "finish"})) << why.dump();
}

// A preemptor shrinks an elastic gang on Slurm: its second task's Slurm job gets TERM within
// the grace, the first goes on, and the second joins again (a new Slurm job) once the
// preemptor is done; the run succeeds without a restart.
TEST_F(SlurmTest, APreemptorShrinksAnElasticGangWhoseTaskComesBackAfterIt) {
  Start(1);
  json array = Job("array", "batch", 2, 2,
                   "if [ $TESSERA_TASK_INDEX = 0 ]; then sleep 8; echo zero-done; exit 0; fi; "
                   "if [ -f \"$TESSERA_CHECKPOINT_DIR/seen\" ]; then echo again; exit 0; fi; "
                   "touch \"$TESSERA_CHECKPOINT_DIR/seen\"; trap 'echo got-term; exit 0' TERM; "
                   "echo up; while true; do sleep 0.1; done");
  array["priority"] = "low";
  array["gang"] = {{"minMembers", 1}};
  const int64_t a = Submit(array);
  std::string up;
  for (int i = 0; i < 300 && up.find("up") == std::string::npos; ++i) {
    up = LogOf(a, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(up.find("up"), std::string::npos) << up << daemon_->log();
  json urgent = Job("urgent", "training", 1, 2, "echo urgent; sleep 1");
  urgent["priority"] = "high";
  const int64_t u = Submit(urgent);
  ASSERT_EQ(WaitForState(u, "succeeded")["state"], "succeeded");
  json done = WaitForState(a, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump() << daemon_->log();
  EXPECT_EQ(done["restarts"], 0);
  const std::string t1 = LogOf(a, 1);
  EXPECT_NE(t1.find("got-term"), std::string::npos) << t1;
  EXPECT_NE(t1.find("again"), std::string::npos) << t1;
  EXPECT_NE(LogOf(a, 0).find("zero-done"), std::string::npos) << LogOf(a, 0);
  std::vector<std::string> kinds;
  json why = Body(admin_->Get("/v1/jobs/" + std::to_string(a) + "/explain"));
  for (const json& d : why["decisions"])
    kinds.push_back(d["kind"]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"start", "shrink", "grow", "finish"})) << why.dump();
}

// hetero's move to a faster model through Slurm: the job's allocation on the slow node gets
// TERM (scancel) and a new one on the fast node, once the fast one frees.
TEST_F(SlurmTest, HeteroMovesARunningJobToTheFasterModelOnceItFrees) {
  Start(1, /*hetero=*/true);
  json blocker = Job("blocker", "batch", 1, 2, "sleep 3");
  blocker["taskGroups"][0]["devices"]["models"] = {"V100"};
  const int64_t b = Submit(blocker);
  ASSERT_EQ(WaitForState(b, "running")["state"], "running");
  json mover = Job("mover", "batch", 1, 2,
                   "trap 'echo got-term; exit 0' TERM; echo up node=$TESSERA_NODE "
                   "restart=$TESSERA_RESTART_COUNT; while true; do sleep 0.1; done");
  mover["taskGroups"][0]["devices"]["models"] = {{{"model", "V100"}, {"speed", 1}},
                                                 {{"model", "K80"}, {"speed", 0.25}}};
  mover["preemptible"] = true;
  mover["runtime"] = "10h";
  const int64_t m = Submit(mover);
  json first = WaitFor("/v1/jobs/" + std::to_string(m), [](const json& j) {
    return j["state"] == "running" && !j["placement"].empty();
  });
  ASSERT_EQ(first["state"], "running") << first.dump();
  EXPECT_EQ(first["placement"][0]["node"], "east-gpu-0000") << first.dump();
  json moved = WaitFor("/v1/jobs/" + std::to_string(m), [](const json& j) {
    return j["restarts"] == 1 && j["state"] == "running" && !j["placement"].empty() &&
           j["placement"][0]["node"] == "east-gpu-0001";
  });
  ASSERT_EQ(moved["restarts"], 1) << moved.dump() << daemon_->log();
  std::string second;
  for (int i = 0; i < 300 && second.find("up") == std::string::npos; ++i) {
    second = LogOf(m, 0, 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(second.find("up node=east-gpu-0001 restart=1"), std::string::npos) << second;
  std::string first_log;
  for (int i = 0; i < 300 && first_log.find("got-term") == std::string::npos; ++i) {
    first_log = LogOf(m, 0, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(first_log.find("got-term"), std::string::npos) << first_log;
  json why = Body(admin_->Get("/v1/jobs/" + std::to_string(m) + "/explain"));
  EXPECT_NE(why["decisions"].dump().find(R"("kind":"migrate")"), std::string::npos) << why.dump();
  EXPECT_NE(why["decisions"].dump().find("faster-model:V100"), std::string::npos) << why.dump();
}

TEST_F(SlurmTest, ADaemonKilledWhileSlurmRunsItsJobsAdoptsThem) {
  Start(1);
  int64_t id = Submit(Job("steady", "training", 2, 2, std::string(kPrint) + "; sleep 3"));
  json running = WaitFor("/v1/jobs/" + std::to_string(id),
                         [](const json& j) { return j["state"] == "running"; });
  ASSERT_EQ(running["state"], "running");
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  daemon_->Kill9();
  ASSERT_TRUE(daemon_->Start()) << daemon_->log();
  admin_ = std::make_unique<Http>(daemon_->url(), daemon_->admin_token());
  json done = WaitForState(id, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump() << daemon_->log();
  EXPECT_EQ(done["restarts"], 0);
  // One Slurm job ran the run: it was adopted, not submitted again.
  EXPECT_EQ(slurm_[0]->Run("squeue --states=all -h -o %j"),
            "tessera-" + std::to_string(id) + "-0\n");
}

// Two daemons on one PostgreSQL store (docs/operations.md, HA): the leader killed while Slurm
// runs its gang; the standby takes over, adopts the Slurm job and submits nothing again.
TEST_F(SlurmTest, AStandbyPromotedWhileSlurmRunsTheLeadersJobAdoptsIt) {
  testing::PostgresServer pg(FreshDir("slurm-ha-pg"), /*durable=*/true);  // removed with it
  std::string error;
  ASSERT_TRUE(pg.Up(&error)) << error;
  Start(1, false, pg.url());
  DaemonProcess standby(dir_ / "standby", (dir_ / "config").string(), daemon_->admin_token());
  standby.set_store(pg.url());
  standby.set_extra_args({"--lease", "2s"});
  standby.Launch();
  int64_t id = Submit(Job("steady", "training", 2, 2, std::string(kPrint) + "; sleep 4"));
  json running = WaitFor("/v1/jobs/" + std::to_string(id),
                         [](const json& j) { return j["state"] == "running"; });
  ASSERT_EQ(running["state"], "running");
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  daemon_->Kill9();
  ASSERT_TRUE(standby.WaitReady(30)) << standby.log();
  admin_ = std::make_unique<Http>(standby.url(), standby.admin_token());
  json done = WaitForState(id, "succeeded");
  ASSERT_EQ(done["state"], "succeeded") << done.dump() << standby.log();
  EXPECT_EQ(done["restarts"], 0);
  EXPECT_EQ(slurm_[0]->Run("squeue --states=all -h -o %j"),
            "tessera-" + std::to_string(id) + "-0\n");
  EXPECT_NE(standby.log().find("\"msg\":\"leading\""), std::string::npos) << standby.log();
  standby.Stop();
}

// scripts/multi-cluster, as the README and docs/operations.md give it: two Slurm clusters and
// a local cluster of agents under one daemon, a job of each class and a service.
TEST(MultiCluster, TheScriptRunsAJobOfEachClassAcrossSlurmAndAgents) {
  const std::string dir = "/tmp/tmc" + std::to_string(getpid());
  std::string out;
  EXPECT_EQ(testing::RunShell("TESSERA=" + std::string(TESSERA_BINARY) + " TESSERA_PORT_BASE=" +
                                  std::to_string(testing::SlurmPortBase()) + " timeout 300 " +
                                  std::string(TESSERA_SOURCE_DIR) + "/scripts/multi-cluster " + dir,
                              &out),
            0)
      << out;
  EXPECT_NE(out.find("multi-cluster: every job succeeded"), std::string::npos) << out;
  // Each cluster's nodes were in service, and the gang's tasks said where they ran.
  for (const char* node : {"east-gpu-0000", "west-gpu-0000", "lab-gpu-0000"})
    EXPECT_NE(out.find(node), std::string::npos) << out;
  // Each ran where the policies say: training and fine-tuning on Slurm (east or west), batch
  // and eval on the agents' lab nodes.
  for (const char* job :
       {"pretrain task 0/2 on ", "pretrain task 1/2 on ", "finetune task 0/1 on "}) {
    size_t at = out.find(job);
    ASSERT_NE(at, std::string::npos) << job << "\n" << out;
    std::string node = out.substr(at + std::string(job).size(), 4);
    EXPECT_TRUE(node == "east" || node == "west") << job << node << "\n" << out;
  }
  for (const char* job : {"nightly-batch task 0/2 on lab-gpu-", "eval-suite task 0/1 on lab-gpu-"})
    EXPECT_NE(out.find(job), std::string::npos) << job << "\n" << out;
  EXPECT_NE(out.find("2/2 (2-2)"), std::string::npos) << out;  // the service's replicas run
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
