// What a finished simulation reports (run_report.h).
#include "sim/run_report.h"

#include <algorithm>
#include <map>

#include "sim/run_stats.h"

namespace tessera {
namespace {

using json = nlohmann::ordered_json;

// The distribution as its percentiles 0, 1, ..., 100 (empty when there is nothing).
json Percentiles(std::vector<double> v) {
  json out = json::array();
  if (v.empty()) return out;
  std::sort(v.begin(), v.end());
  for (int p = 0; p <= 100; ++p)
    out.push_back(Round3(NearestRank(v, p)));
  return out;
}

// The time-weighted allocated share of each model's devices over `window` ms, and of the GPUs
// and NPUs together.
json AllocationByModel(const Spec& spec, const std::vector<double>& area,
                       const std::vector<Milli>& capacity, Millis window) {
  json by_model = json::object();
  double kind_area[2] = {0, 0}, kind_capacity[2] = {0, 0};
  for (size_t m = 0; m < area.size(); ++m) {
    if (capacity[m] == 0) continue;
    const double cap = static_cast<double>(capacity[m]);
    const double w = static_cast<double>(window);
    by_model[spec.device_models[m].name] = {
        {"devices", capacity[m] / kMilliPerUnit},
        {"mean", window > 0 ? Round3(area[m] / (cap * w)) : 0.0}};
    const DeviceKind kind = spec.device_models[m].kind;
    if (kind == DeviceKind::kCpu) continue;
    const int k = kind == DeviceKind::kNpu ? 1 : 0;
    kind_area[k] += area[m];
    kind_capacity[k] += cap * w;
  }
  auto share = [](double a, double c) { return c > 0 ? Round3(a / c) : 0.0; };
  return {{"window_s", Round3(static_cast<double>(window) / 1000.0)},
          {"gpu", share(kind_area[0], kind_capacity[0])},
          {"npu", share(kind_area[1], kind_capacity[1])},
          {"by_model", by_model}};
}

// Completed jobs' completion and queueing times, by class.
struct PerClass {
  std::vector<double> jct, queue;
  std::vector<double> queue_all;  // completed and never-finished jobs (waited until the end)
  size_t completed = 0, unfinished = 0;
};

struct PerTenant {
  double slowdown = 0;
  size_t count = 0;
  std::vector<double> jct, queue;
  std::map<std::string, std::vector<double>> queue_by_class;
  std::vector<double> queue_owed;  // of the jobs that asked within the tenant's guarantee
  double device_ms = 0;            // device time of every run, restarts included
};

// What the jobs' records say at the end of the run (service replicas are under `services`).
struct JobStats {
  std::vector<double> jct, queue;
  std::map<std::string, PerClass> per_class;
  std::map<std::string, PerTenant> per_tenant;
  size_t completed = 0, failed = 0, cancelled = 0, unfinished = 0;
  // Jobs with a deadline (cancelled ones aside): succeeded by it, late or failed, unfinished.
  size_t deadline_met = 0, deadline_missed = 0, deadline_unfinished = 0;
  std::map<std::string, size_t> pending_reasons;
  double lost_ms = 0;
  int64_t restarts = 0;
  size_t preempted_jobs = 0;  // jobs preempted at least once
};

JobStats GatherJobs(const RunFacts& f) {
  JobStats s;
  for (size_t i = 0; i < f.engine.job_count(); ++i) {
    const JobRecord& j = f.engine.job(JobId(static_cast<uint32_t>(i)));
    if (j.job.labels.count(kServiceLabel)) continue;  // service replicas: under `services`
    s.lost_ms += j.lost_device_ms;
    s.restarts += j.restarts;
    if (j.preemptions > 0) ++s.preempted_jobs;
    if (j.job.deadline && j.state != JobState::kCancelled) {
      if (j.state == JobState::kSucceeded && *j.finished <= *j.job.deadline) {
        ++s.deadline_met;
      } else if (j.state == JobState::kSucceeded || j.state == JobState::kFailed) {
        ++s.deadline_missed;
      } else {
        ++s.deadline_unfinished;
      }
    }
    std::string cls(WorkloadClassName(j.job.job_class));
    s.per_tenant[f.spec.tenant(j.job.tenant).path].device_ms +=
        static_cast<double>(j.run_ms) * static_cast<double>(j.device_milli) / 1000.0;
    if (j.state == JobState::kSucceeded) {
      ++s.completed;
      double c = static_cast<double>(*j.finished - j.submitted) / 1000.0;
      double q = static_cast<double>(*j.first_start - j.submitted) / 1000.0;
      s.jct.push_back(c);
      s.queue.push_back(q);
      PerClass& pc = s.per_class[cls];
      pc.jct.push_back(c);
      pc.queue.push_back(q);
      pc.queue_all.push_back(q);
      ++pc.completed;
      PerTenant& pt = s.per_tenant[f.spec.tenant(j.job.tenant).path];
      pt.slowdown += static_cast<double>(*j.finished - j.submitted) /
                     static_cast<double>(std::max<Millis>(1, j.run_ms));
      ++pt.count;
      pt.jct.push_back(c);
      pt.queue.push_back(q);
      pt.queue_by_class[cls].push_back(q);
      if (j.asked_within_guarantee) pt.queue_owed.push_back(q);
    } else if (j.state == JobState::kFailed) {
      ++s.failed;
    } else if (j.state == JobState::kCancelled) {
      ++s.cancelled;
    } else {
      ++s.unfinished;
      ++s.pending_reasons[std::string(PendingReasonCode(j.reason))];
      // Its queueing delay is at least until it first ran, or until the run ended.
      PerClass& pc = s.per_class[cls];
      ++pc.unfinished;
      pc.queue_all.push_back(static_cast<double>(j.first_start.value_or(f.now) - j.submitted) /
                             1000.0);
    }
  }
  return s;
}

// Jain's index over the tenants' mean slowdowns, and the tenants it is over (those with a
// completed job).
std::pair<double, size_t> Fairness(const JobStats& stats) {
  // Slowdown: time in the system / time running.
  double sum = 0, sq = 0;
  size_t fair_tenants = 0;  // tenants with a completed job
  for (const auto& [path, pt] : stats.per_tenant) {
    if (pt.count == 0) continue;
    ++fair_tenants;
    double s = pt.slowdown / static_cast<double>(pt.count);
    sum += s;
    sq += s * s;
  }
  double jain = fair_tenants == 0 ? 1.0 : sum * sum / (static_cast<double>(fair_tenants) * sq);

  return {jain, fair_tenants};
}

json CostJson(const Spec& spec, const CostLedger& ledger) {
  auto rounded = [](const std::map<std::string, Micro>& by) {
    json out = json::object();
    for (const auto& [name, v] : by)
      out[name] = Round3(MicroUnits(v));
    return out;
  };
  json budgets = json::object();
  for (const auto& [name, use] : ledger.budgets()) {
    budgets[name] = {{"per_day", Round3(MicroUnits(use.per_day))},
                     {"max_day", Round3(MicroUnits(use.max_day))},
                     {"within", use.max_day <= use.per_day}};
  }
  return {{"currency", spec.currency},
          {"total", Round3(MicroUnits(ledger.total()))},
          {"by_tenant", rounded(ledger.by_tenant())},
          {"by_cluster", rounded(ledger.by_cluster())},
          {"by_model", rounded(ledger.by_model())},
          {"budgets", budgets}};
}

}  // namespace

json RunMetrics(const RunFacts& f) {
  const JobStats s = GatherJobs(f);
  const auto [jain, fair_tenants] = Fairness(s);
  json m = json::object();
  m["policy"] = f.policy.name;
  m["backfill"] = f.policy.backfill;
  m["placement"] = f.options.placement;
  m["seed"] = f.options.seed;
  m["jobs"] = {{"submitted", f.jobs},        {"completed", s.completed},
               {"failed", s.failed},         {"cancelled", s.cancelled},
               {"unfinished", s.unfinished}, {"unfinished_reasons", s.pending_reasons}};
  m["tasks"] = f.tasks;
  m["jct_s"] = Summary(s.jct);
  m["queue_s"] = Summary(s.queue);
  json classes = json::object();
  for (auto& [cls, pc] : s.per_class) {
    classes[cls] = {{"completed", pc.completed},
                    {"unfinished", pc.unfinished},
                    {"jct_s", Summary(pc.jct)},
                    {"queue_s", Summary(pc.queue)},
                    {"queue_s_all", Summary(pc.queue_all)}};
  }
  m["per_class"] = classes;
  json tenants = json::object();
  for (auto& [path, pt] : s.per_tenant) {
    json by_class = json::object();
    for (auto& [cls, q] : pt.queue_by_class)
      by_class[cls] = Summary(q);
    tenants[path] = {
        {"completed", pt.count},
        {"jct_s", Summary(pt.jct)},
        {"queue_s", Summary(pt.queue)},
        {"queue_s_by_class", by_class},
        {"queue_s_within_guarantee", Summary(pt.queue_owed)},
        {"mean_slowdown",
         pt.count ? json(Round3(pt.slowdown / static_cast<double>(pt.count))) : json(nullptr)},
        {"gpu_hours", Round3(pt.device_ms / 3.6e6)}};
  }
  m["per_tenant"] = tenants;
  m["cdf"] = {{"jct_s", Percentiles(s.jct)}, {"queue_s", Percentiles(s.queue)}};
  m["gpu_alloc_ratio"] = {
      {"mean", f.area_healthy > 0 ? Round3(f.area_alloc / f.area_healthy) : 0.0}};
  m["allocation"] =
      AllocationByModel(f.spec, f.area_model, f.capacity_model, f.last_arrival - f.first_arrival);
  m["makespan_s"] = Round3(static_cast<double>(f.last_end - f.first_arrival) / 1000.0);
  m["preemptions"] = f.engine.counters().preemptions;
  m["preemptions_per_job"] = f.jobs ? Round3(static_cast<double>(f.engine.counters().preemptions) /
                                             static_cast<double>(f.jobs))
                                    : 0.0;
  m["preempted_jobs"] = s.preempted_jobs;
  m["requeues"] = f.engine.counters().requeues;
  m["restarts"] = s.restarts;
  m["lost_gpu_hours"] = Round3(s.lost_ms / 3.6e6);
  const size_t with_deadline = s.deadline_met + s.deadline_missed + s.deadline_unfinished;
  m["deadlines"] = {{"jobs", with_deadline},
                    {"met", s.deadline_met},
                    {"missed", s.deadline_missed},
                    {"unfinished", s.deadline_unfinished},
                    {"share_met", with_deadline ? json(Round3(static_cast<double>(s.deadline_met) /
                                                              static_cast<double>(with_deadline)))
                                                : json(nullptr)}};
  m["fairness"] = {{"index", "jain-over-tenant-mean-slowdown"},
                   {"value", Round3(jain)},
                   {"tenants", fair_tenants}};
  m["cost"] = CostJson(f.spec, f.engine.ledger());
  m["services"] = ServiceMetrics(f.services, f.engine);
  m["engine"] = {{"cycles", f.engine.counters().cycles},
                 {"placements_tried", f.engine.counters().placements_tried},
                 {"starts", f.engine.counters().starts},
                 {"backfilled", f.engine.counters().backfilled},
                 {"migrations", f.engine.counters().migrations},
                 {"growths", f.engine.counters().growths},
                 {"shrinks", f.engine.counters().shrinks},
                 {"preemptions_declined", f.engine.counters().preemptions_declined},
                 {"preemptions_deferred", f.engine.counters().preemptions_deferred},
                 {"preemption_searches", f.engine.counters().preemption_searches},
                 {"promotions", f.engine.counters().promotions}};

  return m;
}

std::string DecisionsJsonl(const Spec& spec, const Engine& engine,
                           const std::vector<Decision>& decisions) {
  std::string log;
  for (const Decision& d : decisions) {
    json line = {{"t_s", Round3(static_cast<double>(d.time) / 1000.0)},
                 {"kind", std::string(DecisionKindName(d.kind))},
                 {"job", engine.job(d.job).job.name},
                 {"reason", d.reason}};
    if (d.kind == DecisionKind::kStart) {
      const Job& job = engine.job(d.job).job;
      line["submitted_s"] = Round3(static_cast<double>(engine.job(d.job).submitted) / 1000.0);
      line["tenant"] = spec.tenant(job.tenant).path;
      line["class"] = std::string(WorkloadClassName(job.job_class));
      line["priority"] = job.priority;
      line["preemptible"] = engine.job(d.job).preemptible;
      if (!job.datasets.empty()) {
        json read = json::array();
        for (DatasetId ds : job.datasets)
          read.push_back(spec.datasets[ds.value()].name);
        line["datasets"] = read;
      }
      json devices = json::object();
      for (const auto& [model, milli] : d.devices)
        devices[spec.device_models[model].name] = Round3(static_cast<double>(milli) / 1000.0);
      line["devices"] = devices;
      line["level"] = std::string(TopologyLevelName(d.level));
      json nodes = json::array();
      for (uint32_t node : d.nodes)
        nodes.push_back(engine.cell().node_name(node));
      line["nodes"] = nodes;
      if (!d.nodes.empty()) {
        line["cluster"] = engine.spec().clusters[engine.cell().node(d.nodes.front()).cluster].name;
      }
      if (!d.where.empty()) line["where"] = d.where;
    }
    log += line.dump();
    log += '\n';
  }
  return log;
}

}  // namespace tessera
