// The synthetic generator (docs/simulation.md#synthetic): --days spreads the arrivals over a
// fixed window and draws as many jobs as the load implies; on a fleet of GPUs and NPUs jobs
// ask for each kind in proportion to its device count; the same seed draws the same jobs; jobs
// read datasets only where residency leaves them a cluster to run on; tenants submit in
// proportion to the devices their quotas guarantee.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "config/loader.h"
#include "sim/workload.h"
#include "testutil/g1_fleet.h"

namespace tessera {
namespace {

constexpr double kDayMs = 86400.0 * 1000.0;

// 96 GPUs and 32 NPUs (a quarter of the devices).
Spec MixedFleet() {
  LoadResult loaded = LoadSpecTexts({{"fleet.yaml", R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
  - {name: N1, kind: npu, vendor: huawei, memory: 64Gi}
regions:
  - name: r
clusters:
  - name: c
    region: r
    tier: dedicated
    nodeGroups:
      - {name: g, count: 12, cpu: 64, memory: 512Gi, devices: {model: G1, count: 8}}
      - {name: n, count: 4, cpu: 64, memory: 512Gi, devices: {model: N1, count: 8}}
tenants:
  - name: a
  - name: b
)"}});
  EXPECT_TRUE(loaded.spec.has_value());
  return std::move(*loaded.spec);
}

double Demand(const TraceJob& tj) {
  const TaskGroup& g = tj.job.task_groups.front();
  return static_cast<double>(tj.work) * static_cast<double>(g.count) *
         static_cast<double>(g.request.devices.milli_each) / 1000.0;
}

TEST(Synthetic, DaysSpreadArrivalsOverTheWindowAndDrawJobsUntilTheLoadIsMet) {
  Spec spec = MixedFleet();
  ImportOptions o;
  o.days = 3;
  o.load = 0.6;
  o.jobs = 5;  // ignored with days
  Workload w = SyntheticWorkload(spec, o);
  ASSERT_GT(w.jobs.size(), 100u);
  const double window = 3 * kDayMs, target = 0.6 * 128 * window;
  double demand = 0;
  for (const TraceJob& tj : w.jobs) {
    EXPECT_GE(tj.job.submit_time, 0);
    EXPECT_LE(tj.job.submit_time, static_cast<TimeMs>(window));
    demand += Demand(tj);
  }
  // The last job is the one that fills the window: without it, demand falls short.
  EXPECT_GE(demand, target);
  EXPECT_LT(demand - Demand(w.jobs.back()), target);
  // Arrivals are in order and cover the window, not a corner of it.
  for (size_t i = 1; i < w.jobs.size(); ++i)
    EXPECT_LE(w.jobs[i - 1].job.submit_time, w.jobs[i].job.submit_time);
  EXPECT_LT(w.jobs.front().job.submit_time, static_cast<TimeMs>(0.05 * window));
  EXPECT_GT(w.jobs.back().job.submit_time, static_cast<TimeMs>(0.95 * window));
  ASSERT_FALSE(w.notes.empty());
  EXPECT_NE(w.notes[0].find(std::to_string(w.jobs.size()) + " jobs over 3 days"), std::string::npos)
      << w.notes[0];
}

TEST(Synthetic, JobsAskForGpusAndNpusInProportionToTheFleet) {
  Spec spec = MixedFleet();
  ImportOptions o;
  o.jobs = 4000;
  Workload w = SyntheticWorkload(spec, o);
  int npu = 0, trains = 0;
  for (const TraceJob& tj : w.jobs) {
    DeviceKind k = tj.job.task_groups.front().request.devices.kind.value_or(DeviceKind::kCpu);
    EXPECT_TRUE(k == DeviceKind::kGpu || k == DeviceKind::kNpu);
    const bool training = tj.job.job_class == WorkloadClass::kTraining ||
                          tj.job.job_class == WorkloadClass::kFinetune;
    if (!training) {
      EXPECT_EQ(k, DeviceKind::kGpu) << tj.job.name;
    }
    trains += training;
    npu += k == DeviceKind::kNpu;
  }
  // A quarter of the devices are NPUs: a quarter of the training and fine-tune jobs, within
  // 3.5 standard deviations.
  const double expected = trains / 4.0, sd = std::sqrt(trains * 0.25 * 0.75);
  EXPECT_GT(npu, expected - 3.5 * sd);
  EXPECT_LT(npu, expected + 3.5 * sd);
}

// Teams submit in proportion to what they are entitled to: project x is guaranteed three times
// the devices of project y, so it submits three times the jobs; z, guaranteed nothing, only
// borrows, and is drawn as if guaranteed one device.
TEST(Synthetic, TenantsAreDrawnInProportionToTheDevicesTheirQuotasGuarantee) {
  LoadResult loaded = LoadSpecTexts(
      {{"fleet.yaml",
        testing::G1Fleet(
            R"(      - {name: g, count: 16, cpu: 64, memory: 512Gi, devices: {model: G1, count: 8}}
)",
            R"(tenants:
  - name: org
    quotas: {G1: {guaranteed: 128}}
    children:
      - name: x
        quotas: {G1: {guaranteed: 96}}
      - name: y
        quotas: {G1: {guaranteed: 32}}
      - name: z
        quotas: {G1: {limit: 16}}
)")}});
  ASSERT_TRUE(loaded.spec.has_value()) << loaded.diagnostics.ToString();
  const Spec& spec = *loaded.spec;
  ImportOptions o;
  o.jobs = 4000;
  Workload w = SyntheticWorkload(spec, o);
  int x = 0, y = 0, z = 0;
  for (const TraceJob& tj : w.jobs) {
    const std::string& path = spec.tenant(tj.job.tenant).path;
    x += path == "org/x";
    y += path == "org/y";
    z += path == "org/z";
  }
  EXPECT_EQ(x + y + z, 4000);
  // Expected 4000 * 96/129, 32/129, 1/129, within 3.5 standard deviations.
  auto near = [](int n, double p) {
    const double mean = 4000 * p, sd = std::sqrt(4000 * p * (1 - p));
    return n > mean - 3.5 * sd && n < mean + 3.5 * sd;
  };
  EXPECT_TRUE(near(x, 96.0 / 129)) << x;
  EXPECT_TRUE(near(y, 32.0 / 129)) << y;
  EXPECT_GT(z, 0);
  EXPECT_LT(z, 100);
}

TEST(Synthetic, TheSameSeedDrawsTheSameJobsAndAnotherSeedOthers) {
  Spec spec = MixedFleet();
  ImportOptions o;
  o.days = 1;
  Workload a = SyntheticWorkload(spec, o), b = SyntheticWorkload(spec, o);
  o.seed = 2;
  Workload c = SyntheticWorkload(spec, o);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].job.submit_time, b.jobs[i].job.submit_time);
    EXPECT_EQ(a.jobs[i].work, b.jobs[i].work);
  }
  bool differs = a.jobs.size() != c.jobs.size();
  for (size_t i = 0; !differs && i < a.jobs.size(); ++i)
    differs = a.jobs[i].work != c.jobs[i].work;
  EXPECT_TRUE(differs);
}

// Two regions; dataset "local" may be processed in east only, "anywhere" has no residency.
// East has GPUs only (G1), west GPUs and NPUs; tenant a has no quota on G1.
// Two clusters, 32 G1 in east and 32 G2 with 32 N1 in west; a dataset that must stay in east
// and one that may go anywhere; `tenants` (and policies) as given.
Spec FleetWithDatasets(const std::string& tenants = R"(tenants:
  - name: a
    quotas: {G1: {limit: 0}}
  - name: b
)") {
  LoadResult loaded = LoadSpecTexts({{"fleet.yaml", std::string(R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
  - {name: G2, kind: gpu, vendor: nvidia, memory: 80Gi}
  - {name: N1, kind: npu, vendor: huawei, memory: 64Gi}
regions:
  - name: east
  - name: west
clusters:
  - name: e
    region: east
    tier: dedicated
    nodeGroups:
      - {name: g, count: 4, cpu: 64, memory: 512Gi, devices: {model: G1, count: 8}}
  - name: w
    region: west
    tier: dedicated
    nodeGroups:
      - {name: g, count: 4, cpu: 64, memory: 512Gi, devices: {model: G2, count: 8}}
      - {name: n, count: 4, cpu: 64, memory: 512Gi, devices: {model: N1, count: 8}}
datasets:
  - {name: local, region: east, size: 1Ti, residency: [east]}
  - {name: anywhere, region: west, size: 1Ti}
)") + tenants}});
  EXPECT_TRUE(loaded.spec.has_value()) << loaded.diagnostics.ToString();
  return std::move(*loaded.spec);
}

// The devices one job asks for, in milli.
Milli GangMilli(const Job& job) {
  const TaskGroup& g = job.task_groups.front();
  return static_cast<Milli>(g.count) * g.request.devices.milli_each;
}

// The jobs of 3,000 drawn on `spec` that read the dataset "local".
std::vector<Job> LocalReaders(const Spec& spec) {
  const DatasetId local = *spec.FindDataset("local");
  ImportOptions o;
  o.jobs = 3000;
  std::vector<Job> readers;
  for (TraceJob& tj : SyntheticWorkload(spec, o).jobs)
    if (!tj.job.datasets.empty() && tj.job.datasets[0] == local) readers.push_back(tj.job);
  return readers;
}

TEST(Synthetic, JobsReadDatasetsOnlyWhereTheirResidencyLeavesThemSomewhereToRun) {
  Spec spec = FleetWithDatasets();
  const DatasetId local = *spec.FindDataset("local");
  ImportOptions o;
  o.jobs = 3000;
  Workload w = SyntheticWorkload(spec, o);
  int reads = 0, trains = 0, train_reads = 0, local_reads = 0;
  for (const TraceJob& tj : w.jobs) {
    const Job& job = tj.job;
    const bool training =
        job.job_class == WorkloadClass::kTraining || job.job_class == WorkloadClass::kFinetune;
    trains += training;
    ASSERT_LE(job.datasets.size(), 1u);
    if (job.datasets.empty()) continue;
    ++reads;
    train_reads += training;
    if (job.datasets[0] != local) continue;
    ++local_reads;
    // east holds only G1: an NPU job, or one of tenant a (no G1 quota), cannot read "local".
    EXPECT_EQ(job.task_groups[0].request.devices.kind, DeviceKind::kGpu) << job.name;
    EXPECT_EQ(spec.tenant(job.tenant).path, "b") << job.name;
  }
  // Half the training and fine-tune jobs draw a dataset, one of two; every job may keep
  // "anywhere", only b's GPU jobs "local": more than a quarter read one, fewer than half.
  EXPECT_GT(train_reads, trains / 4);
  EXPECT_LT(train_reads, trains / 2);
  EXPECT_GT(local_reads, 50);
  EXPECT_GT(reads, train_reads);
  // The draws of everything else are those of a fleet without datasets.
  Spec plain = FleetWithDatasets();
  plain.datasets.clear();
  Workload without = SyntheticWorkload(plain, o);
  ASSERT_EQ(without.jobs.size(), w.jobs.size());
  for (size_t i = 0; i < w.jobs.size(); ++i) {
    EXPECT_EQ(without.jobs[i].job.submit_time, w.jobs[i].job.submit_time);
    EXPECT_EQ(without.jobs[i].work, w.jobs[i].work);
    EXPECT_TRUE(without.jobs[i].job.datasets.empty());
  }
}

// Where a model is guaranteed to anyone, a tenant counts only on its own guarantee of it: a
// dataset stays in east only for jobs whose tenant is guaranteed their whole gang of G1 there.
TEST(Synthetic, DatasetsStayOnlyWhereTheTenantIsGuaranteedTheWholeGang) {
  Spec spec = FleetWithDatasets(R"(tenants:
  - name: a
    quotas: {G2: {guaranteed: 16}}
  - name: b
    quotas: {G1: {guaranteed: 16}}
)");
  const std::vector<Job> readers = LocalReaders(spec);
  for (const Job& job : readers) {
    EXPECT_EQ(spec.tenant(job.tenant).path, "b") << job.name;   // a may borrow G1, not count on it
    EXPECT_LE(GangMilli(job), 16 * kMilliPerUnit) << job.name;  // a 32-gang would borrow
  }
  EXPECT_GT(readers.size(), 50u);
}

// Devices a reservation holds for others do not count; a preemptible job counts those it lends
// preemptibly. 30 of east's 32 G1 are held for a: b's non-preemptible jobs (training, eval) read
// "local" only with at most 2 devices, its preemptible fine-tunes with more.
TEST(Synthetic, DatasetsStayOnlyWhereReservationsForOthersLeaveTheGangRoom) {
  Spec spec = FleetWithDatasets(R"(tenants:
  - name: a
    quotas: {G2: {guaranteed: 8}}
  - name: b
    quotas: {G1: {guaranteed: 32}}
policies:
  - name: held-for-a
    kind: reservation
    match: {tenants: [a]}
    model: G1
    count: 30
    clusters: [e]
    lendPreemptibly: true
)");
  int b_reads = 0, b_wide_preemptible = 0;
  for (const Job& job : LocalReaders(spec)) {
    if (spec.tenant(job.tenant).path != "b") continue;
    ++b_reads;
    if (!job.preemptible.value_or(true)) {
      EXPECT_LE(GangMilli(job), 2 * kMilliPerUnit) << job.name;
    } else if (GangMilli(job) > 2 * kMilliPerUnit) {
      ++b_wide_preemptible;
    }
  }
  EXPECT_GT(b_reads, 50);
  EXPECT_GT(b_wide_preemptible, 10);
}

}  // namespace
}  // namespace tessera
