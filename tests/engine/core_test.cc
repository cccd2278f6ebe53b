// The scheduler a configuration names, as the daemon, the simulator and `tessera place` build
// it: every policy and scorer name the configuration accepts is one the registries have.
#include "engine/core.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "engine/drive.h"
#include "engine/engine_testutil.h"
#include "sched/policy/builtin.h"

namespace tessera {
namespace {

TEST(EngineChoice, APolicyNamesItsOrderingAndWhetherItBackfills) {
  Result<EngineChoice> las = ChoiceFor({"las", "best-fit"});
  ASSERT_TRUE(las.ok()) << las.status().ToString();
  EXPECT_EQ(las->policy, "las");
  EXPECT_EQ(las->ordering, "las");
  EXPECT_TRUE(las->options.backfill);
  EXPECT_EQ(las->placement, "best-fit");
  Result<EngineChoice> fifo = ChoiceFor({"fifo", ""});
  ASSERT_TRUE(fifo.ok());
  EXPECT_EQ(fifo->ordering, "fifo");
  EXPECT_FALSE(fifo->options.backfill);
  EXPECT_EQ(fifo->placement, "tessera");
  // Nothing named: the defaults (backfill is fifo that backfills).
  Result<EngineChoice> none = ChoiceFor({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->policy, "backfill");
  EXPECT_EQ(none->ordering, "fifo");
  EXPECT_TRUE(none->options.backfill);
  // What the base carries besides stays.
  EngineChoice base;
  base.options.explain = true;
  base.scale_interval = 1234;
  Result<EngineChoice> kept = ChoiceFor({"hetero", ""}, base);
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(kept->options.explain);
  EXPECT_EQ(kept->scale_interval, 1234);
  EXPECT_EQ(kept->ordering, "hetero");
  EXPECT_FALSE(ChoiceFor({"lottery", ""}).ok());
}

TEST(EngineChoice, EveryNameTheConfigurationAcceptsIsRegistered) {
  ScorerRegistry scorers;
  RegisterBuiltinScorers(scorers);
  std::vector<std::string> registered = scorers.Names();
  std::vector<std::string> accepted(BuiltinScorerNames().begin(), BuiltinScorerNames().end());
  std::sort(registered.begin(), registered.end());
  std::sort(accepted.begin(), accepted.end());
  EXPECT_EQ(registered, accepted);
  OrderingRegistry orderings;
  RegisterBuiltinOrderings(orderings);
  for (const SchedulingPolicy& p : SchedulingPolicies())
    EXPECT_TRUE(orderings.Create(std::string(p.ordering)).ok()) << p.name;
}

// One node of 8 G1 and one of 2; tenants a and b. first-fit takes the first node with room
// (the big one), best-fit the one it leaves least free (the small one).
std::string TwoNodeFleet(const std::string& a_scorer, const std::string& b_scorer) {
  return testing::G1Fleet(
      "      - {name: big, count: 1, cpu: 64, memory: 512Gi, devices: {model: G1, count: 8}}\n"
      "      - {name: small, count: 1, cpu: 64, memory: 512Gi, devices: {model: G1, count: 2}}\n",
      "tenants:\n  - name: a\n  - name: b\n  - name: c\npolicies:\n"
      "  - {name: a-scorer, kind: weights, match: {tenants: [a]}, placement: " +
          a_scorer +
          "}\n"
          "  - {name: b-scorer, kind: weights, match: {tenants: [b]}, placement: " +
          b_scorer + "}\n");
}

// Where each tenant's one-device job lands under the engine MakeEngineCore builds.
std::map<std::string, std::string> NodeOfEachTenant(const std::string& fleet) {
  auto spec = std::make_shared<const Spec>(testing::LoadFleet(fleet));
  ScorerRegistry scorers;
  RegisterBuiltinScorers(scorers);
  OrderingRegistry orderings;
  RegisterBuiltinOrderings(orderings);
  ManualClock clock(0);
  SeededRng rng(1);
  MemoryStore store;
  testing::ScriptedBackend backend;
  EngineCore core;
  Status made =
      MakeEngineCore(core, spec, EngineChoice{}, scorers, orderings, store, backend, clock, rng, 0);
  EXPECT_TRUE(made.ok()) << made.ToString();
  if (!made.ok()) return {};
  std::map<std::string, JobId> ids;
  for (const char* tenant : {"a", "b", "c"}) {
    Job job = testing::MakeJob(*spec, std::string("job-") + tenant, 1, 3600 * 1000);
    job.tenant = *spec->FindTenant(tenant);
    ids[tenant] = core.engine->Submit(job, 0);
  }
  DriveUntil(*core.engine, clock, 0);
  std::map<std::string, std::string> out;
  for (const auto& [tenant, id] : ids) {
    const JobRecord& j = core.engine->job(id);
    out[tenant] = j.placements.empty() ? "" : core.engine->cell().node_name(j.placements[0].node);
  }
  return out;
}

TEST(EngineChoice, AWeightsRulesScorerPlacesTheJobsItMatches) {
  std::map<std::string, std::string> placed =
      NodeOfEachTenant(TwoNodeFleet("first-fit", "best-fit"));
  EXPECT_EQ(placed["a"], "c-big-0000");
  EXPECT_EQ(placed["b"], "c-small-0000");
  EXPECT_FALSE(placed["c"].empty());  // no rule: the scheduler's scorer places it
  // The other way round, the other nodes: the rule decides, not the order of submission.
  placed = NodeOfEachTenant(TwoNodeFleet("best-fit", "first-fit"));
  EXPECT_EQ(placed["a"], "c-small-0000");
  EXPECT_EQ(placed["b"], "c-big-0000");
}

}  // namespace
}  // namespace tessera
