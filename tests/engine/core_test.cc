// The scheduler a configuration names, as the daemon, the simulator and `tessera place` build
// it: every policy and scorer name the configuration accepts is one the registries have.
#include "engine/core.h"

#include <gtest/gtest.h>

#include <algorithm>

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

}  // namespace
}  // namespace tessera
