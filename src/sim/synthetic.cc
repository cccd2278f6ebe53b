// The synthetic workload generator (--format synthetic --jobs N --load L --seed S).
//
// Class mix and sizes (docs/simulation.md):
//   training 25%: a gang of 1, 2, 4, 8, 16 or 32 one-GPU tasks (20/15/15/25/15/10%), work
//                 log-normal with median 3 h; prefers one leaf switch; normal priority;
//   finetune 20%: 1-8 GPUs as one gang, median 1 h; normal priority;
//   batch    35%: one task on a quarter, half or whole GPU, median 20 min; low priority,
//                 preemptible;
//   eval     20%: one GPU, median 10 min; high priority.
// Work is clipped to [1 min, 7 days]; estimates overstate it by a factor uniform in [1, 3],
// and 10% of jobs give none. On a fleet with both GPUs and NPUs a job asks for one kind or the
// other in proportion to their device counts — training and fine-tuning only (NPU pools run
// model training; batch and eval stay on GPUs), and only a kind its tenant's quota admits. Arrivals
// are a Poisson process whose rate makes the offered device-time `load` times the fleet's device
// capacity over the arrival window: with --jobs N the window follows from the N jobs' demand; with
// --days D the window is D days and jobs are drawn until their demand fills it (the arrival times
// are then the order statistics of uniform draws over the window, so none falls outside it).
// Tenants are drawn from the leaves of the tenant tree in proportion to the devices their quotas
// guarantee (at least one; uniformly where no quota guarantees anything). Everything comes from one
// seeded generator; then, on a fleet that declares datasets, a second stream of the same seed picks
// what the jobs read: half the training and fine-tune jobs and a third of the batch and eval
// jobs read one dataset drawn uniformly — kept only where its residency still leaves the job a
// non-elastic cluster its policies allow with room for its whole gang on a model of its kind
// that its tenant may count on without borrowing (its guarantee where the model is guaranteed
// to anyone, else its limit), beside what reservations hold for others. So residency narrows where
// a job may run without leaving it only borrowed capacity or none: comparing baselines measures the
// scheduler, not the draw. Drawn last, it leaves every other draw as it was.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sched/constraints.h"
#include "sched/holds.h"
#include "sched/policy_match.h"
#include "sched/quota.h"
#include "sim/workload.h"

namespace tessera {
namespace {

double Exponential(Rng& rng) {
  return -std::log(1.0 - rng.UniformDouble());
}

double LogNormal(Rng& rng, double median, double sigma) {
  double u1 = 1.0 - rng.UniformDouble(), u2 = rng.UniformDouble();
  double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  return median * std::exp(sigma * z);
}

template <size_t N>
size_t Pick(Rng& rng, const std::array<int, N>& weights) {
  int total = 0;
  for (int w : weights)
    total += w;
  int x = static_cast<int>(rng.Uniform(static_cast<uint64_t>(total)));
  for (size_t i = 0; i < N; ++i) {
    if (x < weights[i]) return i;
    x -= weights[i];
  }
  return N - 1;
}

std::string PriorityOr(const Spec& spec, const char* name) {
  if (spec.FindPriority(name)) return name;
  return spec.priority_classes.empty() ? std::string("normal") : spec.priority_classes[0].name;
}

// What every job is drawn from: the fleet's tenants, device kinds and priority names.
struct Universe {
  std::vector<TenantId> leaves;
  // By leaf: the running total of the leaves' weights up to and including it (the devices
  // it is guaranteed, at least one; every leaf 1 where no leaf is guaranteed anything).
  std::vector<uint64_t> cumulative_weight;
  // By leaf: may its quota ever admit a GPU job, an NPU job (a limit of 0 on every model of
  // the kind, here or above, says no).
  std::vector<std::pair<bool, bool>> kinds;
  int64_t gpus = 0, npus = 0;
  std::string normal, low, high;
};

// Draws job `i` (everything but its arrival); returns its demand in device-ms.
double DrawJob(Rng& rng, const Universe& u, int64_t i, TraceJob& tj, Millis checkpoint) {
  Job& job = tj.job;
  job.name = "syn-" + std::to_string(i);
  size_t leaf = 0;
  if (!u.leaves.empty()) {
    const uint64_t x = rng.Uniform(u.cumulative_weight.back());
    leaf = static_cast<size_t>(
        std::upper_bound(u.cumulative_weight.begin(), u.cumulative_weight.end(), x) -
        u.cumulative_weight.begin());
  }
  job.tenant = u.leaves.empty() ? TenantId() : u.leaves[leaf];
  const bool may_gpu = u.leaves.empty() || u.kinds[leaf].first;
  const bool may_npu = u.leaves.empty() || u.kinds[leaf].second;
  TaskGroup g;
  g.name = "task";
  g.request.cpu = 4 * kMilliPerUnit;
  g.request.memory = 16 * 1024;
  g.request.devices.kind = DeviceKind::kGpu;
  g.request.devices.count = 1;
  double median_s = 0;
  switch (Pick(rng, std::array<int, 4>{25, 20, 35, 20})) {
    case 0: {
      static constexpr int kSizes[] = {1, 2, 4, 8, 16, 32};
      job.job_class = WorkloadClass::kTraining;
      g.count = kSizes[Pick(rng, std::array<int, 6>{20, 15, 15, 25, 15, 10})];
      job.gang.require = TopologyLevel::kCluster;
      job.gang.prefer = TopologyLevel::kLeaf;
      job.priority = u.normal;
      job.preemptible = false;
      median_s = 3 * 3600;
      break;
    }
    case 1:
      job.job_class = WorkloadClass::kFinetune;
      g.count = 1 + static_cast<int32_t>(rng.Uniform(8));
      job.gang.require = TopologyLevel::kCluster;
      job.gang.prefer = TopologyLevel::kNode;
      job.priority = u.normal;
      job.preemptible = true;
      median_s = 3600;
      break;
    case 2: {
      static constexpr Milli kShares[] = {250, 500, 1000};
      job.job_class = WorkloadClass::kBatch;
      g.request.devices.milli_each = kShares[rng.Uniform(3)];
      g.request.cpu = 2 * kMilliPerUnit;
      job.priority = u.low;
      job.preemptible = true;
      median_s = 1200;
      break;
    }
    default:
      job.job_class = WorkloadClass::kEval;
      job.priority = u.high;
      job.preemptible = false;
      median_s = 600;
      break;
  }
  const bool trains =
      job.job_class == WorkloadClass::kTraining || job.job_class == WorkloadClass::kFinetune;
  if (trains && u.npus > 0 && may_npu &&
      (u.gpus == 0 || !may_gpu ||
       rng.Uniform(static_cast<uint64_t>(u.gpus + u.npus)) < static_cast<uint64_t>(u.npus)))
    g.request.devices.kind = DeviceKind::kNpu;
  double work_s = std::clamp(LogNormal(rng, median_s, 1.0), 60.0, 7 * 86400.0);
  tj.work = std::llround(work_s * 1000);
  if (rng.Uniform(10) != 0)
    job.runtime = std::llround(work_s * (1 + 2 * rng.UniformDouble()) * 1000);
  job.checkpoint_interval = checkpoint;
  double demand = static_cast<double>(tj.work) * static_cast<double>(g.count) *
                  static_cast<double>(g.request.devices.milli_each) / 1000.0;
  job.task_groups.push_back(std::move(g));
  return demand;
}

// The devices (milli) of each model in each cluster (by cluster, then model).
using ClusterDevices = std::vector<std::vector<Milli>>;

// How much of a model the tenant may count on without borrowing: its own guarantee where any
// tenant is guaranteed the model (others may take back what it borrows), else its limit.
Milli Entitled(const QuotaTracker& quotas, TenantId t, size_t model) {
  if (quotas.Guarded(model)) return quotas.guaranteed(t, model);
  const Milli limit = quotas.Limit(t, model);
  return limit < 0 ? std::numeric_limits<Milli>::max() : limit;
}

// Whether the job, with its datasets, may still run on what its tenant is entitled to: a
// non-elastic cluster its constraints allow holds its whole gang on one model of its kind of
// which its tenant may count on the gang (Entitled), counting only devices no reservation
// holds for others (a preemptible job counts those a reservation lends preemptibly).
bool MayRunWithinGuarantee(const Spec& spec, const QuotaTracker& quotas, ClusterDevices devices,
                           const Job& job) {
  const TaskGroup& g = job.task_groups.front();
  const Milli gang = static_cast<Milli>(g.count) * g.request.devices.milli_each;
  const bool preemptible = job.preemptible.value_or(true);
  for (const PolicyRule& rule : spec.policies) {
    if (rule.kind() != RuleKind::kReservation || MatchesJob(spec, rule.match, job)) continue;
    const auto& r = std::get<ReservationRule>(rule.body);
    if (r.lend_preemptibly && preemptible) continue;
    const std::vector<bool> in_scope = ReservationScope(spec, r);
    for (size_t c = 0; c < spec.clusters.size(); ++c) {
      Milli& left = devices[c][r.model.value()];
      if (in_scope[c]) left = std::max<Milli>(0, left - r.count * kMilliPerUnit);
    }
  }
  const JobConstraints constraints = CompileConstraints(spec, job);
  const std::optional<DeviceKind> kind = g.request.devices.kind;
  for (size_t c = 0; c < spec.clusters.size(); ++c) {
    if (constraints.verdicts[c] || spec.clusters[c].tier == ClusterTier::kElastic) continue;
    for (size_t m = 0; m < spec.device_models.size(); ++m) {
      if ((!kind || spec.device_models[m].kind == *kind) && devices[c][m] >= gang &&
          Entitled(quotas, job.tenant, m) >= gang)
        return true;
    }
  }
  return false;
}

void AssignDatasets(const Spec& spec, const QuotaTracker& quotas, uint64_t seed, Workload& w) {
  if (spec.datasets.empty()) return;
  ClusterDevices devices(spec.clusters.size(), std::vector<Milli>(spec.device_models.size(), 0));
  for (const Node& n : spec.nodes)
    for (const Device& d : n.devices)
      devices[n.cluster.value()][d.model.value()] += kMilliPerUnit;
  SeededRng rng(seed ^ 0xda7a5e7ULL);
  for (TraceJob& tj : w.jobs) {
    Job& job = tj.job;
    const bool trains =
        job.job_class == WorkloadClass::kTraining || job.job_class == WorkloadClass::kFinetune;
    if (rng.Uniform(6) >= (trains ? 3u : 2u)) continue;
    job.datasets = {DatasetId(static_cast<uint32_t>(rng.Uniform(spec.datasets.size())))};
    if (!MayRunWithinGuarantee(spec, quotas, devices, job)) job.datasets.clear();
  }
}

}  // namespace

Workload SyntheticWorkload(const Spec& spec, const ImportOptions& options) {
  SeededRng rng(options.seed);
  Workload w;
  Universe u;
  for (size_t i = 0; i < spec.tenants.size(); ++i) {
    if (spec.tenants[i].children.empty()) u.leaves.push_back(TenantId(static_cast<uint32_t>(i)));
  }
  for (const Node& n : spec.nodes) {
    for (const Device& d : n.devices)
      ++(spec.model(d.model).kind == DeviceKind::kNpu ? u.npus : u.gpus);
  }
  const auto devices = static_cast<double>(u.gpus + u.npus);
  const QuotaTracker quotas(spec);
  for (TenantId t : u.leaves) {
    bool gpu = false, npu = false;
    for (size_t m = 0; m < spec.device_models.size(); ++m) {
      const bool may = quotas.Limit(t, m) != 0;
      (spec.device_models[m].kind == DeviceKind::kNpu ? npu : gpu) |= may;
    }
    u.kinds.emplace_back(gpu, npu);
  }
  // Teams submit work in proportion to the capacity they are entitled to: a leaf is drawn
  // with a weight of the devices its quota guarantees (all models together).
  std::vector<uint64_t> weights;
  for (TenantId t : u.leaves) {
    Milli guaranteed = 0;
    for (size_t m = 0; m < spec.device_models.size(); ++m)
      guaranteed += quotas.guaranteed(t, m);
    weights.push_back(static_cast<uint64_t>(guaranteed / kMilliPerUnit));
  }
  const bool any =
      std::any_of(weights.begin(), weights.end(), [](uint64_t weight) { return weight > 0; });
  uint64_t running = 0;
  for (uint64_t weight : weights)
    u.cumulative_weight.push_back(running += any ? std::max<uint64_t>(weight, 1) : 1);
  u.normal = PriorityOr(spec, "normal");
  u.low = PriorityOr(spec, "low");
  u.high = PriorityOr(spec, "high");
  char load[32];
  std::snprintf(load, sizeof load, "%g", options.load);
  if (options.days > 0) {
    // Jobs until their demand fills the window, then arrivals spread over it.
    const double window_ms = options.days * 86400.0 * 1000.0;
    const double target = options.load * devices * window_ms;
    double demand = 0;
    for (int64_t i = 0; demand < target && i < kMaxSyntheticJobs; ++i) {
      TraceJob tj;
      demand += DrawJob(rng, u, i, tj, options.default_checkpoint);
      w.jobs.push_back(std::move(tj));
    }
    std::vector<double> gaps(w.jobs.size() + 1);
    double total = 0;
    for (double& g : gaps)
      total += g = Exponential(rng);
    double t = 0;
    for (size_t i = 0; i < w.jobs.size(); ++i) {
      t += gaps[i];
      w.jobs[i].job.submit_time = std::llround(t / total * window_ms);
    }
    char days[32];
    std::snprintf(days, sizeof days, "%g", options.days);
    AssignDatasets(spec, quotas, options.seed, w);
    w.notes.push_back("synthetic: " + std::to_string(w.jobs.size()) + " jobs over " + days +
                      " days at load " + load + ", seed " + std::to_string(options.seed));
    return w;
  }
  double demand = 0;  // device-ms
  for (int64_t i = 0; i < options.jobs; ++i) {
    TraceJob tj;
    demand += DrawJob(rng, u, i, tj, options.default_checkpoint);
    w.jobs.push_back(std::move(tj));
  }
  double window_ms = devices > 0 && options.load > 0 ? demand / (options.load * devices) : 0;
  double mean_gap = options.jobs > 0 ? window_ms / static_cast<double>(options.jobs) : 0;
  double t = 0;
  for (TraceJob& tj : w.jobs) {
    tj.job.submit_time = std::llround(t);
    t += Exponential(rng) * mean_gap;
  }
  AssignDatasets(spec, quotas, options.seed, w);
  w.notes.push_back("synthetic: " + std::to_string(options.jobs) + " jobs at load " + load +
                    ", seed " + std::to_string(options.seed));
  return w;
}

}  // namespace tessera
