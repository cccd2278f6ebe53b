// The FGD experiment: its curve arithmetic (Python/pandas semantics), the arrival order, and
// small runs whose outcome can be worked out by hand.
#include "sim/fgd_experiment.h"

#include <gtest/gtest.h>

#include <cmath>

#include "config/fleet_import.h"
#include "sched/policy/builtin.h"

namespace tessera {
namespace {

TEST(Curves, PythonRoundingAndPandasMean) {
  EXPECT_EQ(PyRound(2.5, 0), 2);  // ties to even
  EXPECT_EQ(PyRound(3.5, 0), 4);
  EXPECT_EQ(PyRound(0.125, 2), 0.12);  // exactly representable tie -> even
  EXPECT_EQ(PyRound(95.23499999, 2), 95.23);
  EXPECT_EQ(PyRound(1.005, 2), 1.0);  // 1.005 is 1.00499999999999989... in binary
  std::vector<double> v(1000, 0.1);
  EXPECT_DOUBLE_EQ(PandasMean(v), 0.1);
  EXPECT_TRUE(std::isnan(PandasMean({})));
}

TEST(Curves, ExactBucketsAndTheNeighbourFallback) {
  // Records at 0%, 0%, 2% and 5%: point 1 has no exact record and takes 0..2; point 3 takes
  // 2..4; 130 has none within reach.
  std::vector<double> x = {0, 0, 2, 5};
  std::vector<double> y = {1, 2, 3, 10};
  std::vector<double> c = DiscreteCurve(x, y, true);
  EXPECT_EQ(c[0], 1.5);
  EXPECT_EQ(c[1], 2.0);
  EXPECT_EQ(c[2], 3.0);
  EXPECT_EQ(c[3], 3.0);
  EXPECT_EQ(c[5], 10.0);
  EXPECT_TRUE(std::isnan(c[130]));
}

// Two nodes of 2 GPUs (model A) and 8 CPUs; pods named so their sorted order is known.
FgdExperiment Small(std::vector<TracePod> pods) {
  auto table = CsvTable::Parse("nodes.csv",
                               "sn,cpu_milli,memory_mib,gpu,model\n"
                               "n0,8000,32768,2,A\n"
                               "n1,8000,32768,2,A\n",
                               NodeListCsvOptions(NodeListFormat::kOpenb));
  EXPECT_TRUE(table.ok());
  auto fleet = ImportNodeList(NodeListFormat::kOpenb, *table, {});
  EXPECT_TRUE(fleet.ok()) << fleet.status().ToString();
  auto e = FgdExperiment::FromData(std::move(fleet->spec), std::move(pods));
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return std::move(*e);
}

TracePod Pod(std::string name, Milli cpu, int32_t gpus, Milli milli,
             std::vector<std::string> spec = {}) {
  TracePod p;
  p.name = std::move(name);
  p.cpu = cpu;
  p.memory = 1024;
  p.num_gpu = gpus;
  p.gpu_milli = milli;
  p.spec = std::move(spec);
  return p;
}

TEST(FgdExperiment, TuneResamplesUpToTheTargetAndOrderIsDeterministic) {
  // Capacity 4 GPUs = 4000 milli; tune 1.3 -> 5200. The pods ask 1000 + 500 = 1500.
  FgdExperiment e = Small({Pod("p0", 1000, 1, 1000), Pod("p1", 1000, 1, 500)});
  SeededRng a(42), b(42);
  std::vector<uint32_t> order = e.ArrivalOrder(a, 1.3);
  EXPECT_EQ(order, e.ArrivalOrder(b, 1.3));
  int64_t requested = 0;
  for (uint32_t i : order)
    requested += e.pods()[i].gpu_milli;
  EXPECT_LE(requested, 5200);
  EXPECT_GT(requested, 5200 - 1000);  // stops only when the next draw would overshoot
  EXPECT_EQ(order.size() >= 2, true);
}

TEST(FgdExperiment, TypicalWorkloadCoversNinetyFivePercent) {
  std::vector<TracePod> pods;
  for (int i = 0; i < 90; ++i)
    pods.push_back(Pod("a" + std::to_string(100 + i), 2000, 1, 500));
  for (int i = 0; i < 8; ++i)
    pods.push_back(Pod("b" + std::to_string(100 + i), 4000, 1, 1000));
  for (int i = 0; i < 2; ++i)
    pods.push_back(Pod("c" + std::to_string(100 + i), 1000, 0, 0));
  FgdExperiment e = Small(pods);
  // 90% + 8% = 98% >= 95%: two typical shapes, weights renormalised over 98 pods.
  ASSERT_EQ(e.workload().tasks().size(), 2u);
  EXPECT_NEAR(e.workload().tasks()[0].weight, 90.0 / 98.0, 1e-12);
  EXPECT_EQ(e.workload().tasks()[0].milli, 500);
  EXPECT_EQ(e.workload().tasks()[1].milli, 1000);
}

TEST(FgdExperiment, RunsRecordEveryPodAndNeverOverAllocate) {
  std::vector<TracePod> pods;
  for (int i = 0; i < 6; ++i)
    pods.push_back(Pod("w" + std::to_string(i), 2000, 1, 1000));
  for (int i = 0; i < 6; ++i)
    pods.push_back(Pod("s" + std::to_string(i), 1000, 1, 400));
  FgdExperiment e = Small(pods);
  ScorerRegistry registry;
  RegisterBuiltinScorers(registry);
  for (const std::string& name : registry.Names()) {
    ScorerContext ctx{&e.workload()};
    auto scorer = registry.Create(name, ctx);
    ASSERT_TRUE(scorer.ok()) << name;
    FgdRun run = e.Run(**scorer, 7, 1.3);
    int64_t used = 0;
    std::vector<std::vector<Milli>> per_device(2, std::vector<Milli>(2, 0));
    for (const FgdPodOutcome& o : run.outcomes) {
      if (!o.node) continue;
      for (const DeviceUse& u : o.devices)
        per_device[*o.node][u.index] += u.milli;
      used += static_cast<int64_t>(o.devices.size()) * e.pods()[o.pod].gpu_milli;
    }
    for (const auto& node : per_device) {
      for (Milli m : node)
        EXPECT_LE(m, 1000) << name;
    }
    EXPECT_LE(used, 4000) << name;
    EXPECT_GT(run.failed, 0u) << name;  // 130% of capacity arrives
    EXPECT_EQ(run.allo.size(), static_cast<size_t>(kFgdCurvePoints));
    // Same seed, same run.
    auto again = registry.Create(name, ctx);
    FgdRun second = e.Run(**again, 7, 1.3);
    ASSERT_EQ(second.outcomes.size(), run.outcomes.size());
    for (size_t i = 0; i < run.outcomes.size(); ++i) {
      EXPECT_EQ(second.outcomes[i].node, run.outcomes[i].node) << name;
    }
  }
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(OpenbPods, TheFiveColumnVariantLoadsAndBadRowsNameTheirLine) {
  auto pods = ParseOpenbPods("multigpu20.csv",
                             "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                             "p0,12000,16384,1,1000\n"
                             "p1,8000,1024,2,1000\n");
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  EXPECT_EQ(pods->size(), 2u);
  EXPECT_TRUE((*pods)[1].spec.empty());
  EXPECT_FALSE((*pods)[1].creation.has_value());
  auto full = ParseOpenbPods("full.csv",
                             "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                             "creation_time,deletion_time,scheduled_time\n"
                             "p0,1000,1024,1,500,V100M16|V100M32,LS,Running,5,10,\n");
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ((*full)[0].spec, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_EQ((*full)[0].creation, 5000);
  EXPECT_FALSE((*full)[0].scheduled.has_value());
  auto bad = ParseOpenbPods("bad.csv",
                            "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                            "p0,1000,1024,1,500\n"
                            "p1,-5,1024,1,500\n"
                            "p2,1000,lots,1,500\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.csv:3: column cpu_milli"), std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("bad.csv:4: column memory_mib"), std::string::npos);
  EXPECT_FALSE(ParseOpenbPods("missing.csv", "name,cpu_milli\np0,1\n").ok());
}

TEST(OpenbPods, AGpuSpecNamingNoModelOfTheNodeListIsAnError) {
  const std::string text =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
      "p0,1000,1024,1,500,V100M16|V100M32\n"
      "p1,1000,1024,1,500,V100M61\n"
      "p2,1000,1024,1,500,\n";
  // Without a node list to check against, any name is kept.
  ASSERT_TRUE(ParseOpenbPods("spec.csv", text).ok());
  std::vector<std::string> models = {"A10", "V100M16", "V100M32"};
  auto bad = ParseOpenbPods("spec.csv", text, &models);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "spec.csv:3: column gpu_spec: \"V100M61\" is not a GPU model of the node list "
                "(A10, V100M16, V100M32); did you mean \"V100M16\"?"),
            std::string::npos)
      << bad.status().message();
}

TEST(OpenbPods, SharesThatContradictTheGpuCountAndRepeatedNamesAreErrors) {
  auto bad = ParseOpenbPods("shares.csv",
                            "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
                            "p0,1000,1024,1,2000\n"
                            "p1,1000,1024,0,500\n"
                            "p2,1000,1024,2,500\n"
                            "p3,1000,1024,1,0\n"
                            "p4,1000,1024,1,500\n"
                            "p4,1000,1024,1,250\n");
  ASSERT_FALSE(bad.ok());
  const std::string& m = bad.status().message();
  EXPECT_NE(m.find("shares.csv:2: column gpu_milli"), std::string::npos) << m;
  EXPECT_NE(m.find("shares.csv:3: column gpu_milli: a pod without GPUs (num_gpu 0) asks for no "
                   "share, got 500"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("shares.csv:4: column gpu_milli: a pod with 2 GPUs takes them whole (1000), "
                   "got 500"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("shares.csv:5: column gpu_milli: a pod with a GPU asks for a share"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("shares.csv:7: column name: pod \"p4\" is already on line 6"), std::string::npos)
      << m;
}

}  // namespace
}  // namespace tessera
