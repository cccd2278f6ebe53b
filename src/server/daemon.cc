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
#include "server/placement_view.h"

namespace tessera {

using json = nlohmann::ordered_json;

// The engine's Store port: every transition and decision goes to the view and the store.
class Daemon::StorePort final : public Store {
 public:
  explicit StorePort(Daemon& d) : d_(d) {}
  void PutJob(const JobRecord& job) override { d_.OnJob(job); }
  void AppendDecision(Decision d) override { d_.OnDecision(std::move(d)); }

 private:
  Daemon& d_;
};

// The backend reports into the engine (on the engine's thread, under mu_).
struct Daemon::Sink final : EventSink {
  Engine* engine = nullptr;
  void Post(const Event& e) override { engine->Post(e); }
};

// Routes the engine's Launch and Stop by the cluster of the run's first task (a run spans
// one cluster). On the engine's thread, under mu_.
class Daemon::Backends final : public Backend {
 public:
  explicit Backends(Daemon& d) : d_(d) {}
  void Launch(const JobRecord& job, TimeMs now) override {
    switch (d_.BackendOf(job)) {
      case BackendKind::kLocal:
        return d_.agents_->Assign(d_.OrderOf(job));
      case BackendKind::kSlurm: {
        const CellState& cell = d_.engine_->cell();
        const std::string& cluster =
            d_.spec_->clusters[cell.node(job.placements[0].node).cluster].name;
        return d_.slurm_->Submit(cluster, d_.OrderOf(job), d_.ShapesOf(job));
      }
      default:
        return d_.backend_.Launch(job, now);
    }
  }
  void Stop(const JobRecord& job, TimeMs now) override {
    BackendKind kind = d_.BackendOf(job);
    if (kind != BackendKind::kLocal && kind != BackendKind::kSlurm) {
      return d_.backend_.Stop(job, now);
    }
    int64_t id = d_.by_engine_[job.id.value()];
    int32_t run = d_.restart_base_[id - 1] + job.restarts;
    if (kind == BackendKind::kLocal) return d_.agents_->Stop(id, run, job.stop_grace);
    d_.slurm_->Stop(id, run, job.stop_grace);
  }

 private:
  Daemon& d_;
};

// The service driver's replicas become the daemon's jobs (on the engine's thread, under mu_).
class Daemon::Replicas final : public ReplicaHost {
 public:
  explicit Replicas(Daemon& d) : d_(d) {}
  std::optional<JobId> SubmitReplica(Job job, TimeMs now) override {
    return d_.SubmitReplica(std::move(job), now);
  }
  void CancelReplica(JobId id, TimeMs now) override { d_.engine_->Cancel(id, now); }

 private:
  Daemon& d_;
};

ReplicaHost& Daemon::replica_host() {
  return *replicas_;
}

namespace {

// The calling thread's time on a core, in seconds.
double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

bool IsNumber(const std::string& s) {
  return !s.empty() && s.size() < 19 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether a retried submission is the same request as the first: the same document (a JSON
// body re-indented, or with its keys in another order, is the same), else the same bytes.
bool SameRequestBody(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto x = nlohmann::json::parse(a, nullptr, false);
  auto y = nlohmann::json::parse(b, nullptr, false);
  return !x.is_discarded() && !y.is_discarded() && x == y;
}

// The index key of a submission's Idempotency-Key, which is scoped to its principal.
std::string IdempotencyKey(const std::string& principal, const std::string& key) {
  return principal + '\x1f' + key;
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

bool Terminal(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled";
}

}  // namespace

// Its node by name: the configuration may have changed since.
struct StoredTask {
  std::string node;
  Placement placement;  // node not set
};

struct RestoredJob {
  Result<Job> job;
  std::optional<Result<std::vector<StoredTask>>> run;
};

namespace {

// A run's placement as PlacementJson wrote it.
Result<std::vector<StoredTask>> ParsePlacement(std::string_view text) {
  auto tasks = json::parse(text, nullptr, false);
  if (!tasks.is_array()) return InvalidArgument("no stored placement");
  std::vector<StoredTask> out;
  try {
    for (const json& t : tasks) {
      StoredTask& task = out.emplace_back();
      task.node = t.at("node").get<std::string>();
      Placement& p = task.placement;
      p.cpu = t.at("cpu").get<Milli>();
      p.memory = t.at("memory").get<MiB>();
      p.kind = t.value("kind", 0u);
      for (const json& d : t.at("devices"))
        p.devices.push_back({d.at("index").get<uint16_t>(), d.at("milli").get<Milli>()});
    }
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("unreadable stored placement: ") + e.what());
  }
  return out;
}

}  // namespace

// Reads the resolved form of each job that has not ended (and the placement of its run, if it
// had one) in chunks of ids, each on a connection of its own and parsed straight from SQLite's
// memory. Workers start at once, beside the store's Load of the rows; the restore then takes
// the jobs in id order, parsing a chunk itself when no worker has it yet (or a later one while
// it waits), so that rebuilding the engine overlaps the parsing of what comes after. The rows
// are independent and the reader immutable.
class ResolvedJobs {
 public:
  ResolvedJobs(const Spec& spec, const SqliteStore& store, int64_t last_id)
      : reader_(spec),
        store_(store),
        by_id_(static_cast<size_t>(last_id)),
        state_((by_id_.size() + kChunk - 1) / kChunk),
        status_(state_.size()) {
    // One core is the Load's, then the restore's.
    size_t threads = std::max(2u, std::thread::hardware_concurrency()) - 1;
    for (size_t t = 0; t < threads; ++t)
      pool_.emplace_back([this] { Work(); });
  }
  ~ResolvedJobs() {
    stopping_ = true;  // a restore that failed takes no more
    for (std::thread& t : pool_)
      t.join();
  }
  ResolvedJobs(const ResolvedJobs&) = delete;
  ResolvedJobs& operator=(const ResolvedJobs&) = delete;

  // Job `id` as read: null when it has ended; the error of its chunk when that was unreadable.
  Result<std::unique_ptr<RestoredJob>> Take(int64_t id) {
    if (id < 1 || static_cast<size_t>(id) > by_id_.size()) return std::unique_ptr<RestoredJob>();
    const size_t at = static_cast<size_t>(id - 1), chunk = at / kChunk;
    if (Claim(chunk)) Parse(chunk);
    while (state_[chunk].load(std::memory_order_acquire) != kDone) {
      // Another thread parses it: parse a later chunk meanwhile, or wait.
      size_t later = chunk + 1;
      while (later < state_.size() && !Claim(later))
        ++later;
      if (later < state_.size()) {
        Parse(later);
        continue;
      }
      std::unique_lock<std::mutex> lock(mu_);
      done_.wait(lock, [&] { return state_[chunk].load(std::memory_order_acquire) == kDone; });
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!status_[chunk].ok()) return status_[chunk];
    return std::move(by_id_[at]);
  }

 private:
  // Ids parsed at a time: many enough to make a connection's opening nothing, few enough for
  // the restore to start on the first while the next are parsed.
  static constexpr size_t kChunk = 4096;
  enum : uint8_t { kFree, kTaken, kDone };

  bool Claim(size_t chunk) {
    uint8_t free = kFree;
    return state_[chunk].compare_exchange_strong(free, kTaken, std::memory_order_acq_rel);
  }

  void Parse(size_t chunk) {
    const auto from = static_cast<int64_t>(chunk * kChunk) + 1;
    const auto last = static_cast<int64_t>(by_id_.size());
    Status s = store_.ReadActiveJobs(
        from, std::min(last, from + static_cast<int64_t>(kChunk) - 1),
        [&](int64_t id, std::string_view state, std::string_view resolved,
            std::string_view placement) {
          auto read = std::make_unique<RestoredJob>(RestoredJob{reader_.Read(resolved), {}});
          if (state == "running" || state == "placed") read->run = ParsePlacement(placement);
          by_id_[static_cast<size_t>(id - 1)] = std::move(read);
        });
    {
      std::lock_guard<std::mutex> lock(mu_);
      status_[chunk] = s;
      state_[chunk].store(kDone, std::memory_order_release);
    }
    done_.notify_all();
  }

  void Work() {
    for (size_t chunk = next_++; chunk < state_.size() && !stopping_; chunk = next_++) {
      if (Claim(chunk)) Parse(chunk);
    }
  }

  const ResolvedJobReader reader_;
  const SqliteStore& store_;
  // By id - 1, null for jobs that ended: each chunk's ids written by the thread that parses it,
  // read once it is done.
  std::vector<std::unique_ptr<RestoredJob>> by_id_;
  std::vector<std::atomic<uint8_t>> state_;  // by chunk
  std::mutex mu_;
  std::condition_variable done_;
  std::vector<Status> status_;   // by chunk, under mu_
  std::atomic<size_t> next_{0};  // the workers' next chunk
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> pool_;
};

Daemon::Daemon(std::shared_ptr<const Spec> spec, std::unique_ptr<SqliteStore> store,
               const Clock& clock, DaemonOptions options)
    : store_(std::move(store)),
      clock_(clock),
      options_(std::move(options)),
      rng_(options_.seed),
      spec_(std::move(spec)) {
  AgentHubOptions hub;
  hub.heartbeat = options_.agent_heartbeat;
  hub.lost_after = options_.agent_lost_after;
  agents_ = std::make_unique<AgentHub>(hub, NewToken().substr(4, 12));
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
  EngineChoice choice;
  choice.scale_interval = options_.scale_interval;
  if (Status made = MakeEngineCore(*core, std::move(spec), choice, scorers, orderings, *port_,
                                   *backends_, clock_, rng_, clock_.Now());
      !made.ok())
    return made;
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
  core_ = std::move(core);
  utilization_.clear();  // keyed by the engine's job ids
  // Agents' nodes are known before runs are adopted onto them.
  const CellState& cell = engine_->cell();
  for (uint32_t n = 0; n < cell.node_count(); ++n) {
    if (spec_->clusters[cell.node(n).cluster].backend == BackendKind::kLocal) {
      agents_->AddNode(cell.node_name(n));
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

Result<std::unique_ptr<Daemon>> Daemon::Start(Spec spec, std::unique_ptr<SqliteStore> store,
                                              const Clock& clock, DaemonOptions options,
                                              std::string* new_admin_token) {
  auto t0 = std::chrono::steady_clock::now();
  Result<int64_t> last_id = store->LastJobId();
  if (!last_id.ok()) return last_id.status();
  // Parsed from now on, taken by Restore (the reader keeps the spec it reads by).
  auto shared_spec = std::make_shared<const Spec>(std::move(spec));
  ResolvedJobs resolved(*shared_spec, *store, *last_id);
  Result<StoreSnapshot> snap = store->Load();
  if (!snap.ok()) return snap.status();
  std::unique_ptr<Daemon> d(new Daemon(shared_spec, std::move(store), clock, options));
  auto t1 = std::chrono::steady_clock::now();
  d->start_times_.load_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();

  d->port_ = std::make_unique<StorePort>(*d);
  d->sink_ = std::make_unique<Sink>();
  d->replicas_ = std::make_unique<Replicas>(*d);
  d->backend_.SetSink(d->sink_.get());
  d->backends_ = std::make_unique<Backends>(*d);
  std::vector<SlurmClusterConfig> slurm;
  for (const Cluster& c : d->spec_->clusters) {
    if (c.backend != BackendKind::kSlurm) continue;
    SlurmClusterConfig& s = slurm.emplace_back();
    s.name = c.name;
    s.slurm_conf = c.backend_options.at("slurmConf");
    if (auto p = c.backend_options.find("partition"); p != c.backend_options.end()) {
      s.partition = p->second;
    }
    auto w = c.backend_options.find("workDir");
    s.work_dir =
        w != c.backend_options.end() ? w->second : d->options_.work_dir + "/slurm/" + c.name;
    for (uint32_t n = 0; n < c.node_count; ++n)
      s.nodes.push_back(d->spec_->nodes[c.first_node.value() + n].name);
  }
  if (!slurm.empty()) {
    Daemon* p = d.get();
    d->slurm_ = std::make_unique<SlurmClusters>(std::move(slurm), [p] {
      std::lock_guard<std::mutex> lock(p->mu_);
      p->Poke();
    });
  }
  auto core = d->MakeCore(d->spec_);
  if (!core.ok()) return core.status();
  d->Install(std::move(*core));
  for (const NodeFlags& f : snap->nodes)
    d->flags_[f.node] = f;
  d->ApplyFlags();

  for (const Principal& p : snap->principals)
    d->auth_.Add(p);
  for (const StoredToken& t : snap->tokens)
    d->auth_.AddToken(t);
  if (new_admin_token != nullptr) new_admin_token->clear();
  if (snap->principals.empty()) {
    std::string token = d->options_.admin_token.empty() ? NewToken() : d->options_.admin_token;
    Principal admin{"admin", "admin", "", clock.Now(), ""};
    StoredToken t{HashToken(token), "admin", std::nullopt, clock.Now()};
    d->store_->PutPrincipal(admin);
    if (Status s = d->store_->PutToken(t).get(); !s.ok()) return s;
    d->auth_.Add(admin);
    d->auth_.AddToken(t);
    if (new_admin_token != nullptr && d->options_.admin_token.empty()) *new_admin_token = token;
  }
  {
    std::lock_guard<std::mutex> lock(d->mu_);
    // Runs open when the previous process ended ended with it.
    d->store_->EndOpenCosts(snap->last_seen);
    d->last_cost_ = snap->last_cost;
    for (StoredService& v : snap->services) {
      std::string name = v.name;
      d->services_[name] = {std::move(v), "", true};
    }
    d->DriveServices();
    if (Status s = d->Restore(*snap, resolved); !s.ok()) return s;
    d->ApplyAgents();
  }
  d->start_times_.restore_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  d->start_times_.jobs = d->jobs_.size();
  d->start_times_.active = d->engine_->active_count();
  d->view_ = std::thread([p = d.get()] { p->ViewLoop(); });
  d->loop_ = std::thread([p = d.get()] { p->Loop(); });
  return d;
}

Daemon::~Daemon() {
  store_->SetHealthLog(nullptr);  // the log goes before the store's last batch
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  agents_->Shutdown();
  if (loop_.joinable()) loop_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    view_stopping_ = true;  // after what the last cycles handed over
  }
  view_cv_.notify_all();
  if (view_.joinable()) view_.join();
  slurm_.reset();
  store_->Flush().wait();
}

Status Daemon::Restore(StoreSnapshot& snap, ResolvedJobs& resolved) {
  const TimeMs now = clock_.Now();
  std::vector<JobId> orphans;
  restoring_ = true;
  const size_t ids = snap.jobs.empty() ? 0 : static_cast<size_t>(snap.jobs.back().id);
  restart_base_.reserve(ids);
  engine_->Reserve(static_cast<size_t>(std::count_if(
      snap.jobs.begin(), snap.jobs.end(), [](const StoredJob& j) { return !Terminal(j.state); })));
  by_engine_.reserve(engine_->job_count() + snap.jobs.size());
  // The rows first (by id): then their name and key indexes are built on another core while
  // this one rebuilds the engine (which writes none of the fields the indexes read). Ids without a
  // gap (the rule: a gap is an insert that failed) hand the rows' vector over as it is, touching no
  // memory again.
  const bool dense = ids == snap.jobs.size();
  if (dense) {
    jobs_ = std::move(snap.jobs);
  } else {
    jobs_.reserve(ids);
  }
  const size_t rows = dense ? jobs_.size() : snap.jobs.size();
  auto row_of = [&](size_t i) -> StoredJob& {
    return dense ? jobs_[i] : jobs_[static_cast<size_t>(snap.jobs[i].id - 1)];
  };
  for (size_t i = 0; i < rows && !dense; ++i) {
    StoredJob& stored = snap.jobs[i];
    // A gap is a submission whose insert failed (never acknowledged): a hidden placeholder.
    while (static_cast<int64_t>(jobs_.size()) + 1 < stored.id) {
      StoredJob& gap = jobs_.emplace_back();
      gap.id = static_cast<int64_t>(jobs_.size());
      gap.state = "failed";
      gap.reason = "store";
      ++hidden_rows_;
    }
    jobs_.push_back(std::move(stored));
  }
  engine_id_.resize(jobs_.size());
  placed_generation_.assign(jobs_.size(), kNoPlacement);
  for (const StoredJob& row : jobs_)
    restart_base_.push_back(row.restarts);  // the resolved forms were never loaded (ResolvedJobs)
  std::thread indexes([this] {
    by_name_.reserve(jobs_.size());
    by_idempotency_.reserve(jobs_.size());
    for (const StoredJob& row : jobs_) {
      // Reads name, id, principal and key only: the engine's pass writes none of them.
      if (row.name.empty()) continue;  // a gap
      by_name_[row.name].push_back(row.id);
      if (!row.idempotency_key.empty())
        by_idempotency_[IdempotencyKey(row.principal, row.idempotency_key)] = row.id;
    }
  });
  for (size_t i = 0; i < rows; ++i) {
    StoredJob& row = row_of(i);
    // Freed as soon as it is used: the engine's records of the next jobs take its memory
    // rather than fresh pages.
    Result<std::unique_ptr<RestoredJob>> taken = resolved.Take(row.id);
    if (!taken.ok()) return taken.status();
    if (*taken == nullptr) continue;  // ended
    RestoredJob& restored = **taken;
    // The resolved form reads back without YAML; a row without one (or one the configuration
    // no longer admits) goes through the submission's own checks again, which say why.
    Result<Job> job = std::move(restored.job);
    std::string why;
    if (!job.ok()) {
      ++start_times_.rechecked;
      JobLoad parsed = LoadJobText(*spec_, {"job " + std::to_string(row.id), row.body});
      if (parsed.job) {
        job = std::move(*parsed.job);
      } else {
        why = parsed.diagnostics.ToString();
      }
    }
    if (!job.ok()) {
      // The configuration changed under it (a tenant or model removed): it can never run.
      row.state = "failed";
      row.reason = "invalid";
      row.detail = "no longer valid under the configuration: " + why;
      row.finished = now;
      store_->UpdateJob(JobUpdate::Of(row));
      continue;
    }
    JobId id = Enqueue(row.id, std::move(*job), now);
    Rejoin(id, orphans);
    if (restored.run) {
      // The run goes on where it was: the same nodes and devices, its progress until the
      // previous process was last seen kept (the emulated backend resumes the rest).
      Result<std::vector<StoredTask>>& run = *restored.run;
      Result<std::vector<Placement>> placements =
          run.ok() ? PlacementsOf(std::move(*run)) : Result<std::vector<Placement>>(run.status());
      Status adopted = placements.ok() ? Status::Ok() : placements.status();
      if (adopted.ok()) {
        TimeMs started = row.run_start.value_or(snap.last_seen);
        Millis kept = row.kept_ms + std::max<Millis>(0, snap.last_seen - started);
        adopted =
            engine_->Adopt(id, std::move(*placements), row.first_start.value_or(started), kept);
      }
      if (!adopted.ok()) {
        ++restart_base_[row.id - 1];
        json note = {{"note", "the run could not be resumed where it was: " + adopted.message()}};
        store_->AppendDecision({0, now, "requeue", row.id, "daemon-restart", note.dump()});
      }
    }
  }
  indexes.join();
  WriteResumed();
  restoring_ = false;
  for (JobId id : orphans)
    engine_->Cancel(id, now);  // replicas of a service that is gone
  return Status::Ok();
}

// The engine's thread drives the engine (engine/drive.h) at the system clock's pace: each
// pass waits for the next time the engine or a source acts (at most a second: the agents'
// and Slurm's checks), a poke (an accepted submission, a report) or the stop, and passes are
// at least cycle_interval apart (steady time: the engine's clock may be a manual one), so
// what arrives meanwhile waits for the next, fuller cycle.
class Daemon::EnginePace final : public Pace {
 public:
  EnginePace(Daemon& d, std::unique_lock<std::mutex>& lock)
      : d_(d),
        lock_(lock),
        interval_(d.options_.cycle_interval),
        last_cycle_(std::chrono::steady_clock::now() - interval_) {}

  bool Await(std::optional<TimeMs> next) override {
    if (!first_) {
      auto deadline = std::chrono::system_clock::time_point(
          std::chrono::milliseconds(next.value_or(d_.clock_.Now() + 1000)));
      d_.cv_.wait_until(lock_, deadline, [&] { return d_.stopping_ || d_.poked_; });
    }
    first_ = false;
    if (d_.stopping_) return false;
    if (interval_.count() > 0) {
      d_.cv_.wait_until(lock_, last_cycle_ + interval_, [&] { return d_.stopping_; });
      if (d_.stopping_) return false;
      last_cycle_ = std::chrono::steady_clock::now();
    }
    d_.poked_ = false;  // this pass handles what the pokes were for
    return true;
  }

  void Run(Engine&) override {
    d_.RunCycle(/*hand_over=*/true);
    if (d_.clock_.Now() - alive_ >= 1000) {
      alive_ = d_.clock_.Now();
      d_.store_->Alive(alive_);
    }
  }

 private:
  Daemon& d_;
  std::unique_lock<std::mutex>& lock_;
  const std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_cycle_;
  bool first_ = true;  // the first pass runs at once
  TimeMs alive_ = 0;   // when the store last heard the daemon is alive
};

void Daemon::Loop() {
  pthread_setname_np(pthread_self(), "engine");  // as ps and top show it
  std::unique_lock<std::mutex> lock(mu_);
  // The agents' silence and Slurm's reports, checked every pass and at least every second.
  SourceOf backends([&] { return std::optional<TimeMs>(clock_.Now() + 1000); },
                    [&](TimeMs now) {
                      CheckAgents(now);
                      ApplySlurm(now);
                    });
  // Submissions the API accepted, waiting in the inbox (a poke says there are some).
  SourceOf arrivals([] { return std::optional<TimeMs>(); },
                    [&](TimeMs) {
                      spent_.clear();  // their memory back to this thread's allocator cache
                      TakeArrivals();
                    });
  SourceOf services(
      [&] {
        const ServiceDriver& d = *core_->services;
        return d.active() ? std::optional<TimeMs>(d.next_time()) : std::nullopt;
      },
      [&](TimeMs now) { StepServices(now); });
  DriveSource* const sources[] = {&backends, &arrivals, &services};
  EnginePace pace(*this, lock);
  Drive(*engine_, clock_, pace, sources);
}

void Daemon::TakeArrivals() {
  for (Arrival& a : inbox_) {
    // Submitted when it was accepted: its wait counts from then.
    Enqueue(a.id, std::move(a.job), jobs_[a.id - 1].submitted);
  }
  inbox_.clear();
}

void Daemon::RunEngine(bool hand_over) {
  spent_.clear();  // their memory back to this thread's allocator cache (spent_)
  TakeArrivals();
  StepServices(clock_.Now());
  RunCycle(hand_over);
}

void Daemon::StepServices(TimeMs now) {
  ServiceDriver& services = *core_->services;
  if (services.active() && services.next_time() <= now) services.Step(*engine_, *replicas_, now);
}

void Daemon::RunCycle(bool hand_over) {
  uint64_t cycles = engine_->counters().cycles;
  auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = ThreadCpuSeconds();
  deferring_ = hand_over;  // the view's thread applies what the cycle changed
  engine_->RunDue();
  deferring_ = false;
  if (engine_->counters().cycles != cycles) {
    const double cpu = ThreadCpuSeconds() - cpu0;  // read within the wall time's interval
    metrics_.ObserveCycle(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), cpu);
  }
  if (!changes_.empty()) view_cv_.notify_one();
}

void Daemon::Poke() {
  // Once poked, the engine's thread runs its next pass anyway: further pokes before it do not
  // wake it again (at 2,000 submissions a second, a wakeup each, to wait again for its
  // interval, would cost the thread more than its cycles).
  if (poked_) return;
  poked_ = true;
  cv_.notify_all();
}

void Daemon::OnJob(const JobRecord& rec) {
  if (rec.id.value() >= by_engine_.size()) return;  // Submit is still registering it
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
  const int64_t id = by_engine_[rec.id.value()];
  uint64_t& placed = placed_generation_[id - 1];
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
    placed = kNoPlacement;
  } else if (restoring_ && !jobs_[id - 1].placement.empty()) {
    placed = rec.generation;  // adopted where the stored placement says
  } else if (placed != rec.generation) {
    c.placement = JobChange::Placement::kFormat;
    c.placements = rec.placements;
    placed = rec.generation;
  }
  return c;
}

void Daemon::ApplyJob(const JobChange& c) {
  StoredJob& row = jobs_[by_engine_[c.job.value()] - 1];
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
  row.restarts = restart_base_[row.id - 1] + c.restarts;
  if (c.placement == JobChange::Placement::kClear) row.placement.clear();
  if (c.placement == JobChange::Placement::kFormat) row.placement = PlacementJson(c.placements);
  row.run_start = c.running() ? std::optional<TimeMs>(c.last_start) : std::nullopt;
  row.kept_ms = c.kept_ms;
  if (!c.running()) CloseCosts(row.id, c.finished.value_or(c.seen));
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
  for (const RunRate::Part& part : d.rate.parts) {
    run.costs.push_back({++last_cost_, part.cluster, part.model, part.per_hour});
    open_costs_[id].push_back(last_cost_);
  }
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
  if (d.job.value() >= by_engine_.size()) return;
  DecisionChange c;
  c.time = d.time;
  c.kind = d.kind;
  c.job = d.job;
  c.reason = std::move(d.reason);
  c.nodes = std::move(d.nodes);
  c.where = std::move(d.where);
  if (d.kind == DecisionKind::kRequeue || d.kind == DecisionKind::kPreempt) {
    const JobRecord& rec = engine_->job(d.job);
    c.lost_device_ms = rec.lost_device_ms;
    c.restarts = rec.restarts;
  }
  if (d.kind == DecisionKind::kStart)
    c.rate = engine_->ledger().Rate(engine_->job(d.job).placements);
  if (deferring_) {
    changes_.emplace_back(std::move(c));
    return;
  }
  ApplyChanges();
  ApplyDecision(c);
}

void Daemon::ApplyDecision(const DecisionChange& d) {
  const int64_t id = by_engine_[d.job.value()];
  metrics_.CountDecision(std::string(DecisionKindName(d.kind)));
  if (ResumedStart(d, id)) return;  // written with the restore's batch
  if (d.kind == DecisionKind::kStart) OpenCosts(d, id);
  if (d.kind == DecisionKind::kRequeue || d.kind == DecisionKind::kPreempt) {
    // A run stopped before its end: the work it threw away (since its last checkpoint), all
    // restarts of the job together, in device-seconds.
    json detail = {{"lost_device_seconds", std::round(d.lost_device_ms / 100.0) / 10.0},
                   {"restarts", restart_base_[id - 1] + d.restarts}};
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
                         std::move(nodes), d.where);
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

std::unique_lock<std::mutex> Daemon::LockView() const {
  std::unique_lock<std::mutex> lock(mu_);
  // Catching up is no change of the caller's: the view takes what the engine's thread handed
  // over (the daemon is never a const object; the readers' methods are const).
  const_cast<Daemon*>(this)->ApplyChanges();
  return lock;
}

void Daemon::ViewLoop() {
  pthread_setname_np(pthread_self(), "view");  // as ps and top show it
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    view_cv_.wait(lock, [&] { return view_stopping_ || !changes_.empty(); });
    ApplyChanges();
    if (view_stopping_) return;
  }
}

Result<std::vector<Placement>> Daemon::PlacementsOf(std::vector<StoredTask> tasks) const {
  std::vector<Placement> out;
  out.reserve(tasks.size());
  for (StoredTask& t : tasks) {
    auto node = core_->node_index.find(t.node);
    if (node == core_->node_index.end()) return NotFound("node \"" + t.node + "\" is gone");
    Placement& p = out.emplace_back(std::move(t.placement));
    p.node = node->second;
  }
  return out;
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

Result<SubmitOutcome> Daemon::Submit(const Caller& caller, const std::string& body,
                                     const std::string& idempotency_key, std::string* field) {
  if (caller.role != Role::kAdmin && caller.role != Role::kMember) {
    return PermissionDenied("the " + std::string(RoleName(caller.role)) +
                            " role may not submit jobs");
  }
  // Parsed outside the lock against the configuration in force; a reload before the job
  // reaches the engine is handled there.
  std::shared_ptr<const Spec> spec = this->spec();
  JobLoad parsed = LoadJobText(*spec, {"body", body});
  if (!parsed.job) {
    if (field != nullptr) *field = parsed.diagnostics.Sorted().front().path;
    return InvalidArgument(parsed.diagnostics.ToString());
  }
  const std::string tenant = spec->tenants[parsed.job->tenant.value()].path;
  const std::string resolved = ResolvedJobJson(*spec, *parsed.job).dump();
  if (!caller.MayChange(tenant)) {
    return PermissionDenied("principal \"" + caller.name + "\" may not submit to tenant \"" +
                            tenant + "\"");
  }
  std::shared_future<Status> durable;
  StoredJob row;
  {
    auto lock = LockView();
    if (!idempotency_key.empty()) {
      auto it = by_idempotency_.find(IdempotencyKey(caller.name, idempotency_key));
      if (it != by_idempotency_.end()) {
        const StoredJob& earlier = jobs_[it->second - 1];
        if (!SameRequestBody(earlier.body, body)) {
          return FailedPrecondition("Idempotency-Key \"" + idempotency_key +
                                    "\" was used for a different request (job " +
                                    std::to_string(earlier.id) + ")");
        }
        return SubmitOutcome{earlier, true};
      }
    }
    auto same = by_name_.find(parsed.job->name);
    if (same != by_name_.end()) {
      for (int64_t id : same->second) {
        const StoredJob& other = jobs_[id - 1];
        if (other.tenant == tenant && !Terminal(other.state)) {
          return AlreadyExists("tenant \"" + tenant + "\" already has an active job named \"" +
                               other.name + "\" (id " + std::to_string(id) + ")");
        }
      }
    }
    row.name = parsed.job->name;
    row.tenant = tenant;
    row.body = body;
    row.idempotency_key = idempotency_key;
    row.principal = caller.name;
    row.job_class = std::string(WorkloadClassName(parsed.job->job_class));
    row.resolved = resolved;
    row.submitted = clock_.Now();
    durable = AddRow(row);
  }
  Status s = durable.get();
  auto lock = LockView();
  if (!s.ok()) {
    // Not durable, so not accepted: the row stays as a failed submission nobody sees again.
    StoredJob& failed = jobs_[row.id - 1];
    failed.state = "failed";
    failed.reason = "store";
    failed.detail = s.message();
    ++hidden_rows_;
    if (!idempotency_key.empty())
      by_idempotency_.erase(IdempotencyKey(caller.name, idempotency_key));
    return Unavailable("the store did not accept the job: " + s.message());
  }
  if (spec != spec_) {
    // The configuration was reloaded meanwhile: the job's ids are the old one's.
    Result<Job> again = ResolvedJobReader(*spec_).Read(resolved);
    if (!again.ok()) {
      StoredJob& failed = jobs_[row.id - 1];
      failed.state = "failed";
      failed.reason = "invalid";
      failed.detail = "no longer valid after a reload: " + again.status().message();
      failed.finished = clock_.Now();
      store_->UpdateJob(JobUpdate::Of(failed));
      return SubmitOutcome{failed, false};
    }
    parsed.job = std::move(*again);
  }
  inbox_.push_back({row.id, std::move(*parsed.job)});
  Poke();
  return SubmitOutcome{View(row.id), false};
}

std::shared_future<Status> Daemon::AddRow(StoredJob& row) {
  row.id = static_cast<int64_t>(jobs_.size()) + 1;
  row.state = "pending";
  row.reason = std::string(PendingReasonCode(PendingReason::kNew));
  jobs_.push_back(row);
  jobs_.back().resolved = std::string();  // in the store only: read on restart
  engine_id_.emplace_back();
  restart_base_.push_back(0);
  placed_generation_.push_back(kNoPlacement);
  by_name_[row.name].push_back(row.id);
  if (!row.idempotency_key.empty()) {
    by_idempotency_[IdempotencyKey(row.principal, row.idempotency_key)] = row.id;
  }
  return store_->InsertJob(row);
}

JobId Daemon::Enqueue(int64_t id, Job job, TimeMs at) {
  JobId eid = engine_->Submit(std::move(job), at);
  if (by_engine_.size() <= eid.value()) by_engine_.resize(eid.value() + 1, 0);
  by_engine_[eid.value()] = id;
  engine_id_[id - 1] = eid;
  return eid;
}

Result<int64_t> Daemon::Resolve(const Caller& caller, const std::string& ref,
                                const std::string& tenant) const {
  auto hidden = [&] { return NotFound("no job \"" + ref + "\""); };
  if (IsNumber(ref)) {
    int64_t id = std::stoll(ref);
    if (id < 1 || id > static_cast<int64_t>(jobs_.size())) return hidden();
    const StoredJob& j = jobs_[id - 1];
    // Another tenant's job is reported as missing, not forbidden: its existence is theirs.
    if (!caller.MaySee(j.tenant) || j.reason == "store") return hidden();
    return id;
  }
  auto it = by_name_.find(ref);
  if (it == by_name_.end()) return hidden();
  int64_t found = 0;
  std::string found_tenant;
  for (auto id = it->second.rbegin(); id != it->second.rend(); ++id) {
    const StoredJob& j = jobs_[*id - 1];
    if (!caller.MaySee(j.tenant) || j.reason == "store") continue;
    if (!tenant.empty() && j.tenant != tenant) continue;
    if (found == 0) {
      found = *id;
      found_tenant = j.tenant;
    } else if (j.tenant != found_tenant) {
      return FailedPrecondition("job name \"" + ref + "\" is used by tenants \"" + found_tenant +
                                "\" and \"" + j.tenant + "\"; give the tenant or the id");
    }
  }
  if (found == 0) return hidden();
  return found;
}

Result<StoredJob> Daemon::GetJob(const Caller& caller, const std::string& ref,
                                 const std::string& tenant) const {
  auto lock = LockView();
  auto id = Resolve(caller, ref, tenant);
  if (!id.ok()) return id.status();
  return View(*id);
}

StoredJob Daemon::View(int64_t id) const {
  StoredJob row = jobs_[id - 1];
  const std::optional<JobId>& eid = engine_id_[id - 1];
  if (!eid) return row;
  // Why a job waits changes every cycle without a transition: read it from the engine.
  const JobRecord& rec = engine_->job(*eid);
  if (rec.state == JobState::kPending || rec.state == JobState::kAdmitted) {
    row.reason = std::string(PendingReasonCode(rec.reason));
    row.detail = rec.detail;
  }
  return row;
}

JobPage Daemon::ListJobs(const Caller& caller, const JobFilter& f) const {
  auto lock = LockView();
  JobPage page;
  int limit = std::clamp(f.limit, 1, 1000);
  // Newest first: the page holds the newest matches below the cursor (an id; 0 = from the
  // newest); every match counts in the total, so that a client can say "N of M shown".
  for (size_t i = jobs_.size(); i-- > 0;) {
    const StoredJob& j = jobs_[i];
    if (j.reason == "store" || !caller.MaySee(j.tenant)) continue;
    if (!f.tenant.empty() && !WithinTenant(j.tenant, f.tenant)) continue;
    if (!f.name.empty() && j.name != f.name) continue;
    if (f.state == "active" ? Terminal(j.state) : !f.state.empty() && j.state != f.state) continue;
    if (!f.job_class.empty() && j.job_class != f.job_class) continue;
    ++page.total;
    if (f.after > 0 && j.id >= f.after) continue;
    if (static_cast<int>(page.jobs.size()) == limit) {
      page.next = page.jobs.back().id;
      continue;
    }
    page.jobs.push_back(View(j.id));
  }
  return page;
}

namespace {

Status AlreadyEnded(const StoredJob& row) {
  return FailedPrecondition("job " + std::to_string(row.id) + " has already ended (" + row.state +
                            ")");
}

}  // namespace

Result<StoredJob> Daemon::Cancel(const Caller& caller, const std::string& ref,
                                 const std::string& tenant) {
  int64_t id = 0;
  std::shared_future<Status> durable;
  {
    auto lock = LockView();
    auto found = Resolve(caller, ref, tenant);
    if (!found.ok()) return found.status();
    id = *found;
    const StoredJob& row = jobs_[id - 1];
    if (!caller.MayChange(row.tenant)) {
      return PermissionDenied("principal \"" + caller.name + "\" may not cancel jobs of tenant \"" +
                              row.tenant + "\"");
    }
    if (Terminal(row.state)) return AlreadyEnded(row);
    TakeArrivals();
    if (!engine_id_[id - 1]) {
      return Unavailable("job " + std::to_string(id) + " is still being stored");
    }
    // Durable before it is done or answered: a store that fails leaves the job as it was (503),
    // and a restart after the answer finds it cancelled. The engine's record follows.
    StoredJob cancelled = row;
    cancelled.state = "cancelled";
    cancelled.reason.clear();
    cancelled.finished = clock_.Now();
    cancelled.run_start.reset();
    durable = store_->CommitJobUpdate(JobUpdate::Of(cancelled));
  }
  Status s = durable.get();
  auto lock = LockView();
  if (!s.ok()) return Unavailable("the store did not record the cancel: " + s.message());
  const StoredJob& row = jobs_[id - 1];
  if (Terminal(row.state)) {
    // It ended while the cancel was written: the store is told how, again, after it.
    store_->UpdateJob(JobUpdate::Of(row));
    return AlreadyEnded(row);
  }
  engine_->Cancel(*engine_id_[id - 1], clock_.Now());
  RunEngine();
  Poke();
  return row;
}

Result<json> Daemon::Explain(const Caller& caller, const std::string& ref,
                             const std::string& tenant) {
  StoredJob row;
  {
    auto lock = LockView();
    auto id = Resolve(caller, ref, tenant);
    if (!id.ok()) return id.status();
    row = View(*id);
  }
  json out = {{"id", row.id}, {"name", row.name}, {"tenant", row.tenant}, {"state", row.state}};
  if (row.state == "pending" || row.state == "admitted") {
    out["why_pending"] = {{"code", row.reason}, {"detail", row.detail}};
  } else if (row.state == "running" || row.state == "placed") {
    out["why_here"] = row.detail;
    out["placement"] = PlacementView(row.placement);
  }
  // Decisions are written behind the engine: read after everything queued so far.
  if (Status s = store_->Flush().get(); !s.ok()) return s;
  auto log = store_->QueryDecisions(row.id);
  if (!log.ok()) return log.status();
  json decisions = json::array();
  for (const StoredDecision& d : *log) {
    json line = {{"time_ms", d.time}, {"kind", d.kind}, {"reason", d.reason}};
    auto detail = json::parse(d.detail, nullptr, false);
    if (!detail.is_discarded() && !detail.empty()) line["detail"] = detail;
    decisions.push_back(line);
  }
  out["decisions"] = decisions;
  return out;
}

Result<json> Daemon::Decisions(const Caller& caller, DecisionQuery q) const {
  const int want = std::clamp(q.limit, 1, 1000);
  q.limit = 1000;
  // Decisions are written behind the engine: read after everything queued so far.
  if (Status s = store_->Flush().get(); !s.ok()) return s;
  json items = json::array();
  // Reads on until the page is full: rows of jobs the caller may not see are skipped.
  for (int reads = 0; reads < 20; ++reads) {
    auto rows = store_->QueryDecisionLog(q);
    if (!rows.ok()) return rows.status();
    auto lock = LockView();
    for (const StoredDecision& d : *rows) {
      q.after = d.seq;
      if (d.job < 1 || d.job > static_cast<int64_t>(jobs_.size())) continue;
      const StoredJob& j = jobs_[d.job - 1];
      if (!caller.MaySee(j.tenant)) continue;
      json line = {{"seq", d.seq},
                   {"time_ms", d.time},
                   {"kind", d.kind},
                   {"job", {{"id", j.id}, {"name", j.name}, {"tenant", j.tenant}}},
                   {"reason", d.reason}};
      auto detail = json::parse(d.detail, nullptr, false);
      if (!detail.is_discarded() && !detail.empty()) line["detail"] = detail;
      items.push_back(std::move(line));
      if (static_cast<int>(items.size()) == want) return json{{"items", items}, {"next", d.seq}};
    }
    if (static_cast<int>(rows->size()) < q.limit) return json{{"items", items}};
  }
  return json{{"items", items}, {"next", q.after}};
}

Status Daemon::PutPrincipal(const Caller& caller, Principal p, std::string* field) {
  if (caller.role != Role::kAdmin) return PermissionDenied("only admins manage principals");
  auto invalid = [&](const char* f, const std::string& why) {
    if (field) *field = f;
    return InvalidArgument(why);
  };
  std::optional<Role> role = ParseRole(p.role);
  if (!role) {
    return invalid("role",
                   "role \"" + p.role + "\" is not one of admin, operator, member, viewer, agent");
  }
  if ((*role == Role::kMember || *role == Role::kViewer) && p.tenant.empty()) {
    return invalid("tenant", "a " + p.role + " needs a tenant");
  }
  if (!p.tenant.empty() && !spec()->FindTenant(p.tenant)) {
    return invalid("tenant", "unknown tenant \"" + p.tenant + "\"");
  }
  if (*role == Role::kAgent && p.node.empty()) {
    return invalid("node",
                   "an agent is bound to exactly one node: name it (tessera principal create " +
                       p.name + " --role agent --node NODE)");
  }
  if (!p.node.empty()) {
    if (*role != Role::kAgent) return invalid("node", "only an agent is bound to a node");
    auto lock = LockView();
    if (!core_->node_index.contains(p.node)) {
      return invalid("node", "no node \"" + p.node + "\" in the fleet");
    }
  }
  p.created = clock_.Now();
  if (Status s = store_->PutPrincipal(p).get(); !s.ok()) return s;
  auth_.Add(p);
  return Status::Ok();
}

Status Daemon::DeletePrincipal(const Caller& caller, const std::string& name) {
  if (caller.role != Role::kAdmin) return PermissionDenied("only admins delete principals");
  std::optional<Principal> p = auth_.Find(name);
  if (!p) return NotFound("no principal \"" + name + "\"");
  if (name == caller.name) return FailedPrecondition("a principal cannot delete itself");
  if (p->role == "admin") {
    size_t admins = 0;
    for (const Principal& other : auth_.Principals())
      admins += other.role == "admin";
    if (admins <= 1) return FailedPrecondition("\"" + name + "\" is the last admin");
  }
  if (Status s = store_->DeletePrincipal(name).get(); !s.ok()) return s;
  auth_.Remove(name);
  return Status::Ok();
}

Result<size_t> Daemon::RevokeTokens(const Caller& caller, const std::string& principal) {
  if (caller.role != Role::kAdmin) return PermissionDenied("only admins revoke tokens");
  if (!auth_.Find(principal)) return NotFound("no principal \"" + principal + "\"");
  if (Status s = store_->DeleteTokens(principal).get(); !s.ok()) return s;
  return auth_.RevokeTokens(principal);
}

Result<std::string> Daemon::IssueToken(const Caller& caller, const std::string& principal,
                                       std::optional<TimeMs> expires) {
  if (caller.role != Role::kAdmin) return PermissionDenied("only admins issue tokens");
  std::optional<Principal> p = auth_.Find(principal);
  if (!p) return NotFound("no principal \"" + principal + "\"");
  if (p->role == "agent" && p->node.empty()) {
    return InvalidArgument("\"" + principal +
                           "\" is an agent bound to no node (made by an older tessera); create "
                           "one per node with --role agent --node NODE");
  }
  std::string token = NewToken();
  StoredToken t{HashToken(token), principal, expires, clock_.Now()};
  if (Status s = store_->PutToken(t).get(); !s.ok()) return s;
  auth_.AddToken(t);
  return token;
}

std::vector<Gauge> Daemon::Gauges() const {
  auto lock = LockView();
  std::map<std::pair<std::string, std::string>, int64_t> queued;  // (class, tenant)
  std::map<std::string, int64_t> states;
  for (const StoredJob& j : jobs_) {
    if (j.reason == "store") continue;
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
  std::vector<Gauge> out = {queue,   jobs,     capacity, allocated, writes,
                            batches, degraded, replicas, load};
  for (Gauge& g : AgentGauges())
    out.push_back(std::move(g));
  return out;
}

Daemon::Counts Daemon::counts() const {
  auto lock = LockView();
  // Accepted jobs the engine's thread has yet to take wait too.
  // Rows of submissions the store refused are placeholders nobody sees: not jobs.
  return {engine_->pending_count() + inbox_.size(), engine_->running_count(),
          jobs_.size() - hidden_rows_};
}

}  // namespace tessera
