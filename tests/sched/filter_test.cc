// The placer's filter chain on the base fleet (tests/testutil/spec_fixture.cc): the default
// filters in order, and a filter added by a caller taking part in placement and explanations
// without any edit to the placer.
#include "sched/filter.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "sched/placer.h"
#include "sched/policy/builtin.h"
#include "testutil/g1_fleet.h"
#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

// Keeps only nodes with no task on them (class-safe: the task kinds and free shares are part
// of the class key).
class EmptyNodesOnly final : public NodeFilter {
 public:
  std::string_view name() const override { return "empty-nodes-only"; }
  Reason reason() const override { return Reason::kInsufficientDevices; }
  bool Keep(const CellState& cell, uint32_t node, const TaskShape&) const override {
    for (const DeviceSlot& d : cell.devices(node))
      if (d.free != 1000) return false;
    return cell.node(node).cpu_free == cell.node(node).cpu_total;
  }
};

TEST(FilterChain, DefaultFiltersRunInTheDocumentedOrder) {
  std::vector<std::string_view> names = DefaultFilters().names();
  EXPECT_EQ(names, (std::vector<std::string_view>{"schedulable", "device-model", "device-memory",
                                                  "cpu", "memory", "free-devices",
                                                  "cpu-nodes-first", "keep-devices-fed"}));
}

// The guards of device nodes (TaskShape::Guard) on a node of 8 G1 with 64 CPUs and 512Gi (one
// device's share: 8 CPUs, 64Gi) and a node without devices.
TEST(FilterChain, GuardsKeepCpuWorkOffDeviceNodesAndTheirFreeDevicesFed) {
  LoadResult r =
      LoadSpecTexts({{"fleet.yaml", testing::G1Fleet("      - {name: g, count: 1, cpu: 64, memory: "
                                                     "512Gi, devices: {model: G1, count: 8}}\n"
                                                     "      - {name: cpu, count: 1, cpu: 64, "
                                                     "memory: 512Gi}\n",
                                                     "")}});
  ASSERT_TRUE(r.spec) << r.diagnostics.ToString();
  CellState cell = *CellState::FromSpec(*r.spec);
  const uint32_t gpu_node = 0, cpu_node = 1;
  ASSERT_GT(cell.node(gpu_node).device_count, 0);
  ASSERT_EQ(cell.node(cpu_node).device_count, 0);
  const FilterChain& chain = DefaultFilters();
  auto task = [](Milli cpu, int32_t devices, TaskShape::Guard guard) {
    TaskShape s;
    s.cpu = s.cpu_for_score = cpu;
    s.memory = 1024;
    s.count = devices;
    s.milli = devices > 0 ? 1000 : 0;
    s.guard = guard;
    return s;
  };
  // CPU-only work under kCpuNodesOnly: the CPU node only.
  EXPECT_EQ(chain.Check(cell, gpu_node, task(4000, 0, TaskShape::kCpuNodesOnly)),
            Reason::kCpuNodesFirst);
  EXPECT_EQ(chain.Check(cell, cpu_node, task(4000, 0, TaskShape::kCpuNodesOnly)), std::nullopt);
  // Under kKeepDevicesFed it may use the device node while 8 CPUs stay for its free devices.
  EXPECT_EQ(chain.Check(cell, gpu_node, task(56000, 0, TaskShape::kKeepDevicesFed)), std::nullopt);
  EXPECT_EQ(chain.Check(cell, gpu_node, task(57000, 0, TaskShape::kKeepDevicesFed)),
            Reason::kKeepsDevicesFed);
  // A device task that leaves devices free must leave them their share too; one that takes
  // every device may take every CPU.
  EXPECT_EQ(chain.Check(cell, gpu_node, task(60000, 4, TaskShape::kKeepDevicesFed)),
            Reason::kKeepsDevicesFed);
  EXPECT_EQ(chain.Check(cell, gpu_node, task(64000, 8, TaskShape::kKeepDevicesFed)), std::nullopt);
  // Unguarded, anything that fits.
  EXPECT_EQ(chain.Check(cell, gpu_node, task(64000, 0, TaskShape::kNoGuard)), std::nullopt);
  EXPECT_EQ(chain.Check(cell, gpu_node, task(60000, 4, TaskShape::kNoGuard)), std::nullopt);
}

TEST(FilterChain, AnAddedFilterSteersPlacementAndNamesItsReason) {
  LoadResult r = testing::LoadWithBase("");
  ASSERT_TRUE(r.spec);
  CellState cell = *CellState::FromSpec(*r.spec);
  ShapeTable shapes;
  TaskShape s;
  s.cpu = s.cpu_for_score = 1000;
  s.count = 1;
  s.milli = 500;
  s.models = ModelMask{1} << r.spec->FindModel("H800")->value();
  shapes.Intern(s);

  // Best-fit packs a second half-GPU task next to the first one.
  auto scorer = policy::MakeBestFit();
  Placer plain(*scorer);
  PlaceResult first = plain.Place(cell, s);
  ASSERT_EQ(first.outcome, PlaceOutcome::kPlaced);
  ASSERT_TRUE(cell.Commit(first.placement).ok());
  PlaceResult packed = plain.Place(cell, s);
  ASSERT_EQ(packed.outcome, PlaceOutcome::kPlaced);
  EXPECT_EQ(packed.placement.node, first.placement.node);

  // With the extra filter the used node is dropped, for the filter's own reason.
  FilterChain chain = MakeDefaultFilters();
  chain.Add(std::make_unique<EmptyNodesOnly>());
  Placer steered(*scorer, chain);
  steered.set_explain(true);
  PlaceResult spread = steered.Place(cell, s);
  ASSERT_EQ(spread.outcome, PlaceOutcome::kPlaced);
  EXPECT_NE(spread.placement.node, first.placement.node);
  ASSERT_FALSE(spread.why.dropped.empty());
  bool counted = false;
  for (const auto& [reason, nodes] : spread.why.dropped)
    counted = counted || (reason == Reason::kInsufficientDevices && nodes >= 1);
  EXPECT_TRUE(counted) << spread.why.ToString();
}

}  // namespace
}  // namespace tessera
