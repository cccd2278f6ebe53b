// Scenario tests of the global layer (docs/global.md): which cluster a job lands in on a fleet
// of several clusters in several regions, and why. Each test narrates why the expected cluster
// wins; the decision log's `where` line must say the same.
#include <gtest/gtest.h>

#include <string>

#include "engine/engine.h"
#include "engine/engine_testutil.h"
#include "testutil/durations.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::MakeJob;

using testing::kMin;
using testing::kSec;

// Three regions. Clusters of 4-device nodes, prices per device-hour:
//   east-ded   east  dedicated  2 x 4 G1  10
//   west-ded   west  dedicated  2 x 4 G1   5   (the cheapest)
//   west-h     west  dedicated  1 x 4 H1  30   (the fast model)
//   east-shr   east  shared     2 x 4 G1   8
//   cloud      sg    elastic    4 x 4 G1  50   (only through the burst rule)
// Datasets: logs in east and corpus in west (200Ti each, anywhere), chats in east (may not
// leave east). The pin-* rules let a test fill one cluster.
// Tenant t may burst to the cloud after 10 minutes; tenant u may not use the west region.
const std::string kRegions = R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
  - {name: H1, kind: gpu, vendor: nvidia, memory: 80Gi}
regions:
  - name: east
  - name: west
  - name: sg
links:
  - {from: east, to: west, latency: 15ms, bandwidth: 100Gbps}
  - {from: east, to: sg, latency: 35ms, bandwidth: 100Gbps}
clusters:
  - name: east-ded
    region: east
    tier: dedicated
    prices: {G1: 10}
    nodeGroups:
      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
  - name: west-ded
    region: west
    tier: dedicated
    prices: {G1: 5}
    nodeGroups:
      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
  - name: west-h
    region: west
    tier: dedicated
    prices: {H1: 30}
    nodeGroups:
      - {name: n, count: 1, cpu: 64, memory: 512Gi, devices: {model: H1, count: 4}}
  - name: east-shr
    region: east
    tier: shared
    prices: {G1: 8}
    nodeGroups:
      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
  - name: cloud
    region: sg
    tier: elastic
    prices: {G1: 50}
    nodeGroups:
      - {name: n, count: 4, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4}}
datasets:
  - {name: logs, region: east, size: 200Ti}
  - {name: chats, region: east, size: 1Ti, residency: [east]}
  - {name: corpus, region: west, size: 200Ti}
tenants:
  - name: t
  - name: u
policies:
  - {name: pin-east-ded, kind: constrain, match: {labels: {pin: east-ded}}, allowClusters: [east-ded]}
  - {name: pin-west-ded, kind: constrain, match: {labels: {pin: west-ded}}, allowClusters: [west-ded]}
  - {name: pin-east-shr, kind: constrain, match: {labels: {pin: east-shr}}, allowClusters: [east-shr]}
  - name: u-not-west
    kind: constrain
    match: {tenants: [u]}
    denyRegions: [west]
  - name: t-bursts
    kind: burst
    match: {tenants: [t]}
    after: 10m
    budgetPerDay: 100000
    clusters: [cloud]
  - name: regional-stays
    kind: constrain
    match: {labels: {tessera.io/service: regional}}
    crossRegion: false
  - name: spread-only
    kind: weights
    match: {labels: {tessera.io/service: web}}
    balance: 0
    spread: 1
  - name: eval-fallback
    kind: fallback
    match: {classes: [eval]}
    order: [H1, {model: G1, speed: 0.5}]
)";

class GlobalLayer : public ::testing::Test {
 protected:
  GlobalLayer() : h("fifo", /*backfill=*/true, kRegions) {}

  Job G1Job(const std::string& name, int32_t tasks, const std::string& tenant = "t") {
    Job j = MakeJob(h.spec, name, tasks, 3600 * kSec);
    j.tenant = *h.spec.FindTenant(tenant);
    return j;
  }
  // The cluster the job's current run is in ("" when it is not running).
  std::string ClusterOf(JobId id) const {
    const JobRecord& j = h.engine->job(id);
    if (!j.running()) return "";
    return h.spec.clusters[h.engine->cell().node(j.placements.front().node).cluster].name;
  }
  // The decision log's `where` of the job's last start.
  std::string WhereOf(JobId id) const {
    std::string where;
    for (const Decision& d : h.store.decisions())
      if (d.job == id && d.kind == DecisionKind::kStart) where = d.where;
    return where;
  }
  // Replica `i` of `service`: a one-device inference job of tenant t, submitted and scheduled
  // at `at`.
  JobId Replica(const std::string& service, int i, TimeMs at) {
    Job j = G1Job(service + "/r" + std::to_string(i), 1);
    j.job_class = WorkloadClass::kInference;
    j.gang = {};
    j.labels[kServiceLabel] = service;
    JobId id = h.Submit(j, at);
    h.RunUntil(at);
    return id;
  }
  // Fills a cluster with one-device jobs of tenant t, pinned there by the pin-* rules.
  void Fill(const std::string& cluster, int32_t devices, TimeMs at) {
    for (int32_t i = 0; i < devices; ++i) {
      Job j = G1Job(cluster + "-filler" + std::to_string(i), 1);
      j.runtime = 100 * 3600 * kSec;
      j.labels["pin"] = cluster;
      JobId id = h.Submit(j, at);
      h.RunUntil(at);
      ASSERT_EQ(ClusterOf(id), cluster) << "filler " << i << " went elsewhere: " << WhereOf(id);
    }
  }

  Harness h;
};

TEST_F(GlobalLayer, TheCheapestDedicatedClusterWinsWhenNothingElseDiffers) {
  // Same tier, same speed, no data: the cost term decides — west-ded at 5 beats east-ded at 10.
  // west-h has none of the job's models, the cloud is closed until the job has waited.
  JobId id = h.Submit(G1Job("a", 2), 0);
  h.RunUntil(0);
  EXPECT_EQ(ClusterOf(id), "west-ded");
  const std::string where = WhereOf(id);
  EXPECT_NE(where.find("west-ded (dedicated, G1, score"), std::string::npos) << where;
  EXPECT_NE(where.find("other candidates: east-ded"), std::string::npos) << where;
  EXPECT_NE(where.find("west-h: ModelNotAllowed"), std::string::npos) << where;
  EXPECT_NE(where.find("cloud: BurstNotYet (queued 0s of 10m, rule t-bursts)"), std::string::npos)
      << where;
}

// A job of two models under a speed-aware ordering tries each model apart, fastest first. A
// cluster with only the job's other model used to be passed over as "ModelNotAllowed (none of
// the job's device models)" in the try it was not part of: now that try says it is tried apart,
// and the pending detail has each try's reasons, so west-h's real one (too small) is there.
TEST(GlobalLayerTries, AClusterOfTheJobsOtherModelIsNamedAsSuchAndItsRealReasonGiven) {
  Harness h("hetero", /*backfill=*/true, kRegions);
  // 12 devices in one gang: no G1 cluster has more than 8, west-h has 4 H1.
  Job j = MakeJob(h.spec, "both", 12, 3600 * kSec);
  j.tenant = *h.spec.FindTenant("t");  // its cloud opens only after 10 minutes
  j.task_groups[0].request.devices.models = {{*h.spec.FindModel("G1"), 1000},
                                             {*h.spec.FindModel("H1"), 500}};
  JobId id = h.Submit(j, 0);
  h.RunUntil(0);
  const JobRecord& rec = h.engine->job(id);
  ASSERT_FALSE(rec.running());
  const std::string& why = rec.detail;
  EXPECT_NE(why.find("on G1: "), std::string::npos) << why;
  EXPECT_NE(why.find(" | on H1: "), std::string::npos) << why;
  EXPECT_NE(why.find("west-h: OtherModels (its H1 is not in this try of G1: each model is tried "
                     "apart, the job's fastest first)"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("west-ded: OtherModels (its G1 is not in this try of H1"), std::string::npos)
      << why;
  EXPECT_NE(why.find("west-h: TooSmall (4 H1 in all, the job needs 12)"), std::string::npos) << why;
  EXPECT_EQ(why.find("ModelNotAllowed"), std::string::npos) << why;
}

TEST_F(GlobalLayer, DataLocalityOutweighsPrice) {
  // The job reads 200Ti of logs kept in east: bringing them west over 100Gbps takes ~4.9 h, a
  // locality penalty of -0.83 against west's price advantage of 0.1. It runs next to its data.
  Job j = G1Job("reader", 2);
  j.datasets.push_back(*h.spec.FindDataset("logs"));
  JobId id = h.Submit(j, 0);
  h.RunUntil(0);
  EXPECT_EQ(ClusterOf(id), "east-ded") << WhereOf(id);
  EXPECT_NE(WhereOf(id).find("locality 0.00"), std::string::npos) << WhereOf(id);
}

TEST_F(GlobalLayer, ResidencyPinsReadersToTheDatasetsRegionEvenWhenFull) {
  // chats may not leave east. With east-ded full the reader takes east's shared cluster (the
  // next tier), never the cheaper west; with east full as well it waits, naming the rule.
  Fill("west-ded", 8, 0);
  Fill("east-ded", 8, 0);
  Job j = G1Job("chat-reader", 4);
  j.datasets.push_back(*h.spec.FindDataset("chats"));
  JobId first = h.Submit(j, kSec);
  h.RunUntil(kSec);
  EXPECT_EQ(ClusterOf(first), "east-shr") << WhereOf(first);
  EXPECT_NE(WhereOf(first).find("west-ded: DataResidency (residency of dataset chats)"),
            std::string::npos)
      << WhereOf(first);
  j.name = "chat-reader-2";
  JobId second = h.Submit(j, 2 * kSec);
  h.RunUntil(2 * kSec);
  j.name = "chat-reader-3";
  JobId third = h.Submit(j, 3 * kSec);
  h.RunUntil(60 * kMin);  // long past the burst threshold: the cloud is outside east too
  EXPECT_EQ(ClusterOf(second), "east-shr");
  const JobRecord& waiting = h.engine->job(third);
  EXPECT_EQ(waiting.state, JobState::kPending);
  EXPECT_EQ(waiting.reason, PendingReason::kResources);
  EXPECT_NE(waiting.detail.find("cloud: DataResidency"), std::string::npos) << waiting.detail;
  EXPECT_NE(waiting.detail.find("east-ded: Busy"), std::string::npos) << waiting.detail;
}

TEST_F(GlobalLayer, ADeniedRegionIsNeverUsedEvenWhenCheaper) {
  // Tenant u may not use west: its job pays east's price although west-ded is idle and cheaper.
  JobId id = h.Submit(G1Job("u-job", 2, "u"), 0);
  h.RunUntil(0);
  EXPECT_EQ(ClusterOf(id), "east-ded");
  EXPECT_NE(WhereOf(id).find("west-ded: RegionNotAllowed (rule u-not-west)"), std::string::npos)
      << WhereOf(id);
}

TEST_F(GlobalLayer, DedicatedFirstThenSharedThenElasticAfterTheWait) {
  // Both dedicated G1 clusters full: the shared cluster takes the next job at once, though it
  // costs more than west-ded would. With shared full too, t's job waits for the burst rule's
  // 10 minutes, then bursts to the cloud; u's identical job has no burst rule and keeps waiting.
  Fill("west-ded", 8, 0);
  Fill("east-ded", 8, 0);
  Fill("east-shr", 8, 0);
  JobId t_job = h.Submit(G1Job("t-late", 4), kSec);
  JobId u_job = h.Submit(G1Job("u-late", 4, "u"), kSec);
  h.RunUntil(10 * kMin);
  EXPECT_EQ(h.engine->job(t_job).state, JobState::kPending);
  EXPECT_NE(h.engine->job(t_job).detail.find("cloud: BurstNotYet"), std::string::npos)
      << h.engine->job(t_job).detail;
  h.RunUntil(10 * kMin + kSec);
  EXPECT_EQ(ClusterOf(t_job), "cloud") << h.engine->job(t_job).detail;
  EXPECT_EQ(h.engine->job(u_job).state, JobState::kPending);
  EXPECT_NE(h.engine->job(u_job).detail.find("TierNotAllowed (elastic: no burst rule"),
            std::string::npos)
      << h.engine->job(u_job).detail;
}

TEST_F(GlobalLayer, AJobOnlyTheCloudCanHoldWaitsForTheBurstInsteadOfBeingInfeasible) {
  // 12 devices in one gang: no on-premises cluster has 12 G1, the cloud has 16. Before the
  // threshold the job is pending, not infeasible; after it, it runs in the cloud.
  JobId id = h.Submit(G1Job("big", 12), 0);
  h.RunUntil(5 * kMin);
  EXPECT_EQ(h.engine->job(id).state, JobState::kPending);
  EXPECT_EQ(h.engine->job(id).reason, PendingReason::kResources);
  EXPECT_NE(h.engine->job(id).detail.find("east-ded: TooSmall"), std::string::npos)
      << h.engine->job(id).detail;
  h.RunUntil(11 * kMin);
  EXPECT_EQ(ClusterOf(id), "cloud");
}

TEST_F(GlobalLayer, CardModelFallbackOrder) {
  // eval falls back H1, else G1 at half speed. The first eval job gets west-h's four H1 though
  // they cost the most; the second finds H1 busy and takes G1, in the cheapest cluster.
  auto eval = [&](const std::string& name) {
    Job j = G1Job(name, 4);
    j.job_class = WorkloadClass::kEval;
    j.task_groups[0].request.devices.models.clear();  // any GPU: the fallback rule orders them
    return j;
  };
  JobId first = h.Submit(eval("eval-1"), 0);
  JobId second = h.Submit(eval("eval-2"), 0);
  h.RunUntil(0);
  EXPECT_EQ(ClusterOf(first), "west-h") << WhereOf(first);
  EXPECT_EQ(ClusterOf(second), "west-ded") << WhereOf(second);
  // The order is the model step's before the score's: west-h is step 1, and a G1 cluster that
  // scores higher says it is step 2 (and of which tier, when not the same).
  const std::string where = WhereOf(first);
  EXPECT_NE(where.find("west-h (dedicated, H1, model step 1 of 2, score"), std::string::npos)
      << where;
  EXPECT_NE(where.find(" (G1, model step 2 of 2)"), std::string::npos) << where;
  EXPECT_NE(where.find("east-shr "), std::string::npos) << where;
  EXPECT_NE(where.find(" (shared, a later tier)"), std::string::npos) << where;
  EXPECT_NE(WhereOf(second).find("west-h: Busy (0 H1 free of 4 needed)"), std::string::npos)
      << WhereOf(second);
}

TEST_F(GlobalLayer, AStaleSummaryFallsBackToTheNextCandidate) {
  // Two jobs take 500Gi of memory on each west-ded node but one G1 each: by its summary
  // (devices and CPU) west-ded still has 6 G1 free. The next job reads the corpus kept in west,
  // so west-ded is its first candidate; the placement there finds no node with memory left,
  // and the job falls back to the next candidate, east-ded, in the same decision instead of
  // waiting.
  for (int i = 0; i < 2; ++i) {
    Job hog = G1Job("hog" + std::to_string(i), 1);
    hog.task_groups[0].request.memory = 500 * 1024;
    hog.labels["pin"] = "west-ded";
    JobId id = h.Submit(hog, 0);
    h.RunUntil(0);
    ASSERT_EQ(ClusterOf(id), "west-ded");
  }
  Job j = G1Job("after-hogs", 1);
  j.task_groups[0].request.memory = 64 * 1024;
  j.datasets.push_back(*h.spec.FindDataset("corpus"));
  JobId id = h.Submit(j, kSec);
  h.RunUntil(kSec);
  EXPECT_EQ(ClusterOf(id), "east-ded");
  EXPECT_NE(WhereOf(id).find("fell back from west-ded (0/2 nodes fit: 2 insufficient memory)"),
            std::string::npos)
      << WhereOf(id);
}

TEST_F(GlobalLayer, AServicesReplicasSpreadOverClustersOfTheSameTier) {
  // Replicas of service web (its weights: balance 0, spread 1). The first takes west-ded, the
  // cheapest (cost -0.10 against east-ded's -0.20). With it there, west-ded's spread part is
  // -1 (all the service's replicas are there; score 1 - 0.1 - 1): the second takes east-ded. The
  // third finds one replica in each, and price decides again. Plain jobs with the same weights
  // would all go west: the cost term alone decides for them.
  JobId a = Replica("web", 0, 0), b = Replica("web", 1, kSec), c = Replica("web", 2, 2 * kSec);
  EXPECT_EQ(ClusterOf(a), "west-ded") << WhereOf(a);
  EXPECT_EQ(ClusterOf(b), "east-ded") << WhereOf(b);
  EXPECT_NE(WhereOf(b).find("spread 0.00)"), std::string::npos) << WhereOf(b);
  EXPECT_NE(WhereOf(b).find("other candidates: west-ded -0.10"), std::string::npos) << WhereOf(b);
  EXPECT_EQ(ClusterOf(c), "west-ded") << WhereOf(c);
}

TEST_F(GlobalLayer, CrossRegionFalseKeepsAServicesReplicasInTheRegionOfTheFirst) {
  // Service regional (rule regional-stays: crossRegion false). Its first replica takes
  // west-ded, the cheapest; the spread would send the second east, as web's second goes, but
  // the rule keeps it in west; with west full the third waits rather than cross.
  JobId a = Replica("regional", 0, 0), b = Replica("regional", 1, kSec);
  EXPECT_EQ(ClusterOf(a), "west-ded") << WhereOf(a);
  EXPECT_EQ(ClusterOf(b), "west-ded") << WhereOf(b);
  EXPECT_NE(WhereOf(b).find("east-ded: RegionNotAllowed (crossRegion: false; its service's "
                            "replicas run in west)"),
            std::string::npos)
      << WhereOf(b);
  Fill("west-ded", 6, 2 * kSec);
  JobId c = Replica("regional", 2, 3 * kSec);
  const JobRecord& waiting = h.engine->job(c);
  EXPECT_EQ(waiting.state, JobState::kPending) << ClusterOf(c) << " " << WhereOf(c);
  EXPECT_NE(waiting.detail.find("crossRegion: false"), std::string::npos) << waiting.detail;
}

TEST_F(GlobalLayer, APendingJobSeesHowMuchOthersQueueForTheClustersItWaitsOn) {
  // Every G1 cluster u may use (east-ded, east-shr; west is denied to it) is full. u's 4-device
  // job waits; its demand counts as queue pressure, shared over the two clusters: 2 each. A
  // second job of u is told so beside each Busy cluster — its own demand left out — and once
  // the first is cancelled, nobody else queues there.
  Fill("east-ded", 8, 0);
  Fill("east-shr", 8, 0);
  JobId first = h.Submit(G1Job("u-first", 4, "u"), kSec);
  JobId second = h.Submit(G1Job("u-second", 2, "u"), 2 * kSec);
  h.RunUntil(2 * kSec);
  ASSERT_EQ(h.engine->job(second).state, JobState::kPending);
  const std::string detail = h.engine->job(second).detail;
  EXPECT_NE(detail.find("east-ded: Busy (0 G1 free of 2 needed; 2 more wanted by other pending "
                        "jobs)"),
            std::string::npos)
      << detail;
  EXPECT_NE(detail.find("east-shr: Busy (0 G1 free of 2 needed; 2 more wanted by other pending "
                        "jobs)"),
            std::string::npos)
      << detail;
  h.engine->Cancel(first, 3 * kSec);
  h.RunUntil(3 * kSec + kMin);
  EXPECT_NE(h.engine->job(second).detail.find("east-ded: Busy (0 G1 free of 2 needed)"),
            std::string::npos)
      << h.engine->job(second).detail;
  // With the queue empty, no pressure is left anywhere.
  h.engine->Cancel(second, 4 * kMin);
  h.RunUntil(4 * kMin);
  for (uint32_t c = 0; c < h.spec.clusters.size(); ++c)
    EXPECT_EQ(h.engine->summaries().Pressure(c, ~ModelMask{0}), 0) << h.spec.clusters[c].name;
}

TEST(GlobalLayerTopology, AClusterWhoseLeavesCannotHoldAGangIsPassedOver) {
  // A gang of 6 one-device tasks that must stay under one leaf switch. `cheap` has 8 free G1
  // but one node (4) per leaf; `dear` has two nodes (8) under one leaf. The summaries know the
  // most free under one leaf of each cluster: cheap is passed over as fragmented, dear takes the
  // gang. A second such gang finds dear busy (2 left) and cheap still fragmented: it waits,
  // and starts in dear once the first ends.
  const std::string fleet = R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
regions:
  - name: r
clusters:
  - name: cheap
    region: r
    tier: dedicated
    prices: {G1: 5}
    nodeGroups:
      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4},
         topology: {nodesPerLeaf: 1}}
  - name: dear
    region: r
    tier: dedicated
    prices: {G1: 10}
    nodeGroups:
      - {name: n, count: 2, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4},
         topology: {nodesPerLeaf: 2}}
tenants:
  - name: t
)";
  Harness h("fifo", /*backfill=*/true, fleet);
  const uint16_t g1 = static_cast<uint16_t>(h.spec.FindModel("G1")->value());
  EXPECT_EQ(h.engine->summaries().LargestLeafFree(0, g1), 4000);
  EXPECT_EQ(h.engine->summaries().LargestLeafFree(1, g1), 8000);
  auto gang = [&](const std::string& name) {
    Job j = MakeJob(h.spec, name, 6, 3600 * kSec);
    j.gang.require = TopologyLevel::kLeaf;
    return j;
  };
  JobId first = h.Submit(gang("first"), 0);
  h.RunUntil(0);
  ASSERT_TRUE(h.engine->job(first).running());
  const uint32_t cluster = h.engine->cell().node(h.engine->job(first).placements[0].node).cluster;
  EXPECT_EQ(h.spec.clusters[cluster].name, "dear");
  std::string where;
  for (const Decision& d : h.store.decisions())
    if (d.job == first && d.kind == DecisionKind::kStart) where = d.where;
  EXPECT_NE(where.find("cheap: Fragmented (no leaf switch with 6 free G1; at most 4)"),
            std::string::npos)
      << where;
  EXPECT_EQ(h.engine->summaries().LargestLeafFree(1, g1), 2000);
  JobId second = h.Submit(gang("second"), kSec);
  h.RunUntil(kSec);
  ASSERT_EQ(h.engine->job(second).state, JobState::kPending);
  EXPECT_NE(h.engine->job(second).detail.find("cheap: Fragmented (no leaf switch"),
            std::string::npos)
      << h.engine->job(second).detail;
  EXPECT_NE(h.engine->job(second).detail.find("dear: Busy (2 G1 free of 6 needed)"),
            std::string::npos)
      << h.engine->job(second).detail;
  h.Finish(first, 100 * kSec);
  h.RunUntil(100 * kSec);
  EXPECT_TRUE(h.engine->job(second).running());
  EXPECT_EQ(h.engine->summaries().LargestLeafFree(1, g1), 2000);
  EXPECT_EQ(h.engine->summaries().LargestLeafFree(0, g1), 4000);
}

}  // namespace
}  // namespace tessera
