// The daemon's engine runs on its thread alone: API calls that change it post the change and
// answer once the pass that made it is done, and a reload hands the thread a new engine to
// drive. On an in-memory store, without HTTP.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "config/loader.h"
#include "daemon_fixture.h"
#include "server/daemon.h"
#include "store/memory_store.h"

namespace tessera {
namespace {

class DaemonEngineThread : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera-engine-thread-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "fleet.yaml") << testing::kDaemonFleet;
    LoadResult r = LoadSpecFiles({dir_.string()});
    ASSERT_TRUE(r.spec) << r.diagnostics.ToString();
    DaemonOptions options;
    options.config_paths = {dir_.string()};
    options.admin_token = "secret";
    auto d = Daemon::Start(std::move(*r.spec), std::make_unique<InMemoryStore>(), clock_, options);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    daemon_ = std::move(d->daemon);
  }
  void TearDown() override {
    daemon_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The job's state once the engine's thread has taken its submission (it runs on its own
  // pace; a generous bound, not a timing).
  std::string StateOnceTaken(const std::string& name) {
    for (int i = 0; i < 2000; ++i) {
      auto job = daemon_->GetJob(admin_, name, "");
      if (job.ok() && job->state != "pending") return job->state;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return "pending";
  }

  std::filesystem::path dir_;
  SystemClock clock_;
  std::unique_ptr<Daemon> daemon_;
  const Caller admin_{"admin", Role::kAdmin, "", ""};
};

TEST_F(DaemonEngineThread, ACancelIsAnsweredOnceTheEnginesPassMadeIt) {
  ASSERT_TRUE(daemon_->Submit(admin_, testing::DaemonJobBody("a"), "").ok());
  // Cancelled at once, whether the engine's thread has taken the submission yet or not.
  auto cancelled = daemon_->Cancel(admin_, "a", "");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ(cancelled->state, "cancelled");
  auto again = daemon_->GetJob(admin_, "a", "");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->state, "cancelled");
  EXPECT_EQ(daemon_->counts().running, 0u);
}

TEST_F(DaemonEngineThread, ADrainIsAnsweredWithTheNodeAsThePassLeftIt) {
  auto node = daemon_->HoldNode(admin_, "emu-gpu-0000", "drain");
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ(node->state, "drained");
  auto lifted = daemon_->HoldNode(admin_, "emu-gpu-0000", "uncordon");
  ASSERT_TRUE(lifted.ok()) << lifted.status().ToString();
  EXPECT_EQ(lifted->state, "ready");
}

TEST_F(DaemonEngineThread, AfterAReloadTheThreadDrivesTheNewEngine) {
  ASSERT_TRUE(daemon_->Submit(admin_, testing::DaemonJobBody("before"), "").ok());
  ASSERT_EQ(StateOnceTaken("before"), "running");
  // A second node group joins the fleet.
  std::string grown = testing::kDaemonFleet;
  grown.replace(grown.find("tenants:"), 0,
                "  - name: emu2\n    region: lab\n    tier: dedicated\n    backend: emulated\n"
                "    nodeGroups:\n      - {name: cpu, count: 1, cpu: 8, memory: 32Gi}\n");
  std::ofstream(dir_ / "fleet.yaml", std::ios::trunc) << grown;
  auto reloaded = daemon_->Reload(admin_, /*apply=*/true);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_TRUE(reloaded->applied);
  ASSERT_TRUE(reloaded->jobs.has_value());
  EXPECT_EQ(reloaded->jobs->resumed, 1);
  // The new engine schedules: a submission after the reload runs, the resumed run goes on,
  // and a cancel reaches it.
  ASSERT_TRUE(daemon_->Submit(admin_, testing::DaemonJobBody("after"), "").ok());
  EXPECT_EQ(StateOnceTaken("after"), "running");
  auto before = daemon_->GetJob(admin_, "before", "");
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->state, "running");
  auto cancelled = daemon_->Cancel(admin_, "after", "");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ(cancelled->state, "cancelled");
}

}  // namespace
}  // namespace tessera
