#include "backends/slurm/slurm_clusters.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "backends/shell.h"
#include "common/clock.h"

namespace tessera {

namespace {

SlurmEvent MakeEvent(SlurmEvent::Kind kind, const std::string& cluster, const std::string& node,
                     std::string detail) {
  SlurmEvent e;
  e.kind = kind;
  e.cluster = cluster;
  e.node = node;
  e.detail = std::move(detail);
  return e;
}

SlurmEvent RunEnded(const std::string& cluster, RunOutcome o) {
  SlurmEvent e;
  e.kind = SlurmEvent::Kind::kRunEnded;
  e.cluster = cluster;
  e.outcome = std::move(o);
  return e;
}

}  // namespace

SlurmClusters::SlurmClusters(std::vector<SlurmClusterConfig> clusters, std::function<void()> wake,
                             Millis poll_interval)
    : poll_interval_(poll_interval), wake_(std::move(wake)) {
  for (SlurmClusterConfig& c : clusters) {
    std::error_code ec;
    std::filesystem::create_directories(c.work_dir, ec);
    std::string name = c.name;
    clusters_[name].config = std::move(c);
  }
  worker_ = std::thread([this] { Loop(); });
}

SlurmClusters::~SlurmClusters() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void SlurmClusters::Submit(const std::string& cluster, RunOrder order,
                           std::vector<SlurmTaskShape> shapes) {
  MutexLock lock(mu_);
  Track& t = runs_[{order.job, order.run}];
  t = Track();
  t.cluster = cluster;
  t.generation = order.generation;
  pending_.push_back({cluster, std::move(order), std::move(shapes)});
  kicked_ = true;
  cv_.notify_all();
}

void SlurmClusters::Stop(int64_t job, int32_t run, Millis grace) {
  MutexLock lock(mu_);
  stops_.push_back({{job, run}, grace});
  kicked_ = true;
  cv_.notify_all();
}

std::vector<SlurmEvent> SlurmClusters::Take() {
  MutexLock lock(mu_);
  std::vector<SlurmEvent> out;
  out.swap(events_);
  return out;
}

std::optional<SlurmNode> SlurmClusters::NodeInfo(const std::string& node) const {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return std::nullopt;
  return it->second;
}

bool SlurmClusters::Manages(int64_t job, int32_t run) const {
  MutexLock lock(mu_);
  return runs_.count({job, run}) > 0;
}

std::optional<std::string> SlurmClusters::Log(const TaskKey& key) const {
  // Task output files are named by key (job ids are the daemon's): the run's cluster holds it,
  // whether or not the run is still tracked.
  std::ifstream in;
  for (const auto& [name, c] : clusters_) {
    in.open(c.config.work_dir + "/" + key.ToString() + ".log", std::ios::binary);
    if (in) break;
    in.clear();
  }
  if (!in.is_open()) return std::nullopt;
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff from = std::max<std::streamoff>(0, size - 16 * 1024);
  in.seekg(from);
  std::string out(static_cast<size_t>(size - from), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

void SlurmClusters::Emit(SlurmEvent e) {
  {
    MutexLock lock(mu_);
    events_.push_back(std::move(e));
  }
  if (wake_) wake_();
}

bool SlurmClusters::Command(const Cluster& c, const std::string& args, std::string* out,
                            const std::string& input_file, int timeout_s) const {
  std::string cmd = "SLURM_CONF=" + ShellQuote(c.config.slurm_conf) + " timeout " +
                    std::to_string(timeout_s) + " " + args;
  if (!input_file.empty()) cmd += " " + ShellQuote(input_file);
  return RunCommand(cmd + " 2>&1", out);
}

void SlurmClusters::Poll(Cluster& c, TimeMs now) {
  (void)now;
  std::string out;
  bool ok = Command(c, "squeue --json --states=all", &out, "", 5);
  Result<std::vector<SlurmJob>> jobs = ok ? ParseSqueueJson(out) : InvalidArgument(out);
  if (!jobs.ok()) {
    if (c.reachable || !c.polled) {
      c.reachable = false;
      c.polled = true;
      std::string why = jobs.status().message();
      while (!why.empty() && (why.back() == '\n' || why.back() == ' '))
        why.pop_back();
      Emit(MakeEvent(SlurmEvent::Kind::kUnreachable, c.config.name, "", why.substr(0, 300)));
    }
    return;
  }
  if (!c.reachable) {
    c.reachable = true;
    Emit(MakeEvent(SlurmEvent::Kind::kReachable, c.config.name, "", ""));
  }
  c.jobs.clear();
  c.jobs_by_name.clear();
  for (SlurmJob& j : *jobs) {
    if (!ParseSlurmJobName(j.name)) continue;
    auto& slot = c.jobs_by_name[j.name];
    slot = std::max(slot, j.id);  // the latest job of that name
    c.jobs[j.id] = std::move(j);
  }
  // The runs' ends.
  std::vector<SlurmEvent> ended;
  {
    MutexLock lock(mu_);
    for (auto it = runs_.begin(); it != runs_.end();) {
      Track& t = it->second;
      auto j =
          t.cluster == c.config.name && t.slurm_id != 0 ? c.jobs.find(t.slurm_id) : c.jobs.end();
      if (j == c.jobs.end()) {
        ++it;
        continue;
      }
      const std::string& state = j->second.state;
      bool over = state != "PENDING" && state != "RUNNING" && state != "CONFIGURING" &&
                  state != "COMPLETING" && state != "SUSPENDED" && state != "REQUEUED";
      if (t.stopped) {
        it = over ? runs_.erase(it) : std::next(it);
        continue;
      }
      std::optional<SlurmEnd> outcome = SlurmOutcome(j->second);
      if (!t.ended && outcome) {
        t.ended = true;
        RunOutcome o{it->first.first, it->first.second, t.generation, outcome->succeeded,
                     outcome->succeeded ? "Slurm job " + std::to_string(t.slurm_id) + " completed"
                                        : outcome->detail};
        ended.push_back(RunEnded(c.config.name, std::move(o)));
      } else if (!t.ended && over && state == "CANCELLED") {
        t.ended = true;
        RunOutcome o{it->first.first, it->first.second, t.generation, false,
                     "Slurm job " + std::to_string(t.slurm_id) + " was cancelled outside Tessera"};
        ended.push_back(RunEnded(c.config.name, std::move(o)));
      }
      ++it;
    }
  }
  for (SlurmEvent& e : ended)
    Emit(std::move(e));
  // The nodes' health.
  if (!Command(c, "sinfo -h -N -o '" + std::string(kSinfoFormat) + "'", &out, "", 5)) return;
  auto states = ParseSinfoNodes(out);
  if (!states.ok()) return;
  {
    MutexLock lock(mu_);
    for (const std::string& node : c.config.nodes) {
      auto s = states->find(node);
      if (s != states->end()) nodes_[node] = s->second;
    }
  }
  for (const std::string& node : c.config.nodes) {
    auto s = states->find(node);
    std::string state = s == states->end() ? "missing from the controller" : s->second.state;
    bool usable = s != states->end() && SlurmNodeUsable(state);
    auto was = c.usable.find(node);
    if (was != c.usable.end() && was->second == usable) continue;
    if (!usable) {
      Emit(MakeEvent(SlurmEvent::Kind::kNodeDown, c.config.name, node, state));
    } else if (was != c.usable.end()) {
      Emit(MakeEvent(SlurmEvent::Kind::kNodeUp, c.config.name, node, state));
    }
    c.usable[node] = usable;
  }
  c.polled = true;
}

void SlurmClusters::SubmitNow(Pending p, TimeMs now) {
  (void)now;
  Cluster& c = clusters_.at(p.cluster);
  RunId id{p.order.job, p.order.run};
  const std::string name = SlurmJobName(id.first, id.second);
  auto existing = c.jobs_by_name.find(name);
  if (existing != c.jobs_by_name.end() && c.jobs.at(existing->second).state != "CANCELLED") {
    // The run's job is there already (a restarted daemon adopting it): tracked, not resubmitted.
    MutexLock lock(mu_);
    auto t = runs_.find(id);
    if (t != runs_.end()) t->second.slurm_id = existing->second;
    return;
  }
  const std::string key = std::to_string(id.first) + "." + std::to_string(id.second);
  const std::string checkpoints = c.config.work_dir + "/checkpoints";
  SlurmSubmission s = BuildSubmission(p.order, p.shapes, c.config.partition, c.config.work_dir,
                                      checkpoints, std::nullopt);
  const std::string script = c.config.work_dir + "/" + key + ".sh";
  std::ofstream(script) << s.script;
  std::string args = "sbatch";
  for (const std::string& a : s.args)
    args += " " + ShellQuote(a);
  std::string out;
  bool ok = Command(c, args, &out, script);
  int64_t slurm_id = 0;
  if (ok) slurm_id = std::atoll(out.c_str());
  if (slurm_id <= 0) {
    while (!out.empty() && out.back() == '\n')
      out.pop_back();
    MutexLock lock(mu_);
    auto t = runs_.find(id);
    if (t == runs_.end() || t->second.stopped) return;
    t->second.ended = true;
    RunOutcome o{id.first, id.second, t->second.generation, false,
                 "sbatch on " + c.config.name + " refused the run: " + out.substr(0, 300)};
    events_.push_back(RunEnded(c.config.name, std::move(o)));
    return;
  }
  MutexLock lock(mu_);
  auto t = runs_.find(id);
  if (t != runs_.end()) t->second.slurm_id = slurm_id;
}

void SlurmClusters::Loop() {
  SystemClock clock;
  MutexLock lock(mu_);
  while (!stopping_) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(poll_interval_);
    while (!stopping_ && !kicked_ && cv_.wait_until(lock, until) == std::cv_status::no_timeout) {
    }
    if (stopping_) break;
    kicked_ = false;
    std::vector<std::pair<RunId, Millis>> stops;
    stops.swap(stops_);
    TimeMs now = clock.Now();

    // Stops first (from the last poll's view of the jobs): SIGTERM to the steps of a running
    // job, cancelled at once when pending or given no grace; a run not submitted yet is simply
    // not submitted.
    std::vector<std::string> commands;
    std::vector<std::string> on_cluster;
    for (const auto& stop : stops) {
      const RunId id = stop.first;  // a plain variable: lambdas capture it (clang 14)
      const Millis grace = stop.second;
      auto it = runs_.find(id);
      if (it == runs_.end()) continue;
      Track& t = it->second;
      t.stopped = true;
      if (t.slurm_id == 0) {
        std::erase_if(pending_, [&](const Pending& p) {
          return p.order.job == id.first && p.order.run == id.second;
        });
        runs_.erase(it);
        continue;
      }
      const Cluster& c = clusters_.at(t.cluster);
      auto j = c.jobs.find(t.slurm_id);
      bool running = j != c.jobs.end() && j->second.state == "RUNNING";
      if (grace > 0 && running) {
        // The job's steps (its tasks) get SIGTERM; the batch script (srun) waits for them.
        commands.push_back("scancel --signal=TERM " + std::to_string(t.slurm_id));
        t.kill_at = now + grace;
      } else {
        commands.push_back("scancel " + std::to_string(t.slurm_id));
      }
      on_cluster.push_back(t.cluster);
    }
    for (auto& [id, t] : runs_) {
      if (t.stopped && t.kill_at != 0 && t.kill_at <= now) {
        commands.push_back("scancel " + std::to_string(t.slurm_id));
        on_cluster.push_back(t.cluster);
        t.kill_at = 0;
      }
    }
    // Submissions, before the poll (a placement reaches Slurm at once), to controllers that have
    // answered since the start: a restarted daemon must see what runs there before it submits.
    std::vector<Pending> ready;
    for (auto it = pending_.begin(); it != pending_.end();) {
      const Cluster& c = clusters_.at(it->cluster);
      if (c.polled && c.reachable) {
        ready.push_back(std::move(*it));
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();
    for (size_t i = 0; i < commands.size(); ++i) {
      std::string out;
      Command(clusters_.at(on_cluster[i]), commands[i], &out);
    }
    for (Pending& p : ready)
      SubmitNow(std::move(p), now);
    if (!ready.empty() && wake_) wake_();
    for (auto& [name, c] : clusters_)
      Poll(c, clock.Now());
    lock.lock();
    // Submissions that waited for a controller's first answer go at once.
    for (const Pending& p : pending_) {
      const Cluster& c = clusters_.at(p.cluster);
      if (c.polled && c.reachable) kicked_ = true;
    }
  }
}

}  // namespace tessera
