// The daemon's engine runs on its thread alone: API calls that change it post the change and
// answer once the pass that made it is done, and a reload hands the thread a new engine to
// drive. On an in-memory store, without HTTP.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "config/loader.h"
#include "daemon_fixture.h"
#include "server/daemon.h"
#include "store/memory_store.h"
#include "testutil/two_speed_fleet.h"

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
    StartDaemon({});
  }
  // A daemon on the configuration in dir_, with `scheduler` in place of its section's.
  void StartDaemon(SchedulerSettings scheduler) {
    daemon_.reset();
    LoadResult r = LoadSpecFiles({dir_.string()});
    ASSERT_TRUE(r.spec) << r.diagnostics.ToString();
    DaemonOptions options;
    options.config_paths = {dir_.string()};
    options.admin_token = "secret";
    options.scheduler = std::move(scheduler);
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

TEST_F(DaemonEngineThread, TheSchedulerIsTheConfigurationsAndEveryDecisionNamesIt) {
  // No scheduler section: the defaults.
  EXPECT_EQ(daemon_->scheduler().ordering, "backfill");
  EXPECT_EQ(daemon_->scheduler().placement, "tessera");
  ASSERT_TRUE(daemon_->Submit(admin_, testing::DaemonJobBody("before"), "").ok());
  ASSERT_EQ(StateOnceTaken("before"), "running");
  // The section, reloaded: the new engine decides by it.
  std::ofstream(dir_ / "policies.yaml") << "scheduler: {ordering: las, placement: best-fit}\n";
  auto reloaded = daemon_->Reload(admin_, /*apply=*/true);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  ASSERT_TRUE(reloaded->applied);
  EXPECT_EQ(daemon_->scheduler().ordering, "las");
  EXPECT_EQ(daemon_->scheduler().placement, "best-fit");
  ASSERT_TRUE(daemon_->Submit(admin_, testing::DaemonJobBody("after"), "").ok());
  ASSERT_EQ(StateOnceTaken("after"), "running");
  auto before = daemon_->Explain(admin_, "before", "");
  auto after = daemon_->Explain(admin_, "after", "");
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(after->policy, "las");
  EXPECT_EQ(after->placement, "best-fit");
  // Each start names the engine that made it, the one before the reload too.
  ASSERT_FALSE(before->decisions.empty());
  EXPECT_EQ(before->decisions[0].kind, "start");
  EXPECT_NE(before->decisions[0].detail.find(R"("policy":"backfill","placement":"tessera")"),
            std::string::npos)
      << before->decisions[0].detail;
  ASSERT_FALSE(after->decisions.empty());
  EXPECT_NE(after->decisions[0].detail.find(R"("policy":"las","placement":"best-fit")"),
            std::string::npos)
      << after->decisions[0].detail;
  bool gauge = false;
  for (const Gauge& g : daemon_->Gauges()) {
    if (g.name != "tessera_scheduler") continue;
    ASSERT_EQ(g.samples.size(), 1u);
    EXPECT_EQ(g.samples[0].first, R"(policy="las",placement="best-fit")");
    gauge = true;
  }
  EXPECT_TRUE(gauge);
}

TEST_F(DaemonEngineThread, TheCommandLinesSchedulerTakesThePlaceOfTheSections) {
  std::ofstream(dir_ / "policies.yaml") << "scheduler: {ordering: las, placement: best-fit}\n";
  StartDaemon({"hetero", ""});
  EXPECT_EQ(daemon_->scheduler().ordering, "hetero");
  EXPECT_EQ(daemon_->scheduler().placement, "best-fit");  // not named: the section's
  // A reload keeps the command line's in place of the section's.
  std::ofstream(dir_ / "policies.yaml", std::ios::trunc) << "scheduler: {ordering: fifo}\n";
  ASSERT_TRUE(daemon_->Reload(admin_, /*apply=*/true).ok());
  EXPECT_EQ(daemon_->scheduler().ordering, "hetero");
  EXPECT_EQ(daemon_->scheduler().placement, "tessera");
}

// `hetero` live: a preemptible job that started on a slow model while the fast one was busy
// moves to the fast one once it frees (its run stops and starts again there), logged as a
// migration by the policy that made it.
TEST_F(DaemonEngineThread, HeteroMovesARunningJobToAFasterModelOnceItFrees) {
  std::ofstream(dir_ / "fleet.yaml", std::ios::trunc) << testing::TwoSpeedFleet("emu", "emulated");
  StartDaemon({});
  ASSERT_EQ(daemon_->scheduler().ordering, "hetero");
  auto job = [](const std::string& name, const std::string& runtime, const std::string& models) {
    return R"({"name":")" + name + R"(","class":"batch","tenant":"lab","preemptible":true,)" +
           R"("runtime":")" + runtime + R"(","taskGroups":[{"name":"w","count":1,"cpu":1,)" +
           R"("memory":"1Gi","devices":{"count":1,"models":)" + models + "}}]}";
  };
  // The fast model is busy for a second; the mover starts on the slow one meanwhile.
  ASSERT_TRUE(daemon_->Submit(admin_, job("blocker", "1s", R"(["V100"])"), "").ok());
  ASSERT_EQ(StateOnceTaken("blocker"), "running");
  ASSERT_TRUE(daemon_
                  ->Submit(admin_,
                           job("mover", "10h",
                               R"([{"model":"V100","speed":1},)"
                               R"({"model":"K80","speed":0.25}])"),
                           "")
                  .ok());
  ASSERT_EQ(StateOnceTaken("mover"), "running");
  auto first = daemon_->GetJob(admin_, "mover", "");
  ASSERT_TRUE(first.ok());
  EXPECT_NE(first->placement.find("emu-slow-0000"), std::string::npos) << first->placement;
  // Once the blocker ends, the mover's run stops and starts on the fast model (a generous
  // bound for a loaded machine, not a timing).
  Result<StoredJob> moved = first;
  for (int i = 0; i < 1000 && moved.ok() && moved->restarts == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    moved = daemon_->GetJob(admin_, "mover", "");
  }
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->restarts, 1);
  EXPECT_EQ(moved->state, "running");
  EXPECT_NE(moved->placement.find("emu-fast-0000"), std::string::npos) << moved->placement;
  auto explained = daemon_->Explain(admin_, "mover", "");
  ASSERT_TRUE(explained.ok());
  std::vector<std::string> kinds;
  for (const StoredDecision& d : explained->decisions) {
    kinds.push_back(d.kind);
    if (d.kind != "migrate") continue;
    EXPECT_EQ(d.reason, "faster-model:V100 x4.00");
    EXPECT_NE(d.detail.find(R"("policy":"hetero")"), std::string::npos) << d.detail;
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"start", "migrate", "start"}));
}

// An elastic gang live: it starts with the tasks that fit, grows when the blocker ends (the
// emulated backend's timer of the grown run replaces the first), and the job's row and its
// decisions say so.
TEST_F(DaemonEngineThread, AnElasticGangStartsWithWhatFitsAndGrowsWhenRoomAppears) {
  StartDaemon({});
  ASSERT_TRUE(daemon_
                  ->Submit(admin_,
                           R"({"name":"blocker","class":"batch","tenant":"lab","runtime":"1s",)"
                           R"("taskGroups":[{"name":"w","count":1,"cpu":1,"memory":"1Gi",)"
                           R"("devices":{"count":2}}]})",
                           "")
                  .ok());
  ASSERT_EQ(StateOnceTaken("blocker"), "running");
  ASSERT_TRUE(daemon_
                  ->Submit(admin_,
                           R"({"name":"array","class":"batch","tenant":"lab","runtime":"10h",)"
                           R"("taskGroups":[{"name":"w","count":4,"cpu":1,"memory":"1Gi",)"
                           R"("devices":{"count":1}}],"gang":{"minMembers":1}})",
                           "")
                  .ok());
  ASSERT_EQ(StateOnceTaken("array"), "running");
  auto started = daemon_->GetJob(admin_, "array", "");
  ASSERT_TRUE(started.ok());
  const std::string blocker_node =
      daemon_->GetJob(admin_, "blocker", "")->placement.find("emu-gpu-0000") != std::string::npos
          ? "emu-gpu-0000"
          : "emu-gpu-0001";
  EXPECT_EQ(started->placement.find(blocker_node), std::string::npos) << started->placement;
  // Once the blocker ends, the array takes its node too (a generous bound for a loaded
  // machine, not a timing).
  Result<StoredJob> grown = started;
  for (int i = 0;
       i < 1000 && grown.ok() && grown->placement.find(blocker_node) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    grown = daemon_->GetJob(admin_, "array", "");
  }
  ASSERT_TRUE(grown.ok());
  EXPECT_EQ(grown->state, "running");
  EXPECT_EQ(grown->restarts, 0);
  EXPECT_NE(grown->placement.find(blocker_node), std::string::npos) << grown->placement;
  auto explained = daemon_->Explain(admin_, "array", "");
  ASSERT_TRUE(explained.ok());
  std::vector<std::string> kinds;
  for (const StoredDecision& d : explained->decisions) {
    kinds.push_back(d.kind);
    if (d.kind == "grow") {
      EXPECT_EQ(d.reason, "room: +2 task(s), 4 of 4");
    }
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"start", "grow"}));
}

// A deadline live: explain forecasts a waiting job against it (the blocker's estimated end,
// then its own runtime), and /metrics counts the deadlines met once jobs end.
TEST_F(DaemonEngineThread, ExplainForecastsADeadlineAndMetricsCountThoseMet) {
  const TimeMs now = clock_.Now();
  auto stamp = [](TimeMs ms) {
    std::time_t t = static_cast<std::time_t>(ms / 1000);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return std::string(buf);
  };
  auto job = [&](const std::string& name, const std::string& runtime, int count, int devices,
                 std::optional<TimeMs> deadline) {
    return R"({"name":")" + name + R"(","class":"batch","tenant":"lab","runtime":")" + runtime +
           R"(",)" + (deadline ? R"("deadline":")" + stamp(*deadline) + R"(",)" : "") +
           R"("taskGroups":[{"name":"w","count":)" + std::to_string(count) +
           R"(,"cpu":1,"memory":"1Gi","devices":{"count":)" + std::to_string(devices) + "}}]}";
  };
  // The blocker takes all four L4 for an hour; the waiting job needs one for an hour, by 30
  // minutes from now: it cannot make it.
  ASSERT_TRUE(daemon_->Submit(admin_, job("blocker", "1h", 2, 2, std::nullopt), "").ok());
  ASSERT_EQ(StateOnceTaken("blocker"), "running");
  ASSERT_TRUE(daemon_->Submit(admin_, job("late", "1h", 1, 1, now + 1800 * 1000), "").ok());
  auto blocker = daemon_->Explain(admin_, "blocker", "");
  ASSERT_TRUE(blocker.ok());
  EXPECT_FALSE(blocker->deadline) << "no deadline, no outlook";
  // Once the engine's thread has taken it (a generous bound, not a timing).
  auto late = daemon_->Explain(admin_, "late", "");
  for (int i = 0; i < 1000 && late.ok() && late->job.reason != "InsufficientResources"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    late = daemon_->Explain(admin_, "late", "");
  }
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->job.reason, "InsufficientResources");
  ASSERT_TRUE(late->deadline);
  EXPECT_EQ(late->deadline->state, DeadlineState::kAtRisk);
  auto started = daemon_->GetJob(admin_, "blocker", "");
  ASSERT_TRUE(started.ok() && started->first_start);
  EXPECT_EQ(late->deadline->start, *started->first_start + 3600 * 1000);
  EXPECT_EQ(late->deadline->end, late->deadline->start + 3600 * 1000);
  EXPECT_EQ(late->deadline->deadline, now / 1000 * 1000 + 1800 * 1000);

  // The blocker goes; a short job with a deadline an hour away runs and ends by it.
  ASSERT_TRUE(daemon_->Cancel(admin_, "blocker", "").ok());
  ASSERT_TRUE(daemon_->Submit(admin_, job("quick", "1s", 1, 1, now + 3600 * 1000), "").ok());
  Result<StoredJob> quick = daemon_->GetJob(admin_, "quick", "");
  for (int i = 0; i < 1000 && quick.ok() && quick->state != "succeeded"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    quick = daemon_->GetJob(admin_, "quick", "");
  }
  ASSERT_TRUE(quick.ok());
  ASSERT_EQ(quick->state, "succeeded");
  auto met = daemon_->Explain(admin_, "quick", "");
  ASSERT_TRUE(met.ok() && met->deadline);
  EXPECT_EQ(met->deadline->state, DeadlineState::kMet);
  const std::string metrics = daemon_->metrics().Render({});
  EXPECT_NE(metrics.find("tessera_job_deadlines_total{outcome=\"met\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("tessera_job_deadlines_total{outcome=\"missed\"} 0\n"), std::string::npos);
}

}  // namespace
}  // namespace tessera
