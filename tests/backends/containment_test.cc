// A task's processes are held together, for real, both ways the agent can: a cgroup v2 of its
// own (CI runs as root on a host with cgroup v2) and process groups with the agent as child
// subreaper. A task that double-forks a setsid'd sleeper used to leave it running after a
// cancel, after its own exit, and after its agent died; now none of it is left.
#include "backends/local/containment.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "backends/local/supervisor.h"
#include "backends/supervisor_testutil.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::OptionsIn;

TimeMs NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The shell of a task that double-forks a sleeper into a session of its own, writes its pid to
// sleeper.pid (in the task's directory), then runs `then`.
std::string Escaping(const std::string& then) {
  return "(setsid sh -c 'sleep 600 & echo $! > sleeper.pid; wait' &); " + then;
}

class Contained : public ::testing::TestWithParam<ContainmentKind> {
 protected:
  Contained()
      : dir_(fs::temp_directory_path() /
             ("tessera-contain-" + std::to_string(getpid()) + "-" + std::to_string(++count_))) {
    fs::create_directories(dir_);
  }
  ~Contained() override { fs::remove_all(dir_); }

  std::unique_ptr<Containment> Make() {
    ContainmentOptions o;
    o.kind = GetParam();
    o.identity = AgentIdentity("node", dir_.string());
    auto c = Containment::Make(o);
    EXPECT_TRUE(c.ok()) << c.status().ToString()
                        << " (the cgroup way needs a writable cgroup v2: CI runs as root)";
    if (!c.ok()) return nullptr;
    EXPECT_EQ((*c)->cgroups(), GetParam() == ContainmentKind::kCgroup) << (*c)->description();
    return std::move(*c);
  }

  TaskAssignment Task(TaskKey key, const std::string& shell) {
    TaskAssignment a;
    a.key = key;
    a.job_name = "j";
    a.command = {"/bin/sh", "-c", shell};
    return a;
  }

  // The sleeper's pid, once the task wrote it (0 after 5 s).
  pid_t SleeperOf(TaskKey key) {
    fs::path file = dir_ / "tasks" / key.ToString() / "sleeper.pid";
    for (int i = 0; i < 500; ++i) {
      std::ifstream in(file);
      pid_t pid = 0;
      if (in >> pid && pid > 0) return pid;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }

  // Polls the supervisor until `done` or 5 s.
  template <typename Done>
  bool PollUntil(Supervisor& sup, Done done) {
    for (int i = 0; i < 500; ++i) {
      sup.Poll(NowMs());
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return done();
  }

  static inline int count_ = 0;
  fs::path dir_;
};

TEST_P(Contained, ACancelledTaskLeavesNoProcessNotEvenASetsidOne) {
  auto containment = Make();
  ASSERT_TRUE(containment);
  const std::string cgroup = containment->CgroupOf(TaskKey{1, 0, 0}.ToString());
  Supervisor sup(OptionsIn(dir_), std::move(containment));
  TaskKey key{1, 0, 0};
  sup.Start(Task(key, Escaping("sleep 600")), NowMs());
  pid_t sleeper = SleeperOf(key);
  ASSERT_GT(sleeper, 0);
  ASSERT_TRUE(ProcessAlive(sleeper));
  if (!cgroup.empty()) {
    EXPECT_TRUE(fs::exists(cgroup + "/cgroup.procs")) << cgroup;
  }
  sup.Stop(key, 100, NowMs());
  EXPECT_TRUE(PollUntil(sup, [&] { return sup.Running().empty() && !ProcessAlive(sleeper); }))
      << "the sleeper " << sleeper << " outlived its cancelled task";
  // The task's cgroup goes once empty.
  if (!cgroup.empty()) {
    EXPECT_TRUE(PollUntil(sup, [&] { return !fs::exists(cgroup); })) << cgroup;
  }
}

TEST_P(Contained, WhatATaskLeavesBehindWhenItExitsIsKilled) {
  auto containment = Make();
  ASSERT_TRUE(containment);
  Supervisor sup(OptionsIn(dir_), std::move(containment));
  TaskKey key{2, 0, 0};
  sup.Start(Task(key, Escaping("sleep 0.3; exit 0")), NowMs());
  pid_t sleeper = SleeperOf(key);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(PollUntil(sup, [&] { return sup.Running().empty() && !ProcessAlive(sleeper); }))
      << "the sleeper " << sleeper << " outlived its task";
  auto reports = sup.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].exit_code, 0);
}

TEST_P(Contained, ARestartedAgentKillsWhatItsKilledPredecessorLeft) {
  // The predecessor: a process that starts the task and dies at once (as kill -9 would leave
  // it: no cleanup). Its task's own process dies with it (the death signal); the sleeper does
  // not.
  fs::path pid_file = dir_ / "tasks" / TaskKey{3, 0, 0}.ToString() / "sleeper.pid";
  pid_t agent = fork();
  if (agent == 0) {
    ContainmentOptions o;
    o.kind = GetParam();
    o.identity = AgentIdentity("node", dir_.string());
    auto c = Containment::Make(o);
    if (!c.ok()) _exit(3);
    auto* sup = new Supervisor(OptionsIn(dir_), std::move(*c));
    sup->Start(Task({3, 0, 0}, Escaping("sleep 600")), NowMs());
    for (int i = 0; i < 500 && !fs::exists(pid_file); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the pid written whole
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(agent, &status, 0), agent);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the first agent failed";
  pid_t sleeper = SleeperOf({3, 0, 0});
  ASSERT_GT(sleeper, 0);
  ASSERT_TRUE(ProcessAlive(sleeper)) << "the sleeper died with its agent: nothing to test";
  // The successor, same identity: it kills the leftovers before it does anything else.
  auto containment = Make();
  ASSERT_TRUE(containment);
  EXPECT_GE(containment->KillLeftovers(), 1);
  for (int i = 0; i < 200 && ProcessAlive(sleeper); ++i) {
    containment->ReapOrphans({});
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(ProcessAlive(sleeper))
      << "the sleeper " << sleeper << " outlived its agent's restart";
  if (containment->cgroups()) {
    EXPECT_FALSE(fs::exists(containment->CgroupOf(TaskKey{3, 0, 0}.ToString())));
  }
}

INSTANTIATE_TEST_SUITE_P(Containment, Contained,
                         ::testing::Values(ContainmentKind::kCgroup,
                                           ContainmentKind::kProcessGroup),
                         [](const ::testing::TestParamInfo<ContainmentKind>& kind) {
                           return kind.param == ContainmentKind::kCgroup ? "Cgroup"
                                                                         : "ProcessGroup";
                         });

TEST(ContainmentFlags, AnUnknownKindIsRefusedNamingTheFlag) {
  auto k = ParseContainmentKind("jail");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("--containment"), std::string::npos);
  EXPECT_EQ(*ParseContainmentKind("process-group"), ContainmentKind::kProcessGroup);
}

TEST(ContainmentFlags, AnAgentsIdentityIsItsNodeAndWorkDirectory) {
  EXPECT_EQ(AgentIdentity("n1", "/var/lib/a"), AgentIdentity("n1", "/var/lib/a/"));
  EXPECT_NE(AgentIdentity("n1", "/var/lib/a"), AgentIdentity("n1", "/var/lib/b"));
  EXPECT_EQ(AgentIdentity("n1", "/var/lib/a").rfind("n1-", 0), 0u);
}

}  // namespace
}  // namespace tessera
