// A service's replicas spread over failure domains (docs/global.md#spreading-a-services-replicas):
// a replica goes first under a leaf switch that hosts none of its siblings, then to a node that
// hosts none, and only then where the placer would put it — but it never waits for the sake of
// spreading. The harness's placer is best-fit, which packs: without the spread, replicas share
// a node.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engine/engine.h"
#include "engine/engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::G1Fleet;
using testing::Harness;
using testing::MakeJob;

using testing::kHour;

// Nodes n0..n3 (4 G1 each), two per leaf switch. Service "packed" has its spread weighed 0.
const std::string kFleet = G1Fleet(
    "      - {name: n, count: 4, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4},\n"
    "         topology: {nodesPerLeaf: 2}}\n",
    R"(tenants:
  - name: t
policies:
  - name: packed-service
    kind: weights
    match: {labels: {tessera.io/service: packed}}
    spread: 0
)");

class ReplicaSpreading : public ::testing::Test {
 protected:
  ReplicaSpreading() : h("fifo", /*backfill=*/false, kFleet) {}

  JobId Replica(const std::string& service, int i, TimeMs at, int32_t devices = 1) {
    Job j = MakeJob(h.spec, service + "/r" + std::to_string(i), 1, 100 * kHour);
    j.job_class = WorkloadClass::kInference;
    j.task_groups.front().request.devices.count = devices;
    if (!service.empty()) j.labels[kServiceLabel] = service;
    JobId id = h.Submit(j, at);
    h.RunUntil(at);
    return id;
  }
  uint32_t NodeOf(JobId id) const { return h.engine->job(id).placements.front().node; }
  int32_t LeafOf(JobId id) const { return h.engine->cell().node(NodeOf(id)).leaf; }

  Harness h;
};

TEST_F(ReplicaSpreading, ReplicasTakeAnotherLeafThenAnotherNode) {
  // Four one-device replicas: the first two under different leaf switches, the next two on the
  // two nodes left — one per node, though best-fit would stack all four on n0.
  JobId a = Replica("web", 0, 0), b = Replica("web", 1, 1), c = Replica("web", 2, 2),
        d = Replica("web", 3, 3);
  EXPECT_NE(LeafOf(a), LeafOf(b));
  EXPECT_EQ(std::set<uint32_t>({NodeOf(a), NodeOf(b), NodeOf(c), NodeOf(d)}).size(), 4u);
  // A fifth has no sibling-free node: it still starts, where the placer chooses.
  JobId e = Replica("web", 4, 4);
  EXPECT_TRUE(h.engine->job(e).running());
}

TEST_F(ReplicaSpreading, WithoutTheLabelOrWithSpreadWeighedZeroTheyPack) {
  // The same four jobs as plain jobs, and as replicas of a service whose weights rule sets
  // spread to 0: best-fit stacks each set on one node.
  std::set<uint32_t> plain, packed;
  for (int i = 0; i < 4; ++i)
    plain.insert(NodeOf(Replica("", i, i)));
  for (int i = 0; i < 4; ++i)
    packed.insert(NodeOf(Replica("packed", i, 10 + i)));
  EXPECT_EQ(plain.size(), 1u);
  EXPECT_EQ(packed.size(), 1u);
}

TEST_F(ReplicaSpreading, AReplicaNeverWaitsForTheSakeOfSpreading) {
  // Twelve plain one-device jobs fill three nodes; the first two-device replica takes the
  // fourth. The second fits only beside its sibling, and starts there rather than wait.
  for (int i = 0; i < 12; ++i)
    Replica("", 100 + i, 0);
  JobId first = Replica("big", 0, 1, /*devices=*/2);
  ASSERT_TRUE(h.engine->job(first).running());
  for (uint32_t n = 0; n < h.engine->cell().node_count(); ++n) {
    if (n == NodeOf(first)) continue;
    for (const DeviceSlot& s : h.engine->cell().devices(n))
      ASSERT_EQ(s.free, 0) << "node " << n << " still has room";
  }
  JobId second = Replica("big", 1, 2, /*devices=*/2);
  ASSERT_TRUE(h.engine->job(second).running());
  EXPECT_EQ(NodeOf(second), NodeOf(first));
}

TEST_F(ReplicaSpreading, AStoppedReplicaNoLongerRepelsTheNext) {
  // Two replicas on different leaves; the first finishes. The next one no longer has a sibling
  // on the first's leaf, so the leaf without siblings — the first's — is where it goes.
  JobId a = Replica("api", 0, 0), b = Replica("api", 1, 1);
  ASSERT_NE(LeafOf(a), LeafOf(b));
  const int32_t freed = LeafOf(a);
  h.engine->Cancel(a, 2);
  h.RunUntil(2);
  JobId c = Replica("api", 2, 3);
  EXPECT_EQ(LeafOf(c), freed);
}

}  // namespace
}  // namespace tessera
