// The daemon's side of the local backend: assignments per node with their environment, runs
// that end by their tasks' exits, failures that stop the rest of the gang, silent agents,
// replaced agents and bounded output tails.
#include "backends/local/agent_hub.h"

#include <gtest/gtest.h>

#include <thread>

namespace tessera {
namespace {

RunOrder Gang() {
  RunOrder o;
  o.job = 7;
  o.run = 1;
  o.generation = 42;
  o.job_name = "pretrain";
  o.command = {"/bin/true"};
  o.env = {{"MODEL", "small"}};
  o.tasks = {{0, "n0", {0, 1}, "CUDA_VISIBLE_DEVICES", 1000, "", ""},
             {1, "n1", {2, 3}, "CUDA_VISIBLE_DEVICES", 1000, "", ""}};
  return o;
}

SyncRequest Hello(const std::string& agent, const std::string& address) {
  SyncRequest r;
  r.agent = agent;
  r.address = address;
  return r;
}

TaskReport Exit(TaskKey key, int code) {
  TaskReport t;
  t.key = key;
  t.phase = TaskPhase::kExited;
  t.exit_code = code;
  return t;
}

class AgentHubTest : public ::testing::Test {
 protected:
  AgentHubTest() : hub_(AgentHubOptions{1000, 5000, 8, 2}, "epoch-1") {
    hub_.AddNode("n0");
    hub_.AddNode("n1");
    EXPECT_TRUE(hub_.Report("n0", Hello("a0", "10.0.0.1"), 1000)->joined);
    EXPECT_TRUE(hub_.Report("n1", Hello("a1", "10.0.0.2"), 1000)->joined);
  }
  AgentHub hub_;
};

TEST_F(AgentHubTest, EachNodeGetsItsTasksWithTheirDevicesAndPeers) {
  hub_.Assign(Gang());
  SyncAnswer a0 = hub_.Wait("n0", 0, 0);
  ASSERT_EQ(a0.run.size(), 1u);
  EXPECT_EQ(a0.epoch, "epoch-1");
  EXPECT_EQ(a0.heartbeat_ms, 1000);
  const TaskAssignment& t = a0.run[0];
  EXPECT_EQ(t.key.ToString(), "7.1.0");
  EXPECT_EQ(t.env.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(t.env.at("TESSERA_JOB"), "pretrain");
  EXPECT_EQ(t.env.at("TESSERA_JOB_ID"), "7");
  EXPECT_EQ(t.env.at("TESSERA_TASK_INDEX"), "0");
  EXPECT_EQ(t.env.at("TESSERA_GANG_SIZE"), "2");
  EXPECT_EQ(t.env.at("TESSERA_RESTART_COUNT"), "1");
  EXPECT_EQ(t.env.at("TESSERA_PEERS"), "10.0.0.1,10.0.0.2");
  EXPECT_EQ(t.env.at("TESSERA_MASTER_ADDR"), "10.0.0.1");
  EXPECT_EQ(t.env.at("MODEL"), "small");
  SyncAnswer a1 = hub_.Wait("n1", 0, 0);
  ASSERT_EQ(a1.run.size(), 1u);
  EXPECT_EQ(a1.run[0].env.at("CUDA_VISIBLE_DEVICES"), "2,3");
  EXPECT_EQ(a1.run[0].env.at("TESSERA_TASK_INDEX"), "1");
}

TEST(TaskEnvironment, ACpuTaskSeesNoGpuAndAFractionSaysItsShare) {
  RunOrder o;
  o.job_name = "j";
  o.tasks = {{0, "n0", {}, "", 1000, "", ""},
             {1, "n0", {3}, "ASCEND_RT_VISIBLE_DEVICES", 250, "", ""}};
  auto cpu = TaskEnvironment(o, 0, {"h", "h"});
  EXPECT_EQ(cpu.at("CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(cpu.count("TESSERA_DEVICE_SHARE"), 0u);
  auto npu = TaskEnvironment(o, 1, {"h", "h"});
  EXPECT_EQ(npu.at("ASCEND_RT_VISIBLE_DEVICES"), "3");
  EXPECT_EQ(npu.at("TESSERA_DEVICE_SHARE"), "0.250");
  EXPECT_EQ(npu.count("CUDA_VISIBLE_DEVICES"), 0u);
}

TEST_F(AgentHubTest, ARunSucceedsWhenEveryTaskExitedZero) {
  hub_.Assign(Gang());
  SyncRequest r = Hello("a0", "10.0.0.1");
  r.tasks = {Exit({7, 1, 0}, 0)};
  auto first = hub_.Report("n0", r, 2000);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->ended.empty());
  EXPECT_EQ(hub_.Wait("n0", 0, 0).acked.size(), 1u);
  r = Hello("a1", "10.0.0.2");
  r.tasks = {Exit({7, 1, 1}, 0)};
  auto second = hub_.Report("n1", r, 2000);
  ASSERT_EQ(second->ended.size(), 1u);
  EXPECT_TRUE(second->ended[0].succeeded);
  EXPECT_EQ(second->ended[0].generation, 42u);
  // The same exit again (an agent that did not see the ack) ends nothing twice.
  EXPECT_TRUE(hub_.Report("n1", r, 2100)->ended.empty());
}

TEST_F(AgentHubTest, AnElasticRunGrowsWithoutTouchingItsTasksAndEndsWhenAllOfItsTasksDid) {
  // Three tasks; the run starts with task 0 on n0.
  RunOrder order = Gang();
  order.task_count = 3;
  order.tasks.resize(1);
  hub_.Assign(order);
  SyncAnswer before = hub_.Wait("n0", 0, 0);
  ASSERT_EQ(before.run.size(), 1u);
  // Task 0 is done before the run grows: the run has not ended, three tasks are the job's.
  SyncRequest r = Hello("a0", "10.0.0.1");
  r.tasks = {Exit({7, 1, 0}, 0)};
  EXPECT_TRUE(hub_.Report("n0", r, 2000)->ended.empty());
  // It grows by tasks 1 (n1) and 2 (n0), a new generation; task 0 is not assigned again.
  order = Gang();
  order.task_count = 3;
  order.generation = 43;
  order.tasks.push_back({2, "n0", {4}, "CUDA_VISIBLE_DEVICES", 1000, "", ""});
  hub_.Resize(order, 0);
  SyncAnswer n0 = hub_.Wait("n0", 0, 0);
  ASSERT_EQ(n0.run.size(), 1u);
  EXPECT_EQ(n0.run[0].key.ToString(), "7.1.2");
  EXPECT_EQ(n0.run[0].env.at("CUDA_VISIBLE_DEVICES"), "4");
  SyncAnswer n1 = hub_.Wait("n1", 0, 0);
  ASSERT_EQ(n1.run.size(), 1u);
  EXPECT_EQ(n1.run[0].key.ToString(), "7.1.1");
  r.tasks = {Exit({7, 1, 2}, 0)};
  EXPECT_TRUE(hub_.Report("n0", r, 3000)->ended.empty());
  r = Hello("a1", "10.0.0.2");
  r.tasks = {Exit({7, 1, 1}, 0)};
  auto last = hub_.Report("n1", r, 3000);
  ASSERT_EQ(last->ended.size(), 1u);
  EXPECT_TRUE(last->ended[0].succeeded);
  EXPECT_EQ(last->ended[0].generation, 43u);
  // A growth of a run that ended (or was stopped) meanwhile assigns nothing.
  hub_.Resize(order, 0);
  EXPECT_TRUE(hub_.Wait("n1", 0, 0).run.empty());
}

TEST_F(AgentHubTest, AShrunkRunStopsTheTasksItGaveUpWithTheirGraceAndGoesOn) {
  RunOrder order = Gang();
  order.task_count = 2;
  hub_.Assign(order);
  // Shrunk to task 0: task 1 on n1 is told to stop with the grace; task 0 goes on.
  order.tasks.resize(1);
  order.generation = 43;
  hub_.Resize(order, 30000);
  SyncAnswer n1 = hub_.Wait("n1", 0, 0);
  EXPECT_TRUE(n1.run.empty());
  ASSERT_EQ(n1.stop.size(), 1u);
  EXPECT_EQ(n1.stop[0].key.ToString(), "7.1.1");
  EXPECT_EQ(n1.stop[0].grace_ms, 30000);
  EXPECT_EQ(hub_.Wait("n0", 0, 0).run.size(), 1u);
  // The stopped task's exit ends nothing; task 0's exit does not end the run either: the job
  // has two tasks and one of them has not run to its end.
  SyncRequest r = Hello("a1", "10.0.0.2");
  r.tasks = {Exit({7, 1, 1}, 143)};
  EXPECT_TRUE(hub_.Report("n1", r, 2000)->ended.empty());
  r = Hello("a0", "10.0.0.1");
  r.tasks = {Exit({7, 1, 0}, 0)};
  EXPECT_TRUE(hub_.Report("n0", r, 2000)->ended.empty());
}

TEST_F(AgentHubTest, AFailedTaskFailsTheRunAndStopsTheOthers) {
  hub_.Assign(Gang());
  SyncRequest r = Hello("a1", "10.0.0.2");
  r.tasks = {Exit({7, 1, 1}, 3)};
  auto out = hub_.Report("n1", r, 2000);
  ASSERT_EQ(out->ended.size(), 1u);
  EXPECT_FALSE(out->ended[0].succeeded);
  EXPECT_EQ(out->ended[0].detail, "task 1 on n1 exited with 3");
  SyncAnswer a0 = hub_.Wait("n0", 0, 0);
  EXPECT_TRUE(a0.run.empty());
  ASSERT_EQ(a0.stop.size(), 1u);
  EXPECT_EQ(a0.stop[0].key.ToString(), "7.1.0");
}

TEST_F(AgentHubTest, AStoppedRunIsToldToStopWithItsGrace) {
  hub_.Assign(Gang());
  hub_.Stop(7, 1, 30000);
  SyncAnswer a1 = hub_.Wait("n1", 0, 0);
  EXPECT_TRUE(a1.run.empty());
  ASSERT_EQ(a1.stop.size(), 1u);
  EXPECT_EQ(a1.stop[0].grace_ms, 30000);
  // Its exit is acknowledged but ends nothing: the engine stopped it.
  SyncRequest r = Hello("a1", "10.0.0.2");
  r.tasks = {Exit({7, 1, 1}, 143)};
  EXPECT_TRUE(hub_.Report("n1", r, 2000)->ended.empty());
  EXPECT_TRUE(hub_.Wait("n1", 0, 0).stop.empty());
}

TEST_F(AgentHubTest, ASilentAgentsNodeIsLostOnceAfterTheTimeout) {
  hub_.Assign(Gang());
  EXPECT_TRUE(hub_.Expired(6000).empty());  // seen at 1000, lost after 5000
  ASSERT_TRUE(hub_.Report("n1", Hello("a1", "10.0.0.2"), 5500).ok());
  auto lost = hub_.Expired(6001);
  ASSERT_EQ(lost, std::vector<std::string>{"n0"});
  EXPECT_FALSE(hub_.Live("n0"));
  EXPECT_TRUE(hub_.Expired(20000) == std::vector<std::string>{"n1"});
  EXPECT_TRUE(hub_.Expired(30000).empty());
  // Its agent comes back: the node joins again.
  EXPECT_TRUE(hub_.Report("n0", Hello("a0", "10.0.0.1"), 31000)->joined);
}

TEST_F(AgentHubTest, ANewAgentProcessOnANodeWithTasksReplacesTheOld) {
  hub_.Assign(Gang());
  auto out = hub_.Report("n0", Hello("a0-restarted", "10.0.0.1"), 2000);
  EXPECT_TRUE(out->replaced);
  EXPECT_FALSE(out->joined);
  EXPECT_FALSE(hub_.Report("n1", Hello("a1", "10.0.0.2"), 2000)->replaced);
}

TEST_F(AgentHubTest, UnknownNodesAreRefused) {
  auto out = hub_.Report("n9", Hello("a9", ""), 1000);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kNotFound);
}

TEST_F(AgentHubTest, OutputTailsAreBoundedInSizeAndCount) {
  SyncRequest r = Hello("a0", "");
  TaskReport t;
  t.key = {1, 0, 0};
  t.log = "0123456789abcdef";
  r.tasks = {t};
  ASSERT_TRUE(hub_.Report("n0", r, 1000).ok());
  EXPECT_EQ(*hub_.Log({1, 0, 0}), "89abcdef");  // the last 8 bytes
  t.key = {2, 0, 0};
  t.log = "x";
  r.tasks = {t};
  ASSERT_TRUE(hub_.Report("n0", r, 1000).ok());
  t.key = {3, 0, 0};
  r.tasks = {t};
  ASSERT_TRUE(hub_.Report("n0", r, 1000).ok());
  EXPECT_FALSE(hub_.Log({1, 0, 0}).has_value());  // two tasks kept: the oldest went
  EXPECT_EQ(*hub_.Log({3, 0, 0}), "x");
}

TEST_F(AgentHubTest, AWaitEndsWhenTheAssignmentChanges) {
  uint64_t known = hub_.Wait("n0", 0, 0).version;
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    hub_.Assign(Gang());
  });
  SyncAnswer a = hub_.Wait("n0", known, 1000);
  later.join();
  EXPECT_NE(a.version, known);
  EXPECT_EQ(a.run.size(), 1u);
}

}  // namespace
}  // namespace tessera
