// An operator's holds on nodes: cordon (no new work, what runs goes on), drain (cordon and
// requeue what runs there), uncordon.
#include <gtest/gtest.h>

#include <set>

#include "engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::MakeJob;

using testing::kSec;

std::set<uint32_t> NodesOf(const JobRecord& j) {
  std::set<uint32_t> nodes;
  for (const Placement& p : j.placements)
    nodes.insert(p.node);
  return nodes;
}

TEST(Cordon, ACordonedNodeTakesNoNewWorkWhileItsJobRunsOn) {
  Harness h("fifo", true);
  JobId first = h.Submit(MakeJob(h.spec, "first", 1, 1000 * kSec), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(first).state, JobState::kRunning);
  uint32_t node = *NodesOf(h.engine->job(first)).begin();
  h.engine->Cordon(node, 10 * kSec);
  // 15 one-device tasks: 3 nodes x 4 devices are left, so 3 wait while the cordoned node
  // has 3 free devices it may not use.
  std::vector<JobId> later;
  for (int i = 0; i < 15; ++i)
    later.push_back(h.Submit(MakeJob(h.spec, "j" + std::to_string(i), 1, 1000 * kSec), 20 * kSec));
  h.RunUntil(20 * kSec);
  EXPECT_TRUE(h.engine->cordoned(node));
  EXPECT_EQ(h.engine->job(first).state, JobState::kRunning);
  int running = 0;
  for (JobId j : later) {
    if (h.engine->job(j).state != JobState::kRunning) continue;
    ++running;
    EXPECT_FALSE(NodesOf(h.engine->job(j)).count(node)) << "placed on the cordoned node";
  }
  EXPECT_EQ(running, 12);
  // Uncordoned, its free devices take three of the waiting jobs.
  h.engine->Uncordon(node, 30 * kSec);
  h.RunUntil(30 * kSec);
  running = 0;
  for (JobId j : later)
    running += h.engine->job(j).state == JobState::kRunning;
  EXPECT_EQ(running, 15);
}

TEST(Cordon, DrainingRequeuesTheNodesJobsWholeAndTheyRestartElsewhere) {
  Harness h("fifo", true);
  Job job = MakeJob(h.spec, "gang", 6, 1000 * kSec);
  job.checkpoint_interval = 30 * kSec;
  JobId g = h.Submit(job, 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(g).state, JobState::kRunning);
  uint32_t node = *NodesOf(h.engine->job(g)).begin();
  h.engine->Drain(node, 100 * kSec);
  h.RunUntil(100 * kSec);
  const JobRecord& r = h.engine->job(g);
  EXPECT_EQ(r.restarts, 1);
  EXPECT_EQ(r.state, JobState::kRunning);
  EXPECT_FALSE(NodesOf(r).count(node));
  EXPECT_EQ(r.kept_ms, 90 * kSec);  // restarted from its checkpoint at 90 s
  EXPECT_TRUE(h.engine->cordoned(node));
  EXPECT_TRUE(h.engine->node_up(node));  // drained, not lost: still healthy capacity
  EXPECT_EQ(h.engine->healthy_capacity_milli(), 16000);
  bool logged = false;
  for (const Decision& d : h.store.decisions())
    logged |= d.kind == DecisionKind::kRequeue &&
              d.reason == "drained:" + h.engine->cell().node_name(node);
  EXPECT_TRUE(logged);
}

TEST(Cordon, ALostCordonedNodeThatRecoversStaysCordoned) {
  Harness h("fifo", true);
  h.engine->Cordon(0, 0);
  h.engine->NodeLost(0, kSec);
  h.engine->NodeRecovered(0, 2 * kSec);
  h.RunUntil(2 * kSec);
  EXPECT_TRUE(h.engine->node_up(0));
  EXPECT_TRUE(h.engine->cordoned(0));
  // 16 one-device jobs: only 12 devices may take them.
  std::vector<JobId> jobs;
  for (int i = 0; i < 16; ++i)
    jobs.push_back(h.Submit(MakeJob(h.spec, "j" + std::to_string(i), 1, 1000 * kSec), 3 * kSec));
  h.RunUntil(3 * kSec);
  int running = 0;
  for (JobId j : jobs) {
    if (h.engine->job(j).state != JobState::kRunning) continue;
    ++running;
    EXPECT_FALSE(NodesOf(h.engine->job(j)).count(0)) << "placed on the cordoned node";
  }
  EXPECT_EQ(running, 12);
}

}  // namespace
}  // namespace tessera
