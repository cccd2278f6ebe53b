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
// and 10% of jobs give none. Arrivals are a Poisson process whose rate makes the offered
// GPU-time `load` times the fleet's GPU capacity over the arrival window. Tenants are drawn
// uniformly from the leaves of the tenant tree. Everything comes from one seeded generator.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

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

}  // namespace

Workload SyntheticWorkload(const Spec& spec, const ImportOptions& options) {
  SeededRng rng(options.seed);
  Workload w;
  std::vector<TenantId> leaves;
  for (size_t i = 0; i < spec.tenants.size(); ++i) {
    if (spec.tenants[i].children.empty()) leaves.push_back(TenantId(static_cast<uint32_t>(i)));
  }
  int64_t gpus = 0;
  for (const Node& n : spec.nodes)
    gpus += static_cast<int64_t>(n.devices.size());
  double demand = 0;  // GPU-ms
  const std::string normal = PriorityOr(spec, "normal"), low = PriorityOr(spec, "low"),
                    high = PriorityOr(spec, "high");
  for (int64_t i = 0; i < options.jobs; ++i) {
    TraceJob tj;
    Job& job = tj.job;
    job.name = "syn-" + std::to_string(i);
    job.tenant = leaves.empty() ? TenantId() : leaves[rng.Uniform(leaves.size())];
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
        job.priority = normal;
        job.preemptible = false;
        median_s = 3 * 3600;
        break;
      }
      case 1:
        job.job_class = WorkloadClass::kFinetune;
        g.count = 1 + static_cast<int32_t>(rng.Uniform(8));
        job.gang.require = TopologyLevel::kCluster;
        job.gang.prefer = TopologyLevel::kNode;
        job.priority = normal;
        job.preemptible = true;
        median_s = 3600;
        break;
      case 2: {
        static constexpr Milli kShares[] = {250, 500, 1000};
        job.job_class = WorkloadClass::kBatch;
        g.request.devices.milli_each = kShares[rng.Uniform(3)];
        g.request.cpu = 2 * kMilliPerUnit;
        job.priority = low;
        job.preemptible = true;
        median_s = 1200;
        break;
      }
      default:
        job.job_class = WorkloadClass::kEval;
        job.priority = high;
        job.preemptible = false;
        median_s = 600;
        break;
    }
    double work_s = std::clamp(LogNormal(rng, median_s, 1.0), 60.0, 7 * 86400.0);
    tj.work = std::llround(work_s * 1000);
    if (rng.Uniform(10) != 0)
      job.runtime = std::llround(work_s * (1 + 2 * rng.UniformDouble()) * 1000);
    job.checkpoint_interval = options.default_checkpoint;
    demand += static_cast<double>(tj.work) * static_cast<double>(g.count) *
              static_cast<double>(g.request.devices.milli_each) / 1000.0;
    job.task_groups.push_back(std::move(g));
    w.jobs.push_back(std::move(tj));
  }
  double window_ms =
      gpus > 0 && options.load > 0 ? demand / (options.load * static_cast<double>(gpus)) : 0;
  double mean_gap = options.jobs > 0 ? window_ms / static_cast<double>(options.jobs) : 0;
  double t = 0;
  for (TraceJob& tj : w.jobs) {
    tj.job.submit_time = std::llround(t);
    t += Exponential(rng) * mean_gap;
  }
  char load[32];
  std::snprintf(load, sizeof load, "%g", options.load);
  w.notes.push_back("synthetic: " + std::to_string(options.jobs) + " jobs at load " + load +
                    ", seed " + std::to_string(options.seed));
  return w;
}

}  // namespace tessera
