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

// Whether a Slurm job in `state` is over (not waiting, running or about to).
bool Over(const std::string& state) {
  return state != "PENDING" && state != "RUNNING" && state != "CONFIGURING" &&
         state != "COMPLETING" && state != "SUSPENDED" && state != "REQUEUED";
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
  if (order.elastic) {
    t.elastic = true;
    t.tasks = order.task_count > 0 ? order.task_count : static_cast<int32_t>(order.tasks.size());
    for (size_t i = 0; i < order.tasks.size(); ++i)
      QueuePart(cluster, order, shapes, i);
  } else {
    pending_.push_back({cluster, std::move(order), std::move(shapes), std::nullopt});
  }
  kicked_ = true;
  cv_.notify_all();
}

void SlurmClusters::QueuePart(const std::string& cluster, const RunOrder& order,
                              const std::vector<SlurmTaskShape>& shapes, size_t i) {
  RunOrder one = order;
  one.tasks = {order.tasks[i]};
  runs_[{order.job, order.run}].parts[order.tasks[i].index] = Part();
  pending_.push_back({cluster, std::move(one), {shapes[i]}, order.tasks[i].index});
}

void SlurmClusters::Resize(const std::string& cluster, const RunOrder& order,
                           const std::vector<SlurmTaskShape>& shapes, Millis grace) {
  MutexLock lock(mu_);
  const RunId id{order.job, order.run};
  auto it = runs_.find(id);
  if (it == runs_.end() || !it->second.elastic || it->second.stopped || it->second.ended) return;
  Track& t = it->second;
  t.generation = order.generation;
  std::set<int32_t> kept;
  for (const RunOrder::Task& task : order.tasks)
    kept.insert(task.index);
  for (auto p = t.parts.begin(); p != t.parts.end();) {
    if (kept.count(p->first)) {
      ++p;
      continue;
    }
    // Given up: not submitted yet, it is simply not submitted; else it is cancelled.
    const int32_t task = p->first;
    std::erase_if(pending_, [&](const Pending& q) {
      return q.order.job == id.first && q.order.run == id.second && q.task == task;
    });
    if (p->second.slurm_id != 0) {
      t.retired.insert(p->second.slurm_id);
      part_stops_.push_back({id, p->second, grace});
    }
    p = t.parts.erase(p);
  }
  for (size_t i = 0; i < order.tasks.size(); ++i) {
    const int32_t task = order.tasks[i].index;
    if (!t.parts.count(task) && !t.done.count(task)) QueuePart(cluster, order, shapes, i);
  }
  kicked_ = true;
  cv_.notify_all();
}

void SlurmClusters::StopPart(Track& t, Part part, Millis grace, TimeMs now,
                             std::vector<std::string>& commands,
                             std::vector<std::string>& on_cluster) {
  if (part.slurm_id == 0) return;  // not submitted: its submission is gone already
  const Cluster& c = clusters_.at(t.cluster);
  auto j = c.jobs.find(part.slurm_id);
  const bool running = j != c.jobs.end() && j->second.state == "RUNNING";
  if (grace > 0 && running) {
    commands.push_back("scancel --signal=TERM " + std::to_string(part.slurm_id));
    part.kill_at = now + grace;
    t.dying.push_back(part);
  } else {
    commands.push_back("scancel " + std::to_string(part.slurm_id));
  }
  on_cluster.push_back(t.cluster);
}

std::optional<RunOutcome> SlurmClusters::PollParts(const Cluster& c, const RunId& id, Track& t,
                                                   std::vector<int64_t>& cancel) {
  for (auto p = t.parts.begin(); p != t.parts.end(); ++p) {
    auto j = p->second.slurm_id != 0 ? c.jobs.find(p->second.slurm_id) : c.jobs.end();
    if (j == c.jobs.end()) continue;
    std::optional<SlurmEnd> outcome = SlurmOutcome(j->second);
    if (outcome && outcome->succeeded) {
      t.done.insert(p->first);
      continue;
    }
    if (!outcome && !(Over(j->second.state) && j->second.state == "CANCELLED")) continue;
    // One task failed: the run failed, and its other tasks stop.
    t.ended = true;
    for (const auto& [task, part] : t.parts)
      if (part.slurm_id != 0 && task != p->first) cancel.push_back(part.slurm_id);
    const std::string task = "task " + std::to_string(p->first);
    return RunOutcome{id.first, id.second, t.generation, false,
                      outcome ? task + ": " + outcome->detail
                              : task + "'s Slurm job " + std::to_string(p->second.slurm_id) +
                                    " was cancelled outside Tessera"};
  }
  std::erase_if(t.parts, [&](const auto& p) { return t.done.count(p.first) > 0; });
  if (static_cast<int32_t>(t.done.size()) < t.tasks) return std::nullopt;
  t.ended = true;
  return RunOutcome{id.first, id.second, t.generation, true, "every task's Slurm job completed"};
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
  std::vector<int64_t> cancel;  // the other tasks of an elastic run one of whose tasks failed
  {
    MutexLock lock(mu_);
    for (auto it = runs_.begin(); it != runs_.end();) {
      Track& t = it->second;
      if (t.elastic) {
        if (t.cluster == c.config.name && !t.stopped && !t.ended) {
          if (std::optional<RunOutcome> o = PollParts(c, it->first, t, cancel))
            ended.push_back(RunEnded(c.config.name, std::move(*o)));
        }
        ++it;
        continue;
      }
      auto j =
          t.cluster == c.config.name && t.slurm_id != 0 ? c.jobs.find(t.slurm_id) : c.jobs.end();
      if (j == c.jobs.end()) {
        ++it;
        continue;
      }
      const std::string& state = j->second.state;
      const bool over = Over(state);
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
  for (int64_t id : cancel) {
    std::string ignored;
    Command(c, "scancel " + std::to_string(id), &ignored);
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

bool SlurmClusters::Record(const RunId& id, std::optional<int32_t> task, int64_t slurm_id) {
  auto t = runs_.find(id);
  if (t == runs_.end()) return !task;
  if (!task) {
    t->second.slurm_id = slurm_id;
    return true;
  }
  auto part = t->second.parts.find(*task);
  if (part == t->second.parts.end()) return false;
  part->second.slurm_id = slurm_id;
  return true;
}

void SlurmClusters::SubmitNow(Pending p, TimeMs now) {
  (void)now;
  Cluster& c = clusters_.at(p.cluster);
  RunId id{p.order.job, p.order.run};
  const std::string name = SlurmJobName(id.first, id.second, p.task);
  auto existing = c.jobs_by_name.find(name);
  if (existing != c.jobs_by_name.end() && c.jobs.at(existing->second).state != "CANCELLED") {
    // The run's job is there already (a restarted daemon adopting it): tracked, not resubmitted
    // — unless it is a part this run gave up, and now takes back.
    MutexLock lock(mu_);
    auto t = runs_.find(id);
    if (t == runs_.end() || !t->second.retired.count(existing->second)) {
      Record(id, p.task, existing->second);
      return;
    }
  }
  const std::string key = std::to_string(id.first) + "." + std::to_string(id.second) +
                          (p.task ? ".t" + std::to_string(*p.task) : std::string());
  const std::string checkpoints = c.config.work_dir + "/checkpoints";
  SlurmSubmission s = BuildSubmission(p.order, p.shapes, c.config.partition, c.config.work_dir,
                                      checkpoints, std::nullopt, p.task.has_value());
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
  bool kept = false;
  {
    MutexLock lock(mu_);
    kept = Record(id, p.task, slurm_id);
  }
  if (!kept) Command(c, "scancel " + std::to_string(slurm_id), &out);  // given up meanwhile
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
    std::vector<PartStop> part_stops;
    part_stops.swap(part_stops_);
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
      if (t.elastic) {
        // Each of its parts stops as a run would; those not submitted yet are not submitted.
        std::erase_if(pending_, [&](const Pending& p) {
          return p.order.job == id.first && p.order.run == id.second;
        });
        for (const auto& [task, part] : t.parts)
          StopPart(t, part, grace, now, commands, on_cluster);
        t.parts.clear();
        if (t.dying.empty()) runs_.erase(it);
        continue;
      }
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
    for (const PartStop& ps : part_stops) {
      auto it = runs_.find(ps.run);
      if (it != runs_.end()) StopPart(it->second, ps.part, ps.grace, now, commands, on_cluster);
    }
    for (auto it = runs_.begin(); it != runs_.end();) {
      Track& t = it->second;
      if (t.stopped && t.kill_at != 0 && t.kill_at <= now) {
        commands.push_back("scancel " + std::to_string(t.slurm_id));
        on_cluster.push_back(t.cluster);
        t.kill_at = 0;
      }
      // The parts given up with a grace: cancelled once it is over.
      for (auto d = t.dying.begin(); d != t.dying.end();) {
        if (d->kill_at > now) {
          ++d;
          continue;
        }
        commands.push_back("scancel " + std::to_string(d->slurm_id));
        on_cluster.push_back(t.cluster);
        d = t.dying.erase(d);
      }
      it = t.elastic && t.stopped && t.dying.empty() ? runs_.erase(it) : std::next(it);
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
