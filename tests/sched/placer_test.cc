// Placement: filters with reasons, scorers on hand-worked nodes, selection and ties, the
// equivalence classes, and the over-commit property on random cells.
#include "sched/placer.h"

#include <gtest/gtest.h>

#include <functional>

#include "config/loader.h"
#include "sched/fragmentation.h"
#include "sched/policy/builtin.h"
#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

// Two G (16Gi) nodes with 4 devices, one H (80Gi) node with 8, one CPU-only node.
const char* kCell = R"(
deviceModels:
  - {name: G, kind: gpu, memory: 16Gi}
  - {name: H, kind: gpu, memory: 80Gi}
regions: [{name: r}]
clusters:
  - name: c
    region: r
    nodes:
      - {name: g1, cpu: 32, memory: 128Gi, devices: {model: G, count: 4}}
      - {name: g2, cpu: 32, memory: 128Gi, devices: {model: G, count: 4}}
      - {name: h1, cpu: 64, memory: 512Gi, devices: {model: H, count: 8}}
      - {name: cpu1, cpu: 16, memory: 64Gi}
)";

struct PlacerFixture {
  Spec spec;
  CellState cell;
  ShapeTable shapes;
};

PlacerFixture LoadPlacer() {
  LoadResult r = LoadSpecTexts({{"cell.yaml", kCell}});
  EXPECT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  auto cell = CellState::FromSpec(*r.spec);
  EXPECT_TRUE(cell.ok());
  return {*r.spec, std::move(*cell), {}};
}

TaskShape Shape(PlacerFixture& f, Milli cpu, MiB mem, int32_t count, Milli milli,
                ModelMask models = kAnyAccelerator) {
  TaskShape s;
  s.cpu = s.cpu_for_score = cpu;
  s.memory = mem;
  s.count = count;
  s.milli = count ? milli : 0;
  s.models = models;
  f.shapes.Intern(s);
  return s;
}

TEST(CellState, IdenticalNodesShareAClassUntilOneChanges) {
  PlacerFixture f = LoadPlacer();
  EXPECT_EQ(f.cell.node_count(), 4u);
  EXPECT_EQ(f.cell.live_classes(), 3u);  // g1 and g2 are identical
  Placement p;
  p.node = 0;
  p.node_version = f.cell.node(0).version;
  p.cpu = 1000;
  p.devices = {{0, 500}};
  ASSERT_TRUE(f.cell.Commit(p).ok());
  EXPECT_EQ(f.cell.live_classes(), 4u);
  // A proposal computed against the old version is stale now.
  Status stale = f.cell.Commit(p);
  EXPECT_EQ(stale.code(), StatusCode::kFailedPrecondition);
  // Releasing it makes g1 identical to g2 again.
  f.cell.Release(p);
  EXPECT_EQ(f.cell.live_classes(), 3u);
  EXPECT_EQ(f.cell.devices(0)[0].free, 1000);
}

TEST(CellState, CommitRejectsOverCommitWithoutChangingState) {
  PlacerFixture f = LoadPlacer();
  Placement p;
  p.node = 3;
  p.node_version = f.cell.node(3).version;
  p.cpu = 17000;
  EXPECT_EQ(f.cell.Commit(p).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(f.cell.node(3).cpu_free, 16000);
}

TEST(Filter, ReasonsAreCountedPerNodeInFilterOrder) {
  PlacerFixture f = LoadPlacer();
  auto fgd = policy::MakeFirstFit();
  Placer placer(*fgd);
  placer.set_explain(true);
  // 8 whole devices of model H with 100 CPUs: h1 lacks CPU, the G nodes have the wrong model,
  // the CPU node has no devices.
  ModelMask h = ModelMask{1} << f.spec.FindModel("H")->value();
  PlaceResult r = placer.Place(f.cell, Shape(f, 100000, 1024, 8, 1000, h));
  EXPECT_EQ(r.outcome, PlaceOutcome::kInfeasible);
  EXPECT_EQ(r.why.ToString(), "0/4 nodes fit: 3 device model not allowed, 1 insufficient CPU");
  // 5 whole devices of any model: only h1 has them.
  r = placer.Place(f.cell, Shape(f, 1000, 1024, 5, 1000));
  ASSERT_EQ(r.outcome, PlaceOutcome::kPlaced);
  EXPECT_EQ(f.cell.node_name(r.placement.node), "h1");
  EXPECT_EQ(r.why.ToString(),
            "1/4 nodes fit: 2 insufficient free devices, 1 device model not allowed");
}

TEST(Filter, PendingWhenOnlyTheCurrentStateIsFull) {
  PlacerFixture f = LoadPlacer();
  auto ff = policy::MakeFirstFit();
  Placer placer(*ff);
  TaskShape eight = Shape(f, 1000, 1024, 8, 1000);
  PlaceResult first = placer.Place(f.cell, eight);
  ASSERT_EQ(first.outcome, PlaceOutcome::kPlaced);
  ASSERT_TRUE(f.cell.Commit(first.placement).ok());
  PlaceResult second = placer.Place(f.cell, eight);
  EXPECT_EQ(second.outcome, PlaceOutcome::kPending);  // fits once h1 is released
  TaskShape huge_memory = Shape(f, 1000, 1024 * 1024, 0, 0);
  EXPECT_EQ(placer.Place(f.cell, huge_memory).outcome, PlaceOutcome::kInfeasible);
}

TEST(Scorers, HandWorkedScoresOnOneNode) {
  PlacerFixture f = LoadPlacer();
  // g1 after a 0.5 share on device 0 and 8 CPUs: 24 CPUs free, devices {500, 1000, 1000, 1000}.
  Placement p{0, f.cell.node(0).version, 8000, 0, 1, {{0, 500}}, {}};
  ASSERT_TRUE(f.cell.Commit(p).ok());
  TaskShape share = Shape(f, 4000, 0, 1, 300);
  std::vector<DeviceUse> pick;
  // Cell scale: max CPU 64 cores, max device capacity 8000 milli.
  // best-fit: s = (24-4)/64*0.5 + (3500-300)/8000*0.5 = 0.15625 + 0.2 -> int((1-0.35625)*100) = 64
  EXPECT_EQ(policy::MakeBestFit()->Score(f.cell, 0, share, &pick), 64);
  ASSERT_EQ(pick.size(), 1u);
  EXPECT_EQ(pick[0].index, 0);  // the fullest device the share fits on
  // dot-product: 1 - ((24/64)(4/64) + (3500/8000)(300/8000))/2 = 1 - (0.0234375+0.01640625)/2
  //   = 0.98007... -> 98
  EXPECT_EQ(policy::MakeDotProduct()->Score(f.cell, 0, share, &pick), 98);
  // gpu-packing: not all devices free; device 0 (500) fits the share and is partial:
  //   case 1: max(100 - floor(500*100/1000)/10, 50) = max(100 - 5, 50) = 95
  EXPECT_EQ(policy::MakeGpuPacking()->Score(f.cell, 0, share, &pick), 95);
  // gpu-clustering: base = floor(25 * (8000 - 3500) / 8000) = 14; the node holds one share
  //   task and this is a share: +75 -> 89
  EXPECT_EQ(policy::MakeGpuClustering()->Score(f.cell, 0, share, &pick), 89);
  TaskShape whole = Shape(f, 4000, 0, 1, 1000);
  //   a 1-device task on a node holding only shares: +0 -> 14
  EXPECT_EQ(policy::MakeGpuClustering()->Score(f.cell, 0, whole, &pick), 14);
  // gpu-packing case 2 for a whole device: ffuse = 1 -> max(50 - 1, 33) = 49; on the empty
  // g2 case 3: max(33 - 4, 4) = 29.
  EXPECT_EQ(policy::MakeGpuPacking()->Score(f.cell, 0, whole, &pick), 49);
  EXPECT_EQ(policy::MakeGpuPacking()->Score(f.cell, 1, whole, &pick), 29);
  EXPECT_EQ(pick.size(), 1u);
  EXPECT_EQ(pick[0].index, 0);
}

TEST(Scorers, FgdPrefersTheDeviceThatFragmentsLeast) {
  PlacerFixture f = LoadPlacer();
  // Typical tasks: half want 0.5 of a device, half want a whole device (2 CPUs each).
  TargetWorkload w({{2000, 500, 1, kAnyAccelerator, 0.5}, {2000, 1000, 1, kAnyAccelerator, 0.5}});
  // g1 devices {700, 1000, 1000, 1000}: a 0.2 share on device 0 leaves 500, usable by the half
  // tasks; on a whole device it would break a whole device into 800.
  Placement p{0, f.cell.node(0).version, 0, 0, 1, {{0, 300}}, {}};
  ASSERT_TRUE(f.cell.Commit(p).ok());
  double before = w.Fragmentation(32000, std::vector<uint16_t>{700, 1000, 1000, 1000}, 1);
  // 700 fits the 0.5 task (not fragment for it) but not the whole one: 0.5 x 700 = 350.
  EXPECT_DOUBLE_EQ(before, 350);
  TaskShape share = Shape(f, 1000, 0, 1, 200);
  std::vector<DeviceUse> pick;
  auto fgd = policy::MakeFgd(w);
  double score = fgd->Score(f.cell, 0, share, &pick);
  ASSERT_EQ(pick.size(), 1u);
  EXPECT_EQ(pick[0].index, 0);
  // After: {500, 1000, 1000, 1000}: fragment 0.5 x 500 = 250, a decrease of 100 milli:
  // int(sigmoid(0.1) x 100) = 52.
  EXPECT_EQ(score, 52);
}

TEST(Select, TiesGoToTheLowestRank) {
  PlacerFixture f = LoadPlacer();
  auto ff = policy::MakeFirstFit();
  Placer placer(*ff);
  TaskShape one = Shape(f, 1000, 1024, 1, 1000, ModelMask{1} << f.spec.FindModel("G")->value());
  EXPECT_EQ(f.cell.node_name(placer.Place(f.cell, one).placement.node), "g1");
  f.cell.SetRanks({5, 1, 2, 3});
  EXPECT_EQ(f.cell.node_name(placer.Place(f.cell, one).placement.node), "g2");
}

TEST(Select, RandomIsUniformOverFeasibleNodesAndDeterministic) {
  PlacerFixture f = LoadPlacer();
  auto random = policy::MakeRandom();
  Placer placer(*random);
  TaskShape cpu = Shape(f, 1000, 1024, 0, 0);
  std::map<std::string, int> hits;
  SeededRng rng(9);
  for (int i = 0; i < 4000; ++i)
    hits[f.cell.node_name(placer.Place(f.cell, cpu, &rng).placement.node)]++;
  ASSERT_EQ(hits.size(), 4u);
  for (const auto& [name, n] : hits)
    EXPECT_NEAR(n, 1000, 150) << name;
  SeededRng a(1), b(1);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(placer.Place(f.cell, cpu, &a).placement.node,
              placer.Place(f.cell, cpu, &b).placement.node);
  }
}

// A random fleet of `min_nodes` to `min_nodes + spread - 1` nodes of two GPU models (A 16Gi,
// B 40Gi); `node` writes the fields after each node's name.
Spec RandomFleet(SeededRng& rng, int min_nodes, int spread,
                 const std::function<std::string(SeededRng&)>& node) {
  std::string yaml =
      "deviceModels: [{name: A, kind: gpu, memory: 16Gi}, {name: B, kind: gpu, memory: 40Gi}]\n"
      "regions: [{name: r}]\nclusters:\n  - name: c\n    region: r\n    nodes:\n";
  int nodes = min_nodes + static_cast<int>(rng.Uniform(static_cast<uint64_t>(spread)));
  for (int i = 0; i < nodes; ++i)
    yaml += "      - {name: n" + std::to_string(i) + node(rng) + "}\n";
  LoadResult r = LoadSpecTexts({{"random.yaml", yaml}});
  EXPECT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  return r.spec ? std::move(*r.spec) : Spec{};
}

// Property: on random cells, committing whatever each policy proposes never over-commits
// CPU, memory or any device share, and never uses a model the task does not accept.
TEST(Property, NoPolicyEverOverCommitsOrUsesADisallowedModel) {
  ScorerRegistry registry;
  RegisterBuiltinScorers(registry);
  TargetWorkload w({{4000, 500, 1, kAnyAccelerator, 0.4},
                    {8000, 1000, 1, kAnyAccelerator, 0.4},
                    {2000, 0, 0, kAnyAccelerator, 0.2}});
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    SeededRng rng(seed);
    Spec spec = RandomFleet(rng, 20, 30, [](SeededRng& g) {
      int devices = static_cast<int>(g.Uniform(9));
      std::string n = ", cpu: " + std::to_string(8 + g.Uniform(120)) +
                      ", memory: " + std::to_string(16 + g.Uniform(500)) + "Gi";
      if (devices) {
        n += ", devices: {model: " + std::string(g.Uniform(2) ? "A" : "B") +
             ", count: " + std::to_string(devices) + "}";
      }
      return n;
    });
    ASSERT_FALSE(HasFailure());
    for (const std::string& name : registry.Names()) {
      ScorerContext ctx{&w};
      auto scorer = registry.Create(name, ctx);
      ASSERT_TRUE(scorer.ok());
      CellState cell = *CellState::FromSpec(spec);
      Placer placer(**scorer);
      ShapeTable shapes;
      SeededRng draws(seed * 100);
      int placed = 0;
      for (int t = 0; t < 400; ++t) {
        TaskShape s;
        s.cpu = s.cpu_for_score = static_cast<Milli>(500 + draws.Uniform(16000));
        s.memory = static_cast<MiB>(draws.Uniform(64 * 1024));
        uint64_t kind = draws.Uniform(4);
        if (kind == 1) {
          s.count = 1;
          s.milli = static_cast<Milli>(100 + draws.Uniform(900));
        } else if (kind >= 2) {
          s.count = 1 + static_cast<int32_t>(draws.Uniform(4));
          s.milli = 1000;
        }
        s.models = draws.Uniform(3) == 0 ? ModelMask{1} : kAnyAccelerator;  // sometimes A only
        shapes.Intern(s);
        PlaceResult pr = placer.Place(cell, s, &draws);
        if (pr.outcome != PlaceOutcome::kPlaced) continue;
        ASSERT_EQ(static_cast<int32_t>(pr.placement.devices.size()), s.cpu_only() ? 0 : s.count)
            << name;
        for (const DeviceUse& u : pr.placement.devices) {
          ASSERT_TRUE(s.accepts(DeviceModelId(cell.devices(pr.placement.node)[u.index].model)))
              << name;
        }
        ASSERT_TRUE(cell.Commit(pr.placement).ok()) << name;
        ++placed;
        for (uint32_t i = 0; i < cell.node_count(); ++i) {
          ASSERT_GE(cell.node(i).cpu_free, 0);
          ASSERT_GE(cell.node(i).mem_free, 0);
          for (const DeviceSlot& d : cell.devices(i))
            ASSERT_LE(d.free, 1000);
        }
      }
      EXPECT_GT(placed, 10) << name;
    }
  }
}

// Property: the placer's two paths agree, and neither is misled by its caches. `tessera place`
// and explain mode scan every class; the engine and the simulator use the per-shape heap kept
// current from the cell's class changes. On random cells, with tasks placed and released at
// random, both choose the node, devices and score that a placer with empty caches chooses,
// for every task of every policy that scores.
TEST(Property, ScanAndIndexChooseTheSamePlacement) {
  ScorerRegistry registry;
  RegisterBuiltinScorers(registry);
  // A fifth of the demand is pinned to model B: tessera's pressure then follows how full B is,
  // cell-wide state that changes the scores of nodes nobody touched (Scorer::Epoch).
  TargetWorkload w({{4000, 300, 1, kAnyAccelerator, 0.3},
                    {6000, 700, 1, kAnyAccelerator, 0.2},
                    {8000, 1000, 2, kAnyAccelerator, 0.3},
                    {2000, 0, 0, kAnyAccelerator, 0.2}},
                   {{ModelMask{2}, 0.2}});
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SeededRng rng(seed);
    // Few distinct node kinds, so classes have many members and ties on score are common.
    Spec spec = RandomFleet(rng, 30, 40, [](SeededRng& g) {
      int kind = static_cast<int>(g.Uniform(4));
      std::string n = ", cpu: " + std::to_string(32 << (kind & 1)) + ", memory: 256Gi";
      if (kind != 3) {
        n += ", devices: {model: " + std::string(kind == 2 ? "B" : "A") +
             ", count: " + std::to_string(kind == 0 ? 4 : 8) + "}";
      }
      return n;
    });
    ASSERT_FALSE(HasFailure());
    for (const std::string& name : registry.Names()) {
      ScorerContext ctx{&w};
      auto scorer = registry.Create(name, ctx);
      ASSERT_TRUE(scorer.ok());
      if ((*scorer)->uniform()) continue;  // random placement has no index
      CellState cell = *CellState::FromSpec(spec);
      Placer scan(**scorer), index(**scorer);
      scan.set_explain(true);  // explain mode always scans
      ShapeTable shapes;
      SeededRng draws(seed * 100);
      std::vector<Placement> running;
      int placed = 0, compared = 0;
      for (int t = 0; t < 600; ++t) {
        if (!running.empty() && draws.Uniform(3) == 0) {
          size_t k = draws.Uniform(running.size());
          cell.Release(running[k]);
          running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
          continue;
        }
        TaskShape s;
        s.cpu = s.cpu_for_score = static_cast<Milli>(1000 * (1 + draws.Uniform(8)));
        s.memory = 1024;
        uint64_t kind = draws.Uniform(4);
        if (kind == 1) {
          s.count = 1;
          s.milli = static_cast<Milli>(100 * (1 + draws.Uniform(9)));
        } else if (kind >= 2) {
          s.count = 1 + static_cast<int32_t>(draws.Uniform(4));
          s.milli = 1000;
        }
        s.models = draws.Uniform(4) == 0 ? ModelMask{2} : kAnyAccelerator;  // sometimes B only
        shapes.Intern(s);
        // A fresh placer caches nothing: the reference both long-lived placers must match.
        Placer fresh(**scorer);
        fresh.set_explain(true);
        PlaceResult want = fresh.Place(cell, s);
        PlaceResult a = scan.Place(cell, s);
        PlaceResult b = index.Place(cell, s);
        ++compared;
        for (const PlaceResult* got : {&a, &b}) {
          const char* path = got == &a ? " (scan)" : " (index)";
          ASSERT_EQ(got->outcome, want.outcome) << name << path << " task " << t;
          if (want.outcome != PlaceOutcome::kPlaced) continue;
          ASSERT_EQ(got->placement.node, want.placement.node) << name << path << " task " << t;
          ASSERT_EQ(got->score, want.score) << name << path << " task " << t;
          ASSERT_EQ(got->placement.devices.size(), want.placement.devices.size()) << name << path;
          for (size_t d = 0; d < want.placement.devices.size(); ++d) {
            ASSERT_EQ(got->placement.devices[d].index, want.placement.devices[d].index) << name;
            ASSERT_EQ(got->placement.devices[d].milli, want.placement.devices[d].milli) << name;
          }
        }
        if (want.outcome != PlaceOutcome::kPlaced) continue;
        ASSERT_TRUE(cell.Commit(b.placement).ok()) << name;
        running.push_back(b.placement);
        ++placed;
      }
      // The run must have filled the cell enough for the paths to face real choices.
      EXPECT_GT(placed, 100) << name;
      EXPECT_LT(placed, compared) << name << ": the cell never filled up";
    }
  }
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Scorers, TesseraCountsTheWasteOfRemnantsByHand) {
  PlacerFixture f = LoadPlacer();
  // The target workload: every task is a 0.5 share with 2 CPUs. Remnants refill only in 0.5
  // steps, so V(r) = r mod 500, and there are no whole-device tasks: V(1000) = 0 (two shares).
  TargetWorkload w({{2000, 500, 1, kAnyAccelerator, 1.0}});
  // g1 devices {800, 1000, 1000, 1000} after a 0.2 share on device 0.
  Placement p{0, f.cell.node(0).version, 0, 0, 1, {{0, 200}}, {}};
  ASSERT_TRUE(f.cell.Commit(p).ok());
  auto tessera = policy::MakeTessera(&w);
  TaskShape share = Shape(f, 1000, 0, 1, 300);
  std::vector<DeviceUse> pick;
  double score = tessera->Score(f.cell, 0, share, &pick);
  // On device 0: 800 -> 500, waste 300 -> 0, a decrease of 300. On a free device:
  // 1000 -> 700, waste 0 -> 200, an increase. Device 0 wins.
  ASSERT_EQ(pick.size(), 1u);
  EXPECT_EQ(pick[0].index, 0);
  auto parts = tessera->Explain(f.cell, 0, share);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].first, "expected-waste-decrease");
  EXPECT_DOUBLE_EQ(parts[0].second, 300);
  // The tie-breaks stay below one milli-device.
  EXPECT_GT(score, 300);
  EXPECT_LT(score, 301);
  // On the untouched g2 the best it can do is a whole device: an increase of 200.
  double elsewhere = tessera->Score(f.cell, 1, share, &pick);
  EXPECT_LT(elsewhere, -199);
  // Without a workload the policy is best-fit: the fuller node wins.
  auto plain = policy::MakeTessera(nullptr);
  EXPECT_GT(plain->Score(f.cell, 0, share, &pick), plain->Score(f.cell, 1, share, &pick));
}

}  // namespace
}  // namespace tessera
