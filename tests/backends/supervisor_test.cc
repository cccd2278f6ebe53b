// The agent's processes, for real: a task runs with its environment and its output in its
// log, exits with its status, is stopped with SIGTERM then SIGKILL, is never started twice,
// and a program that cannot run is an exit with the reason.
#include "backends/local/supervisor.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "backends/supervisor_testutil.h"

namespace tessera {
namespace {

TimeMs Now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using testing::OptionsIn;

class SupervisorTest : public ::testing::Test {
 protected:
  SupervisorTest()
      : dir_(std::filesystem::temp_directory_path() /
             ("tessera-sup-" + std::to_string(getpid()) + "-" + std::to_string(++count_))),
        sup_(OptionsIn(dir_)) {}
  ~SupervisorTest() override { std::filesystem::remove_all(dir_); }

  // Polls until no task runs (or 10 s); returns the reports then.
  std::vector<TaskReport> WaitAll() {
    for (int i = 0; i < 1000 && !sup_.Running().empty(); ++i) {
      sup_.Poll(Now());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return sup_.Reports();
  }

  TaskAssignment Task(TaskKey key, std::string shell) {
    TaskAssignment a;
    a.key = key;
    a.job_name = "j";
    a.command = {"/bin/sh", "-c", std::move(shell)};
    a.env = {{"CUDA_VISIBLE_DEVICES", "1,3"}, {"TESSERA_TASK_INDEX", "0"}};
    return a;
  }

  static inline int count_ = 0;
  std::filesystem::path dir_;
  Supervisor sup_;
};

TEST_F(SupervisorTest, ATaskRunsWithItsEnvironmentAndExitsWithItsStatus) {
  sup_.Start(Task({5, 2, 0},
                  "echo devices=$CUDA_VISIBLE_DEVICES ckpt=$TESSERA_CHECKPOINT_DIR "
                  "key=$TESSERA_TASK_KEY; exit 3"),
             Now());
  auto reports = WaitAll();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].phase, TaskPhase::kExited);
  EXPECT_EQ(reports[0].exit_code, 3);
  EXPECT_FALSE(reports[0].stopped);
  EXPECT_EQ(reports[0].log, "devices=1,3 ckpt=" + (dir_ / "ckpt" / "5").string() + " key=5.2.0\n");
  EXPECT_TRUE(std::filesystem::is_directory(dir_ / "ckpt" / "5"));
}

TEST_F(SupervisorTest, TheLogTailIsBoundedAndSentOnlyWhenItChanged) {
  sup_.Start(Task({1, 0, 0}, "for i in $(seq 1 100); do echo line-$i; done; sleep 30"), Now());
  std::string tail;
  for (int i = 0; i < 500 && tail.find("line-100") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto r = sup_.Reports();
    if (!r.empty() && !r[0].log.empty()) tail = r[0].log;
  }
  EXPECT_EQ(tail.size(), 64u);
  EXPECT_EQ(tail.substr(tail.size() - 9), "line-100\n");
  EXPECT_EQ(sup_.Reports()[0].log, "");              // unchanged since
  EXPECT_EQ(sup_.Reports(true)[0].log.size(), 64u);  // unless asked for
}

TEST_F(SupervisorTest, StopSendsTermThenKillsTheWholeGroupAfterTheGrace) {
  // The task ignores SIGTERM and leaves a child behind: both die by SIGKILL after the grace.
  sup_.Start(Task({2, 0, 0},
                  "trap 'echo got-term' TERM; sleep 60 & echo child=$!; "
                  "while true; do sleep 0.05; done"),
             Now());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  TimeMs start = Now();
  sup_.Stop({2, 0, 0}, 300, start);
  auto reports = WaitAll();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_GE(Now() - start, 300);
  EXPECT_EQ(reports[0].exit_code, 128 + 9);
  EXPECT_TRUE(reports[0].stopped);
  EXPECT_NE(reports[0].log.find("got-term"), std::string::npos) << reports[0].log;
  auto child = reports[0].log.find("child=");
  ASSERT_NE(child, std::string::npos);
  pid_t pid = std::stoi(reports[0].log.substr(child + 6));
  for (int i = 0; i < 100 && kill(pid, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_NE(kill(pid, 0), 0) << "the task's child outlived it";
}

TEST_F(SupervisorTest, ATaskThatHonoursTermExitsWithinItsGrace) {
  sup_.Start(Task({3, 0, 0},
                  "trap 'echo checkpointed; exit 0' TERM; while true; do sleep "
                  "0.05; done"),
             Now());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  sup_.Stop({3, 0, 0}, 10000, Now());
  auto reports = WaitAll();
  EXPECT_EQ(reports[0].exit_code, 0);
  EXPECT_TRUE(reports[0].stopped);
  EXPECT_NE(reports[0].log.find("checkpointed"), std::string::npos);
}

TEST_F(SupervisorTest, AProgramThatCannotRunIsAnExitWithTheReason) {
  TaskAssignment a = Task({4, 0, 0}, "");
  a.command = {"/no/such/program", "--flag"};
  sup_.Start(a, Now());
  auto reports = sup_.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].phase, TaskPhase::kExited);
  EXPECT_EQ(reports[0].exit_code, 127);
  EXPECT_NE(reports[0].error.find("cannot execute /no/such/program"), std::string::npos)
      << reports[0].error;
}

TEST_F(SupervisorTest, AnAcknowledgedExitIsNotReportedAgainNorRestarted) {
  sup_.Start(Task({6, 0, 1}, "echo out"), Now());
  auto reports = WaitAll();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].log, "out\n");
  sup_.Acknowledge({{6, 0, 1}}, Now());
  EXPECT_TRUE(sup_.Reports().empty());
  EXPECT_TRUE(sup_.Knows({6, 0, 1}));
  sup_.Unacknowledge();  // a daemon that restarted hears it again, without the stored tail
  reports = sup_.Reports(true);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].phase, TaskPhase::kExited);
  EXPECT_EQ(reports[0].log, "");
}

// An agent that runs for months does not report every exit it ever had to a daemon that
// restarted (its sync would outgrow any body limit): an exit acknowledged long ago is
// forgotten, but for its key.
TEST_F(SupervisorTest, ExitsAcknowledgedLongAgoAreForgottenButNeverStartedAgain) {
  sup_.Start(Task({7, 0, 0}, "true"), Now());
  sup_.Start(Task({7, 0, 1}, "true"), Now());
  ASSERT_EQ(WaitAll().size(), 2u);
  const Millis kKeep = SupervisorOptions{}.keep_acknowledged;
  const TimeMs t = Now();
  sup_.Acknowledge({{7, 0, 0}}, t);
  sup_.Acknowledge({{7, 0, 1}}, t + kKeep);  // later: kept a while more
  sup_.Acknowledge({}, t + kKeep + 1);       // the first is past keeping
  sup_.Unacknowledge();
  auto reports = sup_.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].key.task, 1);
  EXPECT_TRUE(sup_.Knows({7, 0, 0}));  // what the agent asks before it starts a task
  EXPECT_TRUE(sup_.Knows({7, 0, 1}));
  EXPECT_FALSE(sup_.Knows({7, 0, 2}));
}

// A task runs as the user its runAs names (an agent running as root drops to it before the
// program starts), in directories that are that user's; with no user named, a root agent
// refuses it unless allowed. Root is what lets the agent switch: CI runs the tests as root.
TEST(SupervisorRunAs, ARootAgentRunsATaskAsItsUserAndRefusesRootUnlessAllowed) {
  ASSERT_EQ(geteuid(), 0u) << "switching users needs root (CI runs as root)";
  const passwd* nobody = getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  const uid_t uid = nobody->pw_uid;
  const std::string home = nobody->pw_dir;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tessera-runas-" + std::to_string(getpid()));
  SupervisorOptions o = OptionsIn(dir);
  o.allow_root_tasks = false;
  o.log_bytes = 4096;
  Supervisor sup(o);
  TaskAssignment as_nobody;
  as_nobody.key = {7, 0, 0};
  as_nobody.command = {"/bin/sh", "-c", "echo uid=$(id -u) user=$USER home=$HOME; touch mine"};
  as_nobody.run_as_user = "nobody";
  sup.Start(as_nobody, 0);
  TaskAssignment unnamed = as_nobody;
  unnamed.key = {8, 0, 0};
  unnamed.run_as_user.clear();
  sup.Start(unnamed, 0);
  TaskAssignment stranger = as_nobody;
  stranger.key = {9, 0, 0};
  stranger.run_as_user = "no-such-user-here";
  sup.Start(stranger, 0);
  for (int i = 0; i < 500 && !sup.Running().empty(); ++i) {
    sup.Poll(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::map<int64_t, TaskReport> by_job;
  for (TaskReport& r : sup.Reports(true))
    by_job[r.key.job] = r;
  EXPECT_EQ(by_job[7].exit_code, 0) << by_job[7].error << by_job[7].log;
  EXPECT_NE(by_job[7].log.find("uid=" + std::to_string(uid) + " user=nobody home=" + home),
            std::string::npos)
      << by_job[7].log;
  struct stat st {};
  ASSERT_EQ(stat((dir / "tasks" / TaskKey{7, 0, 0}.ToString() / "mine").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid);
  ASSERT_EQ(stat((dir / "ckpt" / "7").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid) << "the checkpoint directory is the task user's";
  EXPECT_EQ(by_job[8].exit_code, 127);
  EXPECT_NE(by_job[8].error.find("the agent runs as root and the task names no user to run as"),
            std::string::npos)
      << by_job[8].error;
  EXPECT_EQ(by_job[9].exit_code, 127);
  EXPECT_NE(by_job[9].error.find("no user \"no-such-user-here\" on this host"), std::string::npos)
      << by_job[9].error;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera
