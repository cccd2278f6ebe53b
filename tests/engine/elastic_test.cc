// Elastic gangs (gang.minMembers): a run starts once its first minMembers tasks fit, with as
// many more as fit beside them, grows as room appears (each growth logged), keeps to the
// domain its gang rule requires, and progresses at its members' share of the job's pace.
#include <gtest/gtest.h>

#include <set>

#include "engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::kSec;
using testing::MakeJob;

// `tasks` tasks of `each` G1 each; elastic from `min` tasks on (0: all or nothing).
Job Gang(const Spec& spec, const std::string& name, int32_t tasks, int32_t each, int32_t min,
         Millis runtime) {
  Job job = MakeJob(spec, name, tasks, runtime);
  job.task_groups[0].request.devices.count = each;
  job.gang.min_members = min;
  return job;
}

std::vector<const Decision*> DecisionsOf(const MemoryStore& store, JobId job, DecisionKind kind) {
  std::vector<const Decision*> out;
  for (const Decision& d : store.decisions())
    if (d.job == job && d.kind == kind) out.push_back(&d);
  return out;
}

// The leaf switches a run's tasks sit under.
std::set<size_t> LeavesOf(const Engine& engine, const JobRecord& j) {
  std::set<size_t> leaves;
  for (const Placement& p : j.placements)
    leaves.insert(engine.cell().domain_of(TopologyLevel::kLeaf, p.node));
  return leaves;
}

TEST(ElasticGangs, AGangLargerThanTheClusterStartsWithWhatFitsInsteadOfBeingInfeasible) {
  // The cluster has 4 nodes of 4 G1; 6 tasks of 4 G1 never fit all at once.
  Harness h("fifo", true);
  JobId whole = h.Submit(Gang(h.spec, "whole", 6, 4, 0, 1000 * kSec), 0);
  JobId elastic = h.Submit(Gang(h.spec, "elastic", 6, 4, 1, 1000 * kSec), 0);
  h.RunUntil(0);
  EXPECT_EQ(h.engine->job(whole).reason, PendingReason::kInfeasible);
  const JobRecord& e = h.engine->job(elastic);
  ASSERT_EQ(e.state, JobState::kRunning);
  EXPECT_EQ(e.placements.size(), 4u);
  for (size_t i = 0; i < e.placements.size(); ++i)
    EXPECT_EQ(e.placements[i].task.index, static_cast<int32_t>(i));
  EXPECT_EQ(e.run_milli, 16000);
  EXPECT_EQ(h.engine->allocated_milli(), 16000);
  // Four of six workers: the job's 1000 s of work take 1500 s.
  EXPECT_EQ(e.estimated_end, 1500 * kSec);
  EXPECT_EQ(h.backend.launches, (std::vector<uint32_t>{elastic.value()}));
}

TEST(ElasticGangs, AllTasksStartTogetherWhenTheyFit) {
  Harness h("fifo", true);
  JobId e = h.Submit(Gang(h.spec, "elastic", 3, 4, 1, 1000 * kSec), 0);
  h.RunUntil(0);
  EXPECT_EQ(h.engine->job(e).placements.size(), 3u);
  EXPECT_EQ(h.engine->job(e).estimated_end, 1000 * kSec);
  EXPECT_TRUE(DecisionsOf(h.store, e, DecisionKind::kGrow).empty());
}

TEST(ElasticGangs, ARunGrowsAsRoomAppearsAndEachGrowthIsLogged) {
  Harness h("fifo", true);
  JobId first = h.Submit(Gang(h.spec, "first", 2, 4, 0, 100 * kSec), 0);
  JobId e = h.Submit(Gang(h.spec, "elastic", 4, 4, 2, 1000 * kSec), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(e).placements.size(), 2u);
  const uint64_t generation = h.engine->job(e).generation;
  EXPECT_EQ(h.engine->job(e).estimated_end, 2000 * kSec);  // at half pace
  h.Finish(first, 100 * kSec);
  h.RunUntil(100 * kSec);
  const JobRecord& grown = h.engine->job(e);
  ASSERT_EQ(grown.placements.size(), 4u);
  EXPECT_EQ(grown.generation, generation + 1);
  EXPECT_EQ(grown.run_milli, 16000);
  EXPECT_EQ(h.engine->allocated_milli(), 16000);
  // 100 s at half pace did 50 s of the work; the other 950 s go at full pace.
  EXPECT_EQ(grown.kept_ms, 50 * kSec);
  EXPECT_EQ(grown.estimated_end, 1050 * kSec);
  std::vector<const Decision*> grows = DecisionsOf(h.store, e, DecisionKind::kGrow);
  ASSERT_EQ(grows.size(), 1u);
  EXPECT_EQ(grows[0]->time, 100 * kSec);
  EXPECT_EQ(grows[0]->reason, "room: +2 task(s), 4 of 4");
  EXPECT_EQ(grows[0]->nodes.size(), 2u);
  ASSERT_EQ(h.backend.resizes.size(), 1u);
  EXPECT_EQ(h.backend.resizes[0], std::make_pair(e.value(), size_t{4}));
  // It ends by the grown run's generation; the first run's report is ignored.
  h.FinishRun(e, generation, 200 * kSec);
  h.RunUntil(200 * kSec);
  EXPECT_EQ(h.engine->job(e).state, JobState::kRunning);
  h.Finish(e, 1050 * kSec);
  h.RunUntil(1050 * kSec);
  EXPECT_EQ(h.engine->job(e).state, JobState::kSucceeded);
  EXPECT_EQ(h.engine->allocated_milli(), 0);
}

TEST(ElasticGangs, GrowthStaysWithinTheDomainItsGangRuleRequires) {
  // Two leaves of two nodes; a job holding one node of each leaves 4 free G1 per leaf.
  Harness h("fifo", true);
  h.engine->Cordon(1, 0);
  h.engine->Cordon(3, 0);
  JobId holder = h.Submit(Gang(h.spec, "holder", 2, 4, 0, 100 * kSec), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(holder).state, JobState::kRunning);
  ASSERT_EQ(LeavesOf(*h.engine, h.engine->job(holder)).size(), 2u);
  h.engine->Uncordon(1, 10 * kSec);
  h.engine->Uncordon(3, 10 * kSec);
  // Four tasks of 2 G1 under one leaf: 8 G1, more than either leaf has free.
  Job leafy = Gang(h.spec, "leafy", 4, 2, 1, 1000 * kSec);
  leafy.gang.require = TopologyLevel::kLeaf;
  JobId e = h.Submit(leafy, 10 * kSec);
  h.RunUntil(10 * kSec);
  const JobRecord& started = h.engine->job(e);
  ASSERT_EQ(started.state, JobState::kRunning);
  EXPECT_EQ(started.placements.size(), 2u);  // the 4 free G1 of one leaf
  EXPECT_EQ(LeavesOf(*h.engine, started).size(), 1u);
  EXPECT_EQ(h.FreeMilli(), 4000);  // the other leaf's room is not taken
  h.Finish(holder, 100 * kSec);
  h.RunUntil(100 * kSec);
  const JobRecord& grown = h.engine->job(e);
  EXPECT_EQ(grown.placements.size(), 4u);
  EXPECT_EQ(LeavesOf(*h.engine, grown).size(), 1u);
}

TEST(ElasticGangs, WaitingJobsGoBeforeARunningGangGrows) {
  Harness h("fifo", true);
  JobId first = h.Submit(Gang(h.spec, "first", 2, 4, 0, 100 * kSec), 0);
  JobId e = h.Submit(Gang(h.spec, "elastic", 4, 4, 1, 1000 * kSec), 0);
  h.RunUntil(0);
  ASSERT_EQ(h.engine->job(e).placements.size(), 2u);
  // A job that waits for a whole node: when `first` ends it takes one, the gang the other.
  JobId next = h.Submit(Gang(h.spec, "next", 1, 4, 0, 1000 * kSec), 50 * kSec);
  h.RunUntil(50 * kSec);
  ASSERT_EQ(h.engine->job(next).state, JobState::kPending);
  h.Finish(first, 100 * kSec);
  h.RunUntil(100 * kSec);
  EXPECT_EQ(h.engine->job(next).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(e).placements.size(), 3u);
}

// A preemptible elastic run of low priority on the whole cluster (4 nodes of 4 G1), elastic
// from `min` tasks.
JobId LowOnEverything(Harness& h, int32_t min) {
  Job low = Gang(h.spec, "low", 4, 4, min, 1000 * kSec);
  low.priority = "low";
  low.preemptible = true;
  JobId e = h.Submit(low, 0);
  h.RunUntil(0);
  EXPECT_EQ(h.engine->job(e).placements.size(), 4u);
  return e;
}

TEST(ElasticGangs, APreemptorShrinksAnElasticRunToItsMinimumBeforeStoppingIt) {
  Harness h("fifo", true);
  JobId e = LowOnEverything(h, 1);
  Job urgent = Gang(h.spec, "urgent", 3, 4, 0, 100 * kSec);
  urgent.priority = "high";
  JobId u = h.Submit(urgent, 10 * kSec);
  h.RunUntil(10 * kSec);
  ASSERT_EQ(h.engine->job(u).state, JobState::kRunning);
  // Three of its four tasks give way; the run goes on with its first, losing nothing.
  const JobRecord& shrunk = h.engine->job(e);
  EXPECT_EQ(shrunk.state, JobState::kRunning);
  EXPECT_EQ(shrunk.restarts, 0);
  EXPECT_EQ(shrunk.placements.size(), 1u);
  EXPECT_EQ(shrunk.placements[0].task.index, 0);
  EXPECT_EQ(shrunk.run_milli, 4000);
  EXPECT_EQ(h.engine->allocated_milli(), 16000);
  EXPECT_EQ(shrunk.kept_ms, 10 * kSec);
  EXPECT_EQ(shrunk.estimated_end, (10 + 990 * 4) * kSec);  // a quarter of the pace
  EXPECT_TRUE(DecisionsOf(h.store, e, DecisionKind::kPreempt).empty());
  std::vector<const Decision*> shrinks = DecisionsOf(h.store, e, DecisionKind::kShrink);
  ASSERT_EQ(shrinks.size(), 1u);
  EXPECT_EQ(shrinks[0]->reason, "preempted-by:urgent priority -3 task(s), 1 of 4");
  EXPECT_EQ(shrinks[0]->nodes.size(), 3u);
  EXPECT_EQ(h.backend.resizes, (std::vector<std::pair<uint32_t, size_t>>{{e.value(), size_t{1}}}));
  EXPECT_TRUE(h.backend.stops.empty());
  // Once the preemptor ends, it grows back.
  h.Finish(u, 110 * kSec);
  h.RunUntil(110 * kSec);
  EXPECT_EQ(h.engine->job(e).placements.size(), 4u);
  EXPECT_EQ(h.engine->allocated_milli(), 16000);
}

TEST(ElasticGangs, AnElasticRunWhoseShrinkIsNotEnoughIsStoppedWhole) {
  Harness h("fifo", true);
  JobId e = LowOnEverything(h, 2);
  Job urgent = Gang(h.spec, "urgent", 3, 4, 0, 100 * kSec);
  urgent.priority = "high";
  JobId u = h.Submit(urgent, 10 * kSec);
  h.RunUntil(10 * kSec);
  ASSERT_EQ(h.engine->job(u).state, JobState::kRunning);
  // Down to its minimum of two it frees two nodes, and the preemptor needs three.
  EXPECT_EQ(h.engine->job(e).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(e).restarts, 1);
  EXPECT_EQ(DecisionsOf(h.store, e, DecisionKind::kPreempt).size(), 1u);
  EXPECT_TRUE(DecisionsOf(h.store, e, DecisionKind::kShrink).empty());
  EXPECT_EQ(h.engine->allocated_milli(), 12000);
  EXPECT_EQ(h.FreeMilli(), 4000);
  // It cannot start its minimum on the one node left; it starts whole once `urgent` ends.
  h.Finish(u, 110 * kSec);
  h.RunUntil(110 * kSec);
  EXPECT_EQ(h.engine->job(e).state, JobState::kRunning);
  EXPECT_EQ(h.engine->job(e).placements.size(), 4u);
}

}  // namespace
}  // namespace tessera
