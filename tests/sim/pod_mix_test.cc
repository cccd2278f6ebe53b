// Resampling a pod list into another mix (sim/pod_mix.h): the share asked for is what comes
// out, the rest of the list is kept, names stay unique, the draw is reproducible, and a bad
// mix is an error that names what is wrong.
#include "sim/pod_mix.h"

#include <gtest/gtest.h>

#include <set>

namespace tessera {
namespace {

std::vector<TracePod> Pods() {
  std::vector<TracePod> pods;
  auto add = [&](const std::string& name, Milli cpu, int32_t gpus, Milli milli) {
    TracePod p;
    p.name = name;
    p.cpu = cpu;
    p.memory = 1024;
    p.num_gpu = gpus;
    p.gpu_milli = milli;
    pods.push_back(p);
  };
  for (int i = 0; i < 60; ++i)
    add("whole-" + std::to_string(i), 8000, 1, 1000);
  for (int i = 0; i < 30; ++i)
    add("share-" + std::to_string(i), 4000, 1, 500);
  for (int i = 0; i < 10; ++i)
    add("multi-" + std::to_string(i), 32000, 4, 1000);
  for (int i = 0; i < 20; ++i)
    add("cpu-" + std::to_string(i), 2000 + 100 * i, 0, 0);
  return pods;
}

Spec MixFleet() {
  Spec s;
  for (const char* name : {"T4", "G2"}) {
    DeviceModel m;
    m.name = name;
    s.device_models.push_back(m);
  }
  for (int i = 0; i < 4; ++i) {
    Node n;
    n.name = "n" + std::to_string(i);
    n.devices.assign(i == 0 ? 2 : 6, Device{DeviceModelId(i == 0 ? 0u : 1u), 0});
    s.nodes.push_back(n);
  }
  return s;
}

struct Counts {
  size_t gpu = 0, sharing = 0, multi = 0, pinned = 0, cpu_only = 0;
  Milli cpu_only_cpu = 0;
};

Counts Count(const std::vector<TracePod>& pods) {
  Counts c;
  for (const TracePod& p : pods) {
    if (p.num_gpu == 0) {
      ++c.cpu_only;
      c.cpu_only_cpu += p.cpu;
      continue;
    }
    ++c.gpu;
    c.sharing += p.num_gpu == 1 && p.gpu_milli < 1000;
    c.multi += p.num_gpu > 1;
    c.pinned += !p.spec.empty();
  }
  return c;
}

std::vector<TracePod> Resample(const std::string& text, uint64_t seed = 1) {
  auto mix = ParsePodMix(text);
  EXPECT_TRUE(mix.ok()) << mix.status().ToString();
  auto pods = ResamplePods(Pods(), *mix, MixFleet(), seed);
  EXPECT_TRUE(pods.ok()) << pods.status().ToString();
  std::set<std::string> names;
  for (const TracePod& p : *pods)
    EXPECT_TRUE(names.insert(p.name).second) << "a name twice: " << p.name;
  return *pods;
}

TEST(PodMix, EachKindReachesItsShareAndKeepsTheRest) {
  Counts base = Count(Pods());
  Counts share = Count(Resample("gpushare=0.8"));
  EXPECT_EQ(share.gpu, base.gpu);
  EXPECT_EQ(share.sharing, 80u);
  EXPECT_EQ(share.cpu_only_cpu, base.cpu_only_cpu);

  Counts multi = Count(Resample("multigpu=0.5"));
  EXPECT_EQ(multi.gpu, base.gpu);
  EXPECT_EQ(multi.multi, 50u);

  Counts pinned = Count(Resample("gpuspec=0.33"));
  EXPECT_EQ(pinned.pinned, 33u);
  EXPECT_EQ(pinned.sharing, base.sharing);

  Counts cpu = Count(Resample("cpu=2.5"));
  EXPECT_EQ(cpu.gpu, base.gpu);
  EXPECT_GE(cpu.cpu_only_cpu, base.cpu_only_cpu * 5 / 2);
  EXPECT_LT(cpu.cpu_only_cpu, base.cpu_only_cpu * 5 / 2 + 4000);  // one pod at most over
  EXPECT_EQ(Count(Resample("cpu=0")).cpu_only, 0u);

  Counts both = Count(Resample("gpushare=1,cpu=2"));
  EXPECT_EQ(both.sharing, base.gpu);
  EXPECT_GE(both.cpu_only_cpu, 2 * base.cpu_only_cpu);
}

TEST(PodMix, PinnedModelsFollowTheFleetsGpuCounts) {
  std::vector<TracePod> pods = Resample("gpuspec=1", 7);
  size_t t4 = 0, g2 = 0;
  for (const TracePod& p : pods) {
    if (p.num_gpu == 0) continue;
    ASSERT_EQ(p.spec.size(), 1u);
    (p.spec[0] == "T4" ? t4 : g2) += 1;
  }
  // 2 of the fleet's 20 GPUs are T4: about a tenth of 100 pods.
  EXPECT_GT(g2, 75u);
  EXPECT_GT(t4, 2u);
}

TEST(PodMix, TheSameMixAndSeedGiveTheSameList) {
  std::vector<TracePod> a = Resample("gpushare=0.8,cpu=2", 3);
  std::vector<TracePod> b = Resample("gpushare=0.8,cpu=2", 3);
  std::vector<TracePod> c = Resample("gpushare=0.8,cpu=2", 4);
  auto names = [](const std::vector<TracePod>& v) {
    std::vector<std::string> n;
    for (const TracePod& p : v)
      n.push_back(p.name);
    return n;
  };
  EXPECT_EQ(names(a), names(b));
  EXPECT_NE(names(a), names(c));
}

TEST(PodMix, BadMixesAreNamed) {
  auto error = [](const std::string& text) {
    auto r = ParsePodMix(text);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(error("gpushare=0.8,cpu=2").find("ok"), 0u);
  EXPECT_NE(error("gpushar=0.8").find("\"gpushar\" is not a kind of pod"), std::string::npos);
  EXPECT_NE(error("gpushare=1.5").find("gpushare: expected a number from 0 to 1"),
            std::string::npos);
  EXPECT_NE(error("cpu=-1").find("cpu: expected a number from 0 to 10"), std::string::npos);
  EXPECT_NE(error("gpushare").find("expected KIND=VALUE"), std::string::npos);
  EXPECT_NE(error("cpu=1,cpu=2").find("cpu is given twice"), std::string::npos);
  EXPECT_NE(error("").find("expected KIND=VALUE"), std::string::npos);
  // A share the list cannot supply.
  std::vector<TracePod> no_sharing;
  for (const TracePod& p : Pods())
    if (p.gpu_milli == 1000 || p.num_gpu == 0) no_sharing.push_back(p);
  auto r = ResamplePods(no_sharing, *ParsePodMix("gpushare=0.5"), MixFleet(), 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no pods to draw that share from"), std::string::npos);
}

}  // namespace
}  // namespace tessera
