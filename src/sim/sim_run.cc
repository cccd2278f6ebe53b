#include "sim/sim_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/core.h"
#include "engine/drive.h"
#include "engine/engine.h"
#include "sched/fragmentation.h"
#include "sim/run_report.h"
#include "sim/run_stats.h"
#include "sim/services.h"
#include "sim/sim_backend.h"

namespace tessera {

Result<SimPolicy> ParseSimPolicy(std::string_view name) {
  const SchedulingPolicy* p = FindSchedulingPolicy(name);
  if (p == nullptr) {
    return InvalidArgument("unknown policy '" + std::string(name) +
                           "' (known: fifo, backfill, las, hetero)");
  }
  return SimPolicy{std::string(p->name), std::string(p->ordering), p->backfill};
}

std::vector<std::string> SimPolicyNames() {
  std::vector<std::string> out;
  for (std::string_view n : SchedulingPolicyNames())
    out.emplace_back(n);
  return out;
}

namespace {

using json = nlohmann::ordered_json;

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
  // The weights rules' scorers, as the daemon's engine has them (engine/core.h).
  auto rule_scorers = MakeRuleScorers(spec, scorers, ctx, options.placement, **scorer);
  if (!rule_scorers.ok()) return rule_scorers.status();
  auto cell = CellState::FromSpec(spec);
  if (!cell.ok()) return cell.status();

  ManualClock clock(0);
  SeededRng rng(options.seed);
  MemoryStore store;
  Forward forward;
  SimBackend backend(spec, *cell, forward);  // rebound to the engine's cell below
  EngineOptions eo;
  eo.backfill = policy.backfill;
  Engine engine(spec, std::move(*cell), **scorer, **ordering, store, backend, clock, rng, eo,
                rule_scorers->map);
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

  const RunFacts facts{
      spec,        policy,          options,           engine,          services,
      n,           tasks,           first_arrival,     last_arrival,    last_end,
      clock.Now(), pace.area_alloc, pace.area_healthy, pace.area_model, pace.capacity_model};
  SimOutcome out;
  out.metrics = RunMetrics(facts);
  out.timeseries_csv = std::move(pace.series);
  out.jobs = n;
  out.tasks = tasks;
  out.decisions_jsonl = DecisionsJsonl(spec, engine, store.decisions());
  return out;
}

}  // namespace tessera
