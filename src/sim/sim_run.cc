#include "sim/sim_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/drive.h"
#include "engine/engine.h"
#include "sched/fragmentation.h"
#include "sim/run_stats.h"
#include "sim/services.h"
#include "sim/sim_backend.h"

namespace tessera {

Result<SimPolicy> ParseSimPolicy(std::string_view name) {
  if (name == "fifo") return SimPolicy{"fifo", "fifo", false};
  if (name == "backfill") return SimPolicy{"backfill", "fifo", true};
  if (name == "las") return SimPolicy{"las", "las", true};
  if (name == "hetero") return SimPolicy{"hetero", "hetero", true};
  return InvalidArgument("unknown policy '" + std::string(name) +
                         "' (known: fifo, backfill, las, hetero)");
}

std::vector<std::string> SimPolicyNames() {
  return {"fifo", "backfill", "las", "hetero"};
}

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

// Forwards the backend's reports to the engine, which exists only after the backend.
struct Forward final : EventSink {
  Engine* engine = nullptr;
  void Post(const Event& e) override { engine->Post(e); }
};

// The trace's jobs, submitted as they arrive.
class Arrivals final : public DriveSource {
 public:
  Arrivals(const Workload& workload, Engine& engine, SimBackend& backend, const Clock& clock)
      : jobs_(workload.jobs), engine_(engine), backend_(backend), clock_(clock) {}
  std::optional<TimeMs> NextTime() const override {
    if (done()) return std::nullopt;
    return std::max(clock_.Now(), jobs_[next_].job.submit_time.value_or(0));
  }
  void Step(TimeMs now) override {
    while (!done() && jobs_[next_].job.submit_time.value_or(0) <= now) {
      const TraceJob& tj = jobs_[next_++];
      JobId id = engine_.Submit(tj.job, now);
      backend_.SetWork(id, tj.work);
      if (tj.idle_after > 0) backend_.SetIdleAfter(id, tj.idle_after);
      tasks_ += static_cast<size_t>(engine_.job(id).task_count);
    }
  }
  bool done() const { return next_ >= jobs_.size(); }
  size_t jobs() const { return jobs_.size(); }
  size_t tasks() const { return tasks_; }

 private:
  const std::vector<TraceJob>& jobs_;
  Engine& engine_;
  SimBackend& backend_;
  const Clock& clock_;
  size_t next_ = 0, tasks_ = 0;
};

// Node outages drawn by the failure model, while anything is live (no outage outlasts the
// run by itself).
class Failures final : public DriveSource {
 public:
  Failures(FailureInjector& injector, Engine& engine, std::function<bool()> live)
      : injector_(injector), engine_(engine), live_(std::move(live)) {}
  std::optional<TimeMs> NextTime() const override {
    if (injector_.empty() || !live_()) return std::nullopt;
    return injector_.next_time();
  }
  void Step(TimeMs now) override {
    while (!injector_.empty() && injector_.next_time() <= now) {
      NodeOutage o = injector_.Pop();
      engine_.NodeLost(o.node, o.at);
      engine_.NodeRecovered(o.node, o.at + o.down);
    }
  }

 private:
  FailureInjector& injector_;
  Engine& engine_;
  std::function<bool()> live_;
};

// Simulated time: the clock jumps to each next time; the state is constant in between, so the
// samples of the time series and the allocation's integrals are taken as it jumps. The run ends
// when nothing is due, or when only the engine's ticks are left for jobs that nothing running,
// arriving or failing will ever let start.
class SimPace final : public Pace {
 public:
  SimPace(Engine& engine, ManualClock& clock, const Arrivals& arrivals,
          const ServiceDriver& services, const SimOptions& options, TimeMs first_arrival,
          TimeMs last_arrival)
      : engine_(engine),
        clock_(clock),
        arrivals_(arrivals),
        services_(services),
        options_(options),
        first_arrival_(first_arrival),
        last_arrival_(last_arrival),
        next_sample_(first_arrival),
        prev_(first_arrival) {
    last_end = first_arrival;
    step_ = options.sample_interval > 0
                ? options.sample_interval
                : std::max<Millis>(60 * 1000, (last_arrival - first_arrival) / 400);
    area_model.assign(engine.cell().model_count(), 0.0);
    capacity_model.assign(engine.cell().model_count(), 0);
    for (uint32_t node = 0; node < engine.cell().node_count(); ++node)
      for (const DeviceSlot& d : engine.cell().devices(node))
        capacity_model[d.model] += kMilliPerUnit;
  }

  bool Await(std::optional<TimeMs> next) override {
    if (!next) return false;
    const bool live = !arrivals_.done() || engine_.running_count() > 0 || services_.active();
    if (!live && engine_.NextEventTime() && *next == *engine_.NextEventTime() &&
        engine_.pending_count() > 0)
      return false;
    Observe(*next);
    prev_ = *next;
    clock_.Set(*next);
    return true;
  }

  void Run(Engine& engine) override {
    size_t active_before = engine.active_count();
    engine.RunDue();
    if (engine.active_count() < active_before) last_end = clock_.Now();
    const size_t n = arrivals_.jobs();
    size_t ended = engine.job_count() - engine.active_count();
    if (options_.progress && n > 0 && ended >= ended_reported_ + std::max<size_t>(1, n / 200)) {
      ended_reported_ = ended;
      options_.progress(static_cast<double>(ended) / static_cast<double>(n));
    }
  }

  std::string series = "time_s,running_jobs,pending_jobs,allocated_gpus,healthy_gpus,alloc_ratio\n";
  double area_alloc = 0, area_healthy = 0;
  // Allocation per device model over the arrival window (while the load is offered).
  std::vector<double> area_model;
  std::vector<Milli> capacity_model;
  TimeMs last_end = 0;  // when the last job ended

 private:
  // The samples due up to `t` and the integrals over [prev, t), of the state as it is.
  void Observe(TimeMs t) {
    const size_t kMaxRows = 20000;
    while (next_sample_ <= t && rows_ < kMaxRows) {
      fmt::format_to(std::back_inserter(series), "{},{},{},{},{},{}\n", next_sample_ / 1000,
                     engine_.running_count(), engine_.pending_count(),
                     Round3(static_cast<double>(engine_.allocated_milli()) / 1000.0),
                     Round3(static_cast<double>(engine_.healthy_capacity_milli()) / 1000.0),
                     engine_.healthy_capacity_milli() > 0
                         ? Round3(static_cast<double>(engine_.allocated_milli()) /
                                  static_cast<double>(engine_.healthy_capacity_milli()))
                         : 0.0);
      ++rows_;
      next_sample_ += step_;
    }
    if (engine_.active_count() > 0 || !arrivals_.done()) {
      area_alloc += static_cast<double>(engine_.allocated_milli()) * static_cast<double>(t - prev_);
      area_healthy +=
          static_cast<double>(engine_.healthy_capacity_milli()) * static_cast<double>(t - prev_);
    }
    if (const TimeMs lo = std::max(prev_, first_arrival_), hi = std::min(t, last_arrival_);
        hi > lo) {
      for (size_t m = 0; m < area_model.size(); ++m)
        area_model[m] +=
            static_cast<double>(engine_.allocated_by_model()[m]) * static_cast<double>(hi - lo);
    }
  }

  Engine& engine_;
  ManualClock& clock_;
  const Arrivals& arrivals_;
  const ServiceDriver& services_;
  const SimOptions& options_;
  const TimeMs first_arrival_, last_arrival_;
  Millis step_ = 0;
  size_t rows_ = 0;
  TimeMs next_sample_, prev_;
  size_t ended_reported_ = 0;
};

}  // namespace

Result<SimOutcome> RunSimulation(const Spec& spec, const Workload& workload,
                                 const SimPolicy& policy, const SimOptions& options,
                                 const ScorerRegistry& scorers, const OrderingRegistry& orderings) {
  auto ordering = orderings.Create(policy.ordering);
  if (!ordering.ok()) return ordering.status();
  std::vector<std::pair<const TaskRequest*, int64_t>> reqs;
  for (const TraceJob& tj : workload.jobs) {
    for (const TaskGroup& g : tj.job.task_groups)
      reqs.push_back({&g.request, g.count});
  }
  TargetWorkload target = TargetFromRequests(spec, reqs);
  ScorerContext ctx{&target};
  auto scorer = scorers.Create(options.placement, ctx);
  if (!scorer.ok()) return scorer.status();
  auto cell = CellState::FromSpec(spec);
  if (!cell.ok()) return cell.status();

  ManualClock clock(0);
  SeededRng rng(options.seed);
  MemoryStore store;
  Forward forward;
  SimBackend backend(spec, *cell, forward);  // rebound to the engine's cell below
  EngineOptions eo;
  eo.backfill = policy.backfill;
  Engine engine(spec, std::move(*cell), **scorer, **ordering, store, backend, clock, rng, eo);
  forward.engine = &engine;
  backend.SetCell(&engine.cell());
  FailureInjector failures(options.failures, engine.cell(), options.seed ^ 0x9e3779b97f4a7c15ULL);

  const size_t n = workload.jobs.size();
  TimeMs first_arrival = n ? workload.jobs.front().job.submit_time.value_or(0) : 0;
  TimeMs last_arrival = n ? workload.jobs.back().job.submit_time.value_or(0) : 0;
  // Services run from time 0 until the last arrival (a day when there are no jobs).
  ServiceDriver services(spec, 0, n ? std::max<TimeMs>(last_arrival, 1) : 24 * 3600 * 1000);
  for (const Service& svc : spec.services)
    (void)services.Add(svc, 0);  // the spec's names are unique
  SimReplicas replicas(engine, backend);

  Arrivals arrivals(workload, engine, backend, clock);
  ServiceSteps service_steps(services, engine, replicas);
  Failures outages(failures, engine, [&] {
    return !arrivals.done() || engine.running_count() > 0 || services.active();
  });
  SimPace pace(engine, clock, arrivals, services, options, first_arrival, last_arrival);
  DriveSource* const sources[] = {&arrivals, &outages, &service_steps};
  Drive(engine, clock, pace, sources);
  const size_t tasks = arrivals.tasks();
  const TimeMs last_end = pace.last_end;
  if (options.progress) options.progress(1.0);

  // ---- metrics ----
  std::vector<double> jct, queue;
  struct PerClass {
    std::vector<double> jct, queue;
    std::vector<double> queue_all;  // completed and never-finished jobs (waited until the end)
    size_t completed = 0, unfinished = 0;
  };
  std::map<std::string, PerClass> per_class;
  struct PerTenant {
    double slowdown = 0;
    size_t count = 0;
    std::vector<double> jct, queue;
    std::map<std::string, std::vector<double>> queue_by_class;
    double device_ms = 0;  // device time of every run, restarts included
  };
  std::map<std::string, PerTenant> per_tenant;
  size_t completed = 0, failed = 0, cancelled = 0, unfinished = 0;
  std::map<std::string, size_t> pending_reasons;
  double lost_ms = 0;
  int64_t restarts = 0;
  for (size_t i = 0; i < engine.job_count(); ++i) {
    const JobRecord& j = engine.job(JobId(static_cast<uint32_t>(i)));
    if (j.job.labels.count(kServiceLabel)) continue;  // service replicas: under `services`
    lost_ms += j.lost_device_ms;
    restarts += j.restarts;
    std::string cls(WorkloadClassName(j.job.job_class));
    per_tenant[spec.tenant(j.job.tenant).path].device_ms +=
        static_cast<double>(j.run_ms) * static_cast<double>(j.device_milli) / 1000.0;
    if (j.state == JobState::kSucceeded) {
      ++completed;
      double c = static_cast<double>(*j.finished - j.submitted) / 1000.0;
      double q = static_cast<double>(*j.first_start - j.submitted) / 1000.0;
      jct.push_back(c);
      queue.push_back(q);
      PerClass& pc = per_class[cls];
      pc.jct.push_back(c);
      pc.queue.push_back(q);
      pc.queue_all.push_back(q);
      ++pc.completed;
      PerTenant& pt = per_tenant[spec.tenant(j.job.tenant).path];
      pt.slowdown += static_cast<double>(*j.finished - j.submitted) /
                     static_cast<double>(std::max<Millis>(1, j.run_ms));
      ++pt.count;
      pt.jct.push_back(c);
      pt.queue.push_back(q);
      pt.queue_by_class[cls].push_back(q);
    } else if (j.state == JobState::kFailed) {
      ++failed;
    } else if (j.state == JobState::kCancelled) {
      ++cancelled;
    } else {
      ++unfinished;
      ++pending_reasons[std::string(PendingReasonCode(j.reason))];
      // Its queueing delay is at least until it first ran, or until the run ended.
      PerClass& pc = per_class[cls];
      ++pc.unfinished;
      pc.queue_all.push_back(
          static_cast<double>(j.first_start.value_or(clock.Now()) - j.submitted) / 1000.0);
    }
  }
  // Jain's index over the tenants' mean slowdowns (time in the system / time running).
  double sum = 0, sq = 0;
  size_t fair_tenants = 0;  // tenants with a completed job
  for (const auto& [path, pt] : per_tenant) {
    if (pt.count == 0) continue;
    ++fair_tenants;
    double s = pt.slowdown / static_cast<double>(pt.count);
    sum += s;
    sq += s * s;
  }
  double jain = fair_tenants == 0 ? 1.0 : sum * sum / (static_cast<double>(fair_tenants) * sq);

  json m = json::object();
  m["policy"] = policy.name;
  m["backfill"] = policy.backfill;
  m["placement"] = options.placement;
  m["seed"] = options.seed;
  m["jobs"] = {{"submitted", n},           {"completed", completed},
               {"failed", failed},         {"cancelled", cancelled},
               {"unfinished", unfinished}, {"unfinished_reasons", pending_reasons}};
  m["tasks"] = tasks;
  m["jct_s"] = Summary(jct);
  m["queue_s"] = Summary(queue);
  json classes = json::object();
  for (auto& [cls, pc] : per_class) {
    classes[cls] = {{"completed", pc.completed},
                    {"unfinished", pc.unfinished},
                    {"jct_s", Summary(pc.jct)},
                    {"queue_s", Summary(pc.queue)},
                    {"queue_s_all", Summary(pc.queue_all)}};
  }
  m["per_class"] = classes;
  json tenants = json::object();
  for (auto& [path, pt] : per_tenant) {
    json by_class = json::object();
    for (auto& [cls, q] : pt.queue_by_class)
      by_class[cls] = Summary(q);
    tenants[path] = {
        {"completed", pt.count},
        {"jct_s", Summary(pt.jct)},
        {"queue_s", Summary(pt.queue)},
        {"queue_s_by_class", by_class},
        {"mean_slowdown",
         pt.count ? json(Round3(pt.slowdown / static_cast<double>(pt.count))) : json(nullptr)},
        {"gpu_hours", Round3(pt.device_ms / 3.6e6)}};
  }
  m["per_tenant"] = tenants;
  m["cdf"] = {{"jct_s", Percentiles(jct)}, {"queue_s", Percentiles(queue)}};
  m["gpu_alloc_ratio"] = {
      {"mean", pace.area_healthy > 0 ? Round3(pace.area_alloc / pace.area_healthy) : 0.0}};
  m["allocation"] =
      AllocationByModel(spec, pace.area_model, pace.capacity_model, last_arrival - first_arrival);
  m["makespan_s"] = Round3(static_cast<double>(last_end - first_arrival) / 1000.0);
  m["preemptions"] = engine.counters().preemptions;
  m["requeues"] = engine.counters().requeues;
  m["restarts"] = restarts;
  m["lost_gpu_hours"] = Round3(lost_ms / 3.6e6);
  m["fairness"] = {{"index", "jain-over-tenant-mean-slowdown"},
                   {"value", Round3(jain)},
                   {"tenants", fair_tenants}};
  const CostLedger& ledger = engine.ledger();
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
  m["cost"] = {{"currency", spec.currency},
               {"total", Round3(MicroUnits(ledger.total()))},
               {"by_tenant", rounded(ledger.by_tenant())},
               {"by_cluster", rounded(ledger.by_cluster())},
               {"by_model", rounded(ledger.by_model())},
               {"budgets", budgets}};
  m["services"] = ServiceMetrics(services, engine);
  m["engine"] = {{"cycles", engine.counters().cycles},
                 {"placements_tried", engine.counters().placements_tried},
                 {"starts", engine.counters().starts},
                 {"backfilled", engine.counters().backfilled},
                 {"migrations", engine.counters().migrations}};

  SimOutcome out;
  out.metrics = std::move(m);
  out.timeseries_csv = std::move(pace.series);
  out.jobs = n;
  out.tasks = tasks;
  std::string& log = out.decisions_jsonl;
  for (const Decision& d : store.decisions()) {
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
  return out;
}

}  // namespace tessera
