#include "server/daemon.h"

#include <fmt/format.h>
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <iterator>
#include <string_view>
#include <utility>

#include "config/job_json.h"
#include "config/loader.h"
#include "engine/drive.h"
#include "sched/fragmentation.h"
#include "server/daemon_internal.h"
#include "server/placement_view.h"

namespace tessera {

using json = nlohmann::ordered_json;

ReplicaHost& Daemon::replica_host() {
  return *replicas_;
}

namespace {

// How often a daemon that does not lead its store looks whether it leads again.
constexpr Millis kNotLeadingPass = 250;

// The calling thread's time on a core, in seconds.
double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// `s` as a JSON string, quoted and escaped.
void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace

Daemon::Daemon(std::shared_ptr<const Spec> spec, std::unique_ptr<DurableStore> store,
               const Clock& clock, DaemonOptions options)
    : store_(std::move(store)),
      accounting_(*store_),
      clock_(clock),
      options_(std::move(options)),
      principals_(*store_, clock_),
      rng_(options_.seed),
      spec_(std::move(spec)),
      host_(options_.cycle_interval) {
  AgentHubOptions hub;
  hub.heartbeat = options_.agent_heartbeat;
  hub.lost_after = options_.agent_lost_after;
  backends_ = std::make_unique<BackendRouter>(
      std::make_unique<AgentHub>(hub, NewToken().substr(4, 12)), [this](const JobRecord& job) {
        mu_.AssertHeld();  // the engine sends its orders on its thread, which holds mu_
        const int64_t id = book_.IdOf(job.id);
        return BackendRouter::RunKey{id, book_.restart_base(id) + job.restarts};
      });
  // Failing writes (a full disk) are an error line naming the store, once; their recovery too.
  store_->SetHealthLog([this](bool degraded, const std::string& message) {
    if (degraded) {
      Log("error", "store writes fail", {{"error", message}});
    } else {
      Log("info", "store writes succeed again", nlohmann::json::object());
    }
  });
}

Result<std::unique_ptr<Daemon::Core>> Daemon::MakeCore(std::shared_ptr<const Spec> spec) {
  auto core = std::make_unique<Core>();
  ScorerRegistry scorers;
  RegisterBuiltinScorers(scorers);
  OrderingRegistry orderings;
  RegisterBuiltinOrderings(orderings);
  // The configuration's scheduler, with what the command line names in its place.
  auto choice = ChoiceFor(spec->scheduler.OverriddenBy(options_.scheduler));
  if (!choice.ok()) return choice.status();
  choice->scale_interval = options_.scale_interval;
  if (Status made = MakeEngineCore(*core, std::move(spec), *choice, scorers, orderings, *port_,
                                   *backends_, clock_, rng_, clock_.Now());
      !made.ok())
    return made;
  core->decided_by = std::make_shared<const SchedulerSettings>(
      SchedulerSettings{core->choice.policy, core->choice.placement});
  for (uint32_t n = 0; n < core->engine->cell().node_count(); ++n)
    core->node_index[core->engine->cell().node_name(n)] = n;
  return core;
}

void Daemon::Log(const std::string& level, const std::string& msg,
                 const nlohmann::json& fields) const {
  if (options_.log) options_.log(level, msg, fields);
}

void Daemon::Install(std::unique_ptr<Core> core) {
  {
    std::lock_guard<std::mutex> lock(spec_mu_);
    spec_ = core->spec;
  }
  engine_ = core->engine.get();
  sink_->engine = engine_;
  backends_->Use(*core->spec, engine_->cell());
  core_ = std::move(core);
  utilization_.clear();  // keyed by the engine's job ids
  // Agents' nodes are known before runs are adopted onto them.
  const CellState& cell = engine_->cell();
  for (uint32_t n = 0; n < cell.node_count(); ++n) {
    if (spec_->clusters[cell.node(n).cluster].backend == BackendKind::kLocal) {
      backends_->agents().AddNode(cell.node_name(n));
    }
  }
}

void Daemon::ApplyFlags() {
  for (const auto& [node, f] : flags_) {
    auto it = core_->node_index.find(node);
    if (it == core_->node_index.end() || !f.cordoned) continue;  // a node the fleet lost
    engine_->Cordon(it->second, clock_.Now());  // drained runs were requeued when drained
  }
}

std::shared_ptr<const Spec> Daemon::spec() const {
  std::lock_guard<std::mutex> lock(spec_mu_);
  return spec_;
}

SchedulerSettings Daemon::scheduler() const {
  MutexLock lock(mu_);
  return {core_->choice.policy, core_->choice.placement};
}

Daemon::~Daemon() {
  store_->SetHealthLog(nullptr);  // the log goes before the store's last batch
  {
    MutexLock lock(mu_);
    host_.Stop();
  }
  backends_->agents().Shutdown();
  if (loop_.joinable()) loop_.join();
  {
    MutexLock lock(mu_);
    view_stopping_ = true;  // after what the last cycles handed over
  }
  view_cv_.notify_all();
  if (view_.joinable()) view_.join();
  backends_->UseSlurm(nullptr);
  store_->Flush().wait();
}

// The engine's thread drives the engine (engine/drive.h) at the system clock's pace: each
// pass waits for the next time the engine or a source acts (at most a second: the agents'
// and Slurm's checks), a poke (an accepted submission, a report, work posted by an API call)
// or the stop, and passes are at least cycle_interval apart (steady time: the engine's clock
// may be a manual one), so what arrives meanwhile waits for the next, fuller cycle. A reload
// replaces the engine while this thread waits: the drive of the old one ends there, and the
// loop drives the new one.
class Daemon::EnginePace final : public Pace {
 public:
  EnginePace(Daemon& d, MutexLock& lock) : d_(d), lock_(lock) {}

  // A drive of `engine` starts: its first pass runs at once.
  void Drives(const Engine* engine) {
    driving_ = engine;
    first_ = true;
  }

  // Drive calls both on the engine's thread, which holds mu_ (Loop).
  bool Await(std::optional<TimeMs> next) override {
    d_.mu_.AssertHeld();
    if (d_.engine_ != driving_) return false;  // a reload: the loop drives the new engine
    std::optional<std::chrono::system_clock::time_point> due;
    if (!d_.NotLeading().empty()) {
      // Another daemon may lead: nothing is due here; look again a while later.
      next = d_.clock_.Now() + kNotLeadingPass;
    }
    if (!first_) {
      due = std::chrono::system_clock::time_point(
          std::chrono::milliseconds(next.value_or(d_.clock_.Now() + 1000)));
    }
    first_ = false;
    return d_.host_.AwaitPass(lock_, due, [this] {
      d_.mu_.AssertHeld();  // AwaitPass returns it held
      return d_.engine_ != driving_;
    });
  }

  void Run(Engine&) override {
    d_.mu_.AssertHeld();
    if (!d_.NotLeading().empty()) return;  // no decision, no order, nothing written
    d_.RunCycle();
    d_.host_.PassDone();  // what API calls posted for this pass is done: they may answer
    if (d_.clock_.Now() - alive_ >= 1000) {
      alive_ = d_.clock_.Now();
      d_.store_->Alive(alive_);
    }
  }

 private:
  Daemon& d_;
  MutexLock& lock_;
  const Engine* driving_ = nullptr;
  bool first_ = true;  // the first pass runs at once
  TimeMs alive_ = 0;   // when the store last heard the daemon is alive
};

void Daemon::Loop() {
  pthread_setname_np(pthread_self(), "engine");  // as ps and top show it
  MutexLock lock(mu_);
  // The agents' silence and Slurm's reports, checked every pass and at least every second.
  SourceOf backends([&] { return std::optional<TimeMs>(clock_.Now() + 1000); },
                    [&](TimeMs now) REQUIRES(mu_) {
                      if (!NotLeading().empty()) return;  // the leader watches them
                      CheckAgents(now);
                      ApplySlurm(now);
                    });
  // Submissions the API accepted, waiting in the inbox (a poke says there are some), then the
  // work API calls posted (a cancel of one of them finds it in the engine).
  SourceOf arrivals([] { return std::optional<TimeMs>(); },
                    [&](TimeMs) REQUIRES(mu_) {
                      spent_.clear();  // their memory back to this thread's allocator cache
                      TakeArrivals();
                      host_.RunPosted();
                    });
  SourceOf services(
      [&]() REQUIRES(mu_) {
        const ServiceDriver& d = *core_->services;
        return d.active() ? std::optional<TimeMs>(d.next_time()) : std::nullopt;
      },
      [&](TimeMs now) REQUIRES(mu_) {
        if (NotLeading().empty()) StepServices(now);
      });
  DriveSource* const sources[] = {&backends, &arrivals, &services};
  EnginePace pace(*this, lock);
  while (!host_.stopping()) {
    retired_.reset();  // a reload's old engine: its drive has ended
    pace.Drives(engine_);
    Drive(*engine_, clock_, pace, sources);
  }
  host_.Abandon();  // nothing posted runs any more: its callers are told the daemon stops
}

void Daemon::TakeArrivals() {
  // Submitted when it was accepted: its wait counts from then.
  host_.TakeArrivals([this](EngineHost::Arrival& a) {
    mu_.AssertHeld();  // TakeArrivals runs it here, under mu_
    Enqueue(a.id, std::move(a.job), book_.row(a.id).submitted);
  });
}

void Daemon::StepServices(TimeMs now) {
  ServiceDriver& services = *core_->services;
  if (services.active() && services.next_time() <= now) services.Step(*engine_, *replicas_, now);
}

void Daemon::RunCycle() {
  uint64_t cycles = engine_->counters().cycles;
  auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = ThreadCpuSeconds();
  deferring_ = true;  // the view's thread applies what the cycle changed
  engine_->RunDue();
  deferring_ = false;
  if (engine_->counters().cycles != cycles) {
    const double cpu = ThreadCpuSeconds() - cpu0;  // read within the wall time's interval
    metrics_.ObserveCycle(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), cpu);
  }
  if (!changes_.empty()) view_cv_.notify_one();
}

void Daemon::OnJob(const JobRecord& rec) {
  if (!book_.Knows(rec.id)) return;  // Submit is still registering it
  if (deferring_) {
    changes_.emplace_back(ChangeOf(rec));
    return;
  }
  ApplyChanges();
  ApplyJob(ChangeOf(rec));
}

Daemon::JobChange Daemon::ChangeOf(const JobRecord& rec) {
  JobChange c;
  c.job = rec.id;
  c.state = rec.state;
  c.reason = rec.reason;
  c.first_start = rec.first_start;
  c.finished = rec.finished;
  c.last_start = rec.last_start;
  if (!rec.running() && !rec.finished) c.seen = clock_.Now();
  c.restarts = rec.restarts;
  c.kept_ms = rec.kept_ms;
  c.generation = rec.generation;
  // A run's placement is formatted once, when it starts (and off the engine's thread).
  const int64_t id = book_.IdOf(rec.id);
  uint64_t& placed = book_.placed_generation(id);
  // The row's detail: the record's detail while waiting, else where it runs (or ran), which
  // was handed over already when the run's placements were (a run's where is set at its start).
  if (c.waiting() || placed != rec.generation) {
    c.text = c.waiting() ? rec.detail : rec.where;
    if (c.text.empty() && !rec.placements.empty()) {
      // Placed without choosing among clusters (a fleet of one): which one, and that it was
      // the only one, rather than nothing.
      const CellState& cell = engine_->cell();
      c.text =
          spec_->cluster(spec_->node(cell.spec_node(rec.placements.front().node)).cluster).name +
          " (the fleet's only cluster)";
    }
    c.has_text = true;
  }
  if (rec.placements.empty()) {
    c.placement = JobChange::Placement::kClear;
    placed = JobBook::kNoPlacement;
  } else if (restoring_ && !book_.row(id).placement.empty()) {
    placed = rec.generation;  // adopted where the stored placement says
  } else if (placed != rec.generation) {
    c.placement = JobChange::Placement::kFormat;
    c.placements = rec.placements;
    placed = rec.generation;
  }
  return c;
}

void Daemon::ApplyJob(const JobChange& c) {
  StoredJob& row = book_.row(book_.IdOf(c.job));
  const bool was_waiting = row.state == "pending" || row.state == "admitted";
  row.state = std::string(JobStateName(c.state));
  const bool waiting = c.waiting();
  row.reason = waiting ? std::string(PendingReasonCode(c.reason)) : "";
  // A run adopted on restart keeps the stored reason it runs where it does.
  const bool adopted = restoring_ && c.running() && !row.placement.empty();
  if (!adopted && c.has_text) row.detail = c.text;
  if (c.state == JobState::kFailed) {
    if (auto f = fail_detail_.find(row.id); f != fail_detail_.end()) {
      row.detail = f->second;  // what the agents said
      fail_detail_.erase(f);
    }
  }
  row.first_start = c.first_start;
  row.finished = c.finished;
  row.restarts = book_.restart_base(row.id) + c.restarts;
  if (c.placement == JobChange::Placement::kClear) row.placement.clear();
  if (c.placement == JobChange::Placement::kFormat) row.placement = PlacementJson(c.placements);
  row.run_start = c.running() ? std::optional<TimeMs>(c.last_start) : std::nullopt;
  row.kept_ms = c.kept_ms;
  if (!c.running()) accounting_.Close(row.id, c.finished.value_or(c.seen));
  if (restoring_ && waiting && was_waiting) return;  // queued again: its row says it waits
  if (adopted) {
    // Its text and placement are as stored: the batch writes what changed (ApplyDecision adds
    // the decision and the costs).
    ResumedRuns::Run& run = resumed_.runs.emplace_back();
    run.job = row.id;
    run.time = c.last_start;
    run.first_start = row.first_start;
    run.kept_ms = row.kept_ms;
    return;
  }
  store_->UpdateJob(JobUpdate::Of(row));
}

bool Daemon::ResumedStart(const DecisionChange& d, int64_t id) {
  if (!restoring_ || d.kind != DecisionKind::kStart || !d.where.empty()) return false;
  if (resumed_.runs.empty()) return false;
  ResumedRuns::Run& run = resumed_.runs.back();
  if (run.job != id || run.decided || run.time != d.time) return false;
  run.decided = true;
  run.reason = d.reason;
  run.nodes = d.nodes;
  accounting_.Reopen(id, d.rate, run.costs);
  return true;
}

void Daemon::WriteResumed() {
  if (resumed_.runs.empty()) return;
  const CellState& cell = engine_->cell();
  for (uint32_t n = 0; n < cell.node_count(); ++n)
    resumed_.node_names.push_back(cell.node_name(n));
  for (const Cluster& c : spec_->clusters)
    resumed_.clusters.push_back(c.name);
  for (const DeviceModel& m : spec_->device_models)
    resumed_.models.push_back(m.name);
  store_->ResumeRuns(std::move(resumed_));
  resumed_ = ResumedRuns();
}

void Daemon::OnDecision(Decision d) {
  if (!book_.Knows(d.job)) return;
  DecisionChange c;
  c.time = d.time;
  c.kind = d.kind;
  c.job = d.job;
  c.reason = std::move(d.reason);
  c.nodes = std::move(d.nodes);
  c.where = std::move(d.where);
  c.by = core_->decided_by;
  if (d.kind == DecisionKind::kRequeue || d.kind == DecisionKind::kPreempt) {
    const JobRecord& rec = engine_->job(d.job);
    c.lost_device_ms = rec.lost_device_ms;
    c.restarts = rec.restarts;
  }
  if (d.kind == DecisionKind::kStart)
    c.rate = engine_->ledger().Rate(engine_->job(d.job).placements);
  if (d.kind == DecisionKind::kFinish || d.kind == DecisionKind::kFail) {
    if (const std::optional<TimeMs>& deadline = engine_->job(d.job).job.deadline)
      c.deadline_met = d.kind == DecisionKind::kFinish && d.time <= *deadline;
  }
  if (deferring_) {
    changes_.emplace_back(std::move(c));
    return;
  }
  ApplyChanges();
  ApplyDecision(c);
}

void Daemon::ApplyDecision(const DecisionChange& d) {
  const int64_t id = book_.IdOf(d.job);
  metrics_.CountDecision(std::string(DecisionKindName(d.kind)));
  if (d.deadline_met) metrics_.CountDeadline(*d.deadline_met);
  if (ResumedStart(d, id)) return;  // written with the restore's batch
  if (d.kind == DecisionKind::kStart)
    accounting_.Open(id, book_.row(id).tenant, d.time, d.rate, *spec_);
  if (d.kind == DecisionKind::kRequeue || d.kind == DecisionKind::kPreempt) {
    // A run stopped before its end: the work it threw away (since its last checkpoint), all
    // restarts of the job together, in device-seconds.
    json detail = {{"lost_device_seconds", std::round(d.lost_device_ms / 100.0) / 10.0},
                   {"restarts", book_.restart_base(id) + d.restarts},
                   {"policy", d.by->ordering},
                   {"placement", d.by->placement}};
    store_->AppendDecision(
        {0, d.time, std::string(DecisionKindName(d.kind)), id, d.reason, detail.dump()});
    return;
  }
  std::vector<std::string> nodes;
  nodes.reserve(d.nodes.size());
  for (uint32_t n : d.nodes)
    nodes.push_back(engine_->cell().node_name(n));
  // The detail's JSON is made on the store's writer thread.
  store_->AppendDecision({0, d.time, std::string(DecisionKindName(d.kind)), id, d.reason, ""},
                         {std::move(nodes), d.where, d.by->ordering, d.by->placement});
}

void Daemon::ApplyChanges() {
  if (changes_.empty()) return;
  // The two buffers trade places, each keeping its capacity: the cycles' hooks append to
  // memory already in use.
  applying_.swap(changes_);
  for (const auto& change : applying_) {
    if (const JobChange* j = std::get_if<JobChange>(&change)) {
      ApplyJob(*j);
    } else {
      ApplyDecision(std::get<DecisionChange>(change));
    }
  }
  // Freed by the engine's thread, not here (spent_).
  if (spent_.empty()) {
    spent_.swap(applying_);
  } else {
    for (auto& change : applying_)
      spent_.push_back(std::move(change));
    applying_.clear();
  }
}

Status Daemon::StoreFails(const std::string& what) const {
  return Unavailable(what + ": the store's writes fail; it is retried, see the log and /readyz");
}

// The lock's own implementation, which the analysis takes on trust.
Daemon::ViewLock::ViewLock(const Daemon& d) NO_THREAD_SAFETY_ANALYSIS : mu_(d.mu_) {
  mu_.lock();
  // Catching up is no change of the caller's: the view takes what the engine's thread handed
  // over (the daemon is never a const object; the readers' methods are const).
  const_cast<Daemon&>(d).ApplyChanges();
}

Daemon::ViewLock::~ViewLock() NO_THREAD_SAFETY_ANALYSIS {
  if (held_) mu_.unlock();
}

void Daemon::ViewLock::lock() NO_THREAD_SAFETY_ANALYSIS {
  mu_.lock();
  held_ = true;
}

void Daemon::ViewLock::unlock() NO_THREAD_SAFETY_ANALYSIS {
  held_ = false;
  mu_.unlock();
}

void Daemon::ViewLoop() {
  pthread_setname_np(pthread_self(), "view");  // as ps and top show it
  MutexLock lock(mu_);
  for (;;) {
    while (!view_stopping_ && changes_.empty())
      view_cv_.wait(lock);
    ApplyChanges();
    if (view_stopping_) return;
  }
}

std::string Daemon::PlacementJson(const std::vector<Placement>& placements) const {
  // Written out directly, not through a JSON document: this runs on the engine's thread at
  // every start. [{"node", "cpu", "memory", "kind" (when not 0), "cluster", "model" (with
  // devices), "devices": [{"index", "milli"}]}]
  const CellState& cell = engine_->cell();
  std::string out = "[";
  out.reserve(128 * placements.size() + 2);
  auto to = std::back_inserter(out);
  for (const Placement& p : placements) {
    if (out.size() > 1) out += ',';
    out += "{\"node\":";
    AppendJsonString(out, cell.node_name(p.node));
    fmt::format_to(to, ",\"cpu\":{},\"memory\":{}", p.cpu, p.memory);
    if (p.kind != 0) fmt::format_to(to, ",\"kind\":{}", p.kind);
    out += ",\"cluster\":";
    AppendJsonString(out, spec_->cluster(spec_->node(cell.spec_node(p.node)).cluster).name);
    if (!p.devices.empty()) {
      out += ",\"model\":";
      AppendJsonString(
          out, spec_->model(DeviceModelId(cell.devices(p.node)[p.devices[0].index].model)).name);
    }
    out += ",\"devices\":[";
    for (size_t i = 0; i < p.devices.size(); ++i) {
      fmt::format_to(to, "{}{{\"index\":{},\"milli\":{}}}", i ? "," : "", p.devices[i].index,
                     p.devices[i].milli);
    }
    out += "]}";
  }
  out += ']';
  return out;
}

std::vector<Gauge> Daemon::Gauges() const {
  ViewLock lock(*this);
  std::map<std::pair<std::string, std::string>, int64_t> queued;  // (class, tenant)
  std::map<std::string, int64_t> states;
  for (const StoredJob& j : book_.rows()) {
    if (JobBook::Hidden(j)) continue;
    ++states[j.state];
    if (j.state == "pending" || j.state == "admitted") ++queued[{j.job_class, j.tenant}];
  }
  Gauge queue{"tessera_queue_depth", "Jobs waiting, by class and tenant.", {}};
  for (const auto& [key, n] : queued) {
    queue.samples.push_back(
        {"class=\"" + LabelValue(key.first) + "\",tenant=\"" + LabelValue(key.second) + "\"",
         static_cast<double>(n)});
  }
  Gauge jobs{"tessera_jobs", "Jobs known to the daemon, by state.", {}};
  for (const auto& [state, n] : states)
    jobs.samples.push_back({"state=\"" + state + "\"", static_cast<double>(n)});
  // Devices per (cluster, model): in service (node up) and allocated (milli in use / 1000).
  std::map<std::pair<uint32_t, uint16_t>, std::pair<int64_t, int64_t>> devices;
  const CellState& cell = engine_->cell();
  for (uint32_t n = 0; n < cell.node_count(); ++n) {
    if (!engine_->node_up(n)) continue;
    for (const DeviceSlot& d : cell.devices(n)) {
      auto& [capacity, used] = devices[{cell.node(n).cluster, d.model}];
      capacity += kMilliPerUnit;
      used += kMilliPerUnit - d.free;
    }
  }
  Gauge capacity{"tessera_devices", "Devices in service, by cluster and model.", {}};
  Gauge allocated{"tessera_devices_allocated",
                  "Devices allocated to running jobs (fractions summed), by cluster and model.",
                  {}};
  for (const auto& [key, v] : devices) {
    std::string labels = "cluster=\"" + LabelValue(spec_->clusters[key.first].name) +
                         "\",model=\"" + LabelValue(spec_->model(DeviceModelId(key.second)).name) +
                         "\"";
    capacity.samples.push_back({labels, static_cast<double>(v.first) / kMilliPerUnit});
    allocated.samples.push_back({labels, static_cast<double>(v.second) / kMilliPerUnit});
  }
  Gauge writes{"tessera_store_writes", "Writes the store has committed since the start.", {}};
  writes.samples.push_back({"", static_cast<double>(store_->committed_writes())});
  Gauge batches{"tessera_store_commits", "Commits (batches of writes) since the start.", {}};
  batches.samples.push_back({"", static_cast<double>(store_->batches())});
  Gauge replicas{"tessera_service_replicas",
                 "Replicas of each service: running, pending, and wanted at the last scaling step.",
                 {}};
  Gauge load{"tessera_service_load_rps",
             "Each service's load (requests per second) at its last scaling step.",
             {}};
  for (const ServiceStatus& st : core_->services->Statuses(*engine_)) {
    const std::string service = "service=\"" + LabelValue(st.name) + "\"";
    replicas.samples.push_back({service + ",state=\"running\"", st.running});
    replicas.samples.push_back({service + ",state=\"pending\"", st.pending});
    replicas.samples.push_back({service + ",state=\"wanted\"", st.wanted});
    load.samples.push_back({service, st.rps});
  }
  Gauge degraded{"tessera_store_degraded",
                 "1 while the store's writes fail (from a failed commit to the next good one).",
                 {}};
  degraded.samples.push_back({"", store_->degraded() ? 1.0 : 0.0});
  Gauge scheduler{
      "tessera_scheduler", "The scheduler in force (1): its policy and placement scorer.", {}};
  scheduler.samples.push_back({"policy=\"" + LabelValue(core_->choice.policy) + "\",placement=\"" +
                                   LabelValue(core_->choice.placement) + "\"",
                               1.0});
  std::vector<Gauge> out = {queue,   jobs,     capacity, allocated, writes,
                            batches, degraded, replicas, load,      scheduler};
  for (Gauge& g : AgentGauges())
    out.push_back(std::move(g));
  return out;
}

Status Daemon::PutPrincipal(const Caller& caller, Principal p) {
  Principals::Fleet fleet;
  fleet.has_tenant = [spec = spec()](const std::string& t) {
    return spec->FindTenant(t).has_value();
  };
  fleet.has_node = [this](const std::string& node) {
    ViewLock lock(*this);
    return core_->node_index.contains(node);
  };
  return principals_.Put(caller, std::move(p), fleet);
}

Status Daemon::DeletePrincipal(const Caller& caller, const std::string& name) {
  return principals_.Delete(caller, name);
}

Result<size_t> Daemon::RevokeTokens(const Caller& caller, const std::string& principal) {
  return principals_.RevokeTokens(caller, principal);
}

Result<std::string> Daemon::IssueToken(const Caller& caller, const std::string& principal,
                                       std::optional<TimeMs> expires) {
  return principals_.IssueToken(caller, principal, expires);
}

Daemon::Counts Daemon::counts() const {
  ViewLock lock(*this);
  // Accepted jobs the engine's thread has yet to take wait too.
  // Rows of submissions the store refused are placeholders nobody sees: not jobs.
  return {engine_->pending_count() + host_.inboxed(), engine_->running_count(), book_.jobs()};
}

}  // namespace tessera
