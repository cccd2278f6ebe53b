// Starting the daemon: its store read back, the jobs that had not ended rebuilt into the
// engine (their resolved forms parsed in chunks beside the load), their runs adopted.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "config/job_json.h"
#include "config/loader.h"
#include "server/daemon.h"
#include "server/daemon_internal.h"
#include "server/placement_view.h"

namespace tessera {

using json = nlohmann::ordered_json;

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
// had one) in chunks of ids, each thread on a connection of its own (one ActiveJobReader), and
// parses it straight from the store's buffers. Workers start at once, beside the store's Load of
// the rows; the restore then takes the jobs in id order, parsing a chunk itself when no worker has
// it yet (or a later one while it waits), so that rebuilding the engine overlaps the parsing of
// what comes after. The rows are independent and the reader immutable.
class ResolvedJobs {
 public:
  ResolvedJobs(const Spec& spec, const DurableStore& store, int64_t last_id)
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
    if (Claim(chunk)) Parse(chunk, take_reader_);
    while (state_[chunk].load(std::memory_order_acquire) != kDone) {
      // Another thread parses it: parse a later chunk meanwhile, or wait.
      size_t later = chunk + 1;
      while (later < state_.size() && !Claim(later))
        ++later;
      if (later < state_.size()) {
        Parse(later, take_reader_);
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

  // `reader`: the calling thread's, opened at its first chunk.
  void Parse(size_t chunk, std::unique_ptr<DurableStore::ActiveJobReader>& reader) {
    const auto from = static_cast<int64_t>(chunk * kChunk) + 1;
    const auto last = static_cast<int64_t>(by_id_.size());
    Status s;
    if (reader == nullptr) {
      auto opened = store_.OpenActiveJobReader();
      if (opened.ok()) {
        reader = std::move(*opened);
      } else {
        s = opened.status();
      }
    }
    if (reader != nullptr)
      s = reader->Read(
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
    std::unique_ptr<DurableStore::ActiveJobReader> reader;
    for (size_t chunk = next_++; chunk < state_.size() && !stopping_; chunk = next_++) {
      if (Claim(chunk)) Parse(chunk, reader);
    }
  }

  const ResolvedJobReader reader_;
  const DurableStore& store_;
  std::unique_ptr<DurableStore::ActiveJobReader> take_reader_;  // Take's caller's
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

Result<DaemonStarted> Daemon::Start(Spec spec, std::unique_ptr<DurableStore> store,
                                    const Clock& clock, DaemonOptions options) {
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
  d->backends_->emulated().SetSink(d->sink_.get());
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
    d->backends_->UseSlurm(std::make_unique<SlurmClusters>(std::move(slurm), [p] {
      MutexLock lock(p->mu_);
      p->host_.Poke();
    }));
  }
  auto core = d->MakeCore(d->spec_);
  if (!core.ok()) return core.status();
  // No thread of the daemon's runs yet; what calls in (Slurm's pokes) waits for the start.
  MutexLock lock(d->mu_);
  d->Install(std::move(*core));
  for (const NodeFlags& f : snap->nodes)
    d->flags_[f.node] = f;
  d->ApplyFlags();

  Result<std::string> made =
      d->principals_.Load(snap->principals, snap->tokens, d->options_.admin_token);
  if (!made.ok()) return made.status();
  // Runs open when the previous process ended ended with it.
  d->store_->EndOpenCosts(snap->last_seen);
  d->accounting_.Resume(snap->last_cost);
  for (StoredService& v : snap->services) {
    std::string name = v.name;
    d->services_[name] = {std::move(v), "", true};
  }
  d->DriveServices();
  if (Status s = d->Restore(*snap, resolved); !s.ok()) return s;
  d->ApplyAgents();
  d->start_times_.restore_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  d->start_times_.jobs = d->book_.size();
  d->start_times_.active = d->engine_->active_count();
  lock.unlock();
  d->view_ = std::thread([p = d.get()] { p->ViewLoop(); });
  d->loop_ = std::thread([p = d.get()] { p->Loop(); });
  return DaemonStarted{std::move(d), std::move(*made)};
}

Status Daemon::Restore(StoreSnapshot& snap, ResolvedJobs& resolved) {
  const TimeMs now = clock_.Now();
  std::vector<JobId> orphans;
  restoring_ = true;
  engine_->Reserve(static_cast<size_t>(std::count_if(
      snap.jobs.begin(), snap.jobs.end(), [](const StoredJob& j) { return !Terminal(j.state); })));
  book_.ReserveEngine(engine_->job_count() + snap.jobs.size());
  // The rows first (by id): then their name and key indexes are built on another core while
  // this one rebuilds the engine (which writes none of the fields the indexes read).
  book_.Load(std::move(snap.jobs));
  // Outside the analysis: the thread reads only what nobody writes until the join.
  std::thread indexes([this]() NO_THREAD_SAFETY_ANALYSIS { book_.IndexNames(); });
  for (StoredJob& row : book_.rows()) {
    if (JobBook::Hidden(row)) continue;  // a gap
    // Freed as soon as it is used: the engine's records of the next jobs take its memory
    // rather than fresh pages.
    Result<std::unique_ptr<RestoredJob>> taken = resolved.Take(row.id);
    if (!taken.ok()) {
      indexes.join();
      return taken.status();
    }
    if (*taken != nullptr) RestoreRow(row, **taken, now, snap.last_seen, orphans);  // else ended
  }
  indexes.join();
  WriteResumed();
  restoring_ = false;
  for (JobId id : orphans)
    engine_->Cancel(id, now);  // replicas of a service that is gone
  return Status::Ok();
}

void Daemon::RestoreRow(StoredJob& row, RestoredJob& restored, TimeMs now, TimeMs last_seen,
                        std::vector<JobId>& orphans) {
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
    return;
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
      TimeMs started = row.run_start.value_or(last_seen);
      // An elastic gang short of tasks progressed at its members' share of the pace.
      const double share = MembersShare(placements->size(), engine_->job(id).task_count);
      Millis kept =
          row.kept_ms + static_cast<Millis>(
                            static_cast<double>(std::max<Millis>(0, last_seen - started)) * share);
      adopted = engine_->Adopt(id, std::move(*placements), row.first_start.value_or(started), kept);
    }
    if (!adopted.ok()) {
      ++book_.restart_base(row.id);
      json note = {{"note", "the run could not be resumed where it was: " + adopted.message()}};
      store_->AppendDecision({0, now, "requeue", row.id, "daemon-restart", note.dump()});
    }
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

}  // namespace tessera
