#include "backends/local/agent_hub.h"

#include <chrono>
#include <cstdio>

namespace tessera {

std::map<std::string, std::string> TaskEnvironment(const RunOrder& run, size_t task,
                                                   const std::vector<std::string>& peers) {
  const RunOrder::Task& t = run.tasks[task];
  std::map<std::string, std::string> env = run.env;
  env["TESSERA_JOB"] = run.job_name;
  env["TESSERA_JOB_ID"] = std::to_string(run.job);
  env["TESSERA_TASK_INDEX"] = std::to_string(t.index);
  env["TESSERA_GANG_SIZE"] = std::to_string(run.tasks.size());
  env["TESSERA_RESTART_COUNT"] = std::to_string(run.run);
  env["TESSERA_NODE"] = t.node;
  std::string list;
  for (const std::string& p : peers)
    list += (list.empty() ? "" : ",") + p;
  env["TESSERA_PEERS"] = list;
  env["TESSERA_MASTER_ADDR"] = peers.empty() ? "" : peers[0];
  std::string devices;
  for (int d : t.devices)
    devices += (devices.empty() ? "" : ",") + std::to_string(d);
  env["TESSERA_VISIBLE_DEVICES"] = devices;
  if (!t.visible_variable.empty()) {
    env[t.visible_variable] = devices;
  } else {
    // A task without devices sees none of the host's GPUs.
    env["CUDA_VISIBLE_DEVICES"] = "";
    env["HIP_VISIBLE_DEVICES"] = "";
  }
  if (!t.devices.empty() && t.milli_each < 1000) {
    char share[16];
    std::snprintf(share, sizeof share, "%.3f", static_cast<double>(t.milli_each) / 1000.0);
    env["TESSERA_DEVICE_SHARE"] = share;
  }
  return env;
}

AgentHub::AgentHub(AgentHubOptions options, std::string epoch)
    : options_(options), epoch_(std::move(epoch)) {}

void AgentHub::AddNode(const std::string& node) {
  MutexLock lock(mu_);
  nodes_.try_emplace(node);
}

bool AgentHub::HasNode(const std::string& node) const {
  MutexLock lock(mu_);
  return nodes_.count(node) > 0;
}

void AgentHub::Touch(Node& n) {
  ++n.version;
  cv_.notify_all();
}

void AgentHub::Assign(const RunOrder& order) {
  MutexLock lock(mu_);
  Run& run = runs_[{order.job, order.run}];
  run.generation = order.generation;
  run.nodes.clear();
  run.finished.clear();
  run.tasks = order.task_count > 0 ? order.task_count : static_cast<int32_t>(order.tasks.size());
  AssignLocked(order, run);
}

void AgentHub::Resize(const RunOrder& order, Millis grace) {
  MutexLock lock(mu_);
  auto found = runs_.find({order.job, order.run});
  if (found == runs_.end()) return;  // ended or stopped meanwhile: the engine hears of it
  Run& run = found->second;
  run.generation = order.generation;
  std::set<int32_t> kept;
  for (const RunOrder::Task& t : order.tasks)
    kept.insert(t.index);
  for (auto it = run.nodes.begin(); it != run.nodes.end();) {
    if (kept.count(it->first)) {
      ++it;
      continue;
    }
    if (auto n = nodes_.find(it->second); n != nodes_.end()) {
      TaskKey key{order.job, order.run, it->first};
      n->second.run.erase(key);
      n->second.stop[key] = {key, grace};
      Touch(n->second);
    }
    it = run.nodes.erase(it);
  }
  AssignLocked(order, run);
}

void AgentHub::AssignLocked(const RunOrder& order, Run& run) {
  std::vector<std::string> peers;
  for (const RunOrder::Task& t : order.tasks) {
    auto it = nodes_.find(t.node);
    peers.push_back(it == nodes_.end() || it->second.address.empty() ? t.node : it->second.address);
  }
  for (size_t i = 0; i < order.tasks.size(); ++i) {
    const RunOrder::Task& t = order.tasks[i];
    if (run.nodes.count(t.index) || run.finished.count(t.index)) continue;
    auto it = nodes_.find(t.node);
    if (it == nodes_.end()) continue;
    TaskKey key{order.job, order.run, t.index};
    TaskAssignment a;
    a.key = key;
    a.job_name = order.job_name;
    a.command = order.command;
    a.env = TaskEnvironment(order, i, peers);
    a.run_as_user = t.run_as_user;
    a.run_as_group = t.run_as_group;
    it->second.run[key] = std::move(a);
    it->second.stop.erase(key);
    run.nodes[t.index] = t.node;
    Touch(it->second);
  }
}

void AgentHub::StopLocked(const RunId& id, Millis grace) {
  auto it = runs_.find(id);
  if (it == runs_.end()) return;
  for (const auto& [index, node_name] : it->second.nodes) {
    auto n = nodes_.find(node_name);
    if (n == nodes_.end()) continue;
    TaskKey key{id.first, id.second, index};
    n->second.run.erase(key);
    n->second.stop[key] = {key, grace};
    Touch(n->second);
  }
  runs_.erase(it);
}

void AgentHub::Stop(int64_t job, int32_t run, Millis grace) {
  MutexLock lock(mu_);
  StopLocked({job, run}, grace);
}

Result<ReportResult> AgentHub::Report(const std::string& node, const SyncRequest& request,
                                      TimeMs now) {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) {
    return NotFound("node \"" + node + "\" is not a node of a local cluster in the fleet");
  }
  Node& n = it->second;
  ReportResult out;
  if (n.agent != request.agent) {
    // A new agent process: what the old one ran is gone with it (its children die with it).
    out.replaced = !n.agent.empty() && !n.run.empty();
    n.agent = request.agent;
  }
  out.joined = !n.live;
  n.live = true;
  n.last_seen = now;
  n.address = request.address.empty() ? node : request.address;
  n.inventory = request.inventory;
  n.telemetry = request.telemetry;
  for (const TaskReport& t : request.tasks) {
    if (!t.log.empty()) KeepLog(t.key, t.log);
    if (t.phase != TaskPhase::kExited) continue;
    n.acked.push_back(t.key);
    n.stop.erase(t.key);
    if (n.run.erase(t.key) == 0) continue;  // stopped, or reported before
    RunId id{t.key.job, t.key.run};
    auto r = runs_.find(id);
    if (r == runs_.end()) continue;
    r->second.nodes.erase(t.key.task);
    bool failed = t.exit_code != 0 || !t.error.empty() || t.stopped;
    if (failed) {
      std::string detail = "task " + std::to_string(t.key.task) + " on " + node;
      detail += !t.error.empty()    ? " could not start: " + t.error
                : t.exit_code > 128 ? " was killed by signal " + std::to_string(t.exit_code - 128)
                                    : " exited with " + std::to_string(t.exit_code);
      out.ended.push_back({id.first, id.second, r->second.generation, false, detail});
      StopLocked(id, 0);
    } else {
      // The run has ended once every task of the job exited 0 (an elastic run's tasks too).
      r->second.finished.insert(t.key.task);
      if (static_cast<int32_t>(r->second.finished.size()) >= r->second.tasks) {
        out.ended.push_back(
            {id.first, id.second, r->second.generation, true, "every task exited 0"});
        runs_.erase(r);
      }
    }
  }
  if (!out.ended.empty() || !n.acked.empty()) Touch(n);
  return out;
}

SyncAnswer AgentHub::Wait(const std::string& node, uint64_t known, Millis wait) {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  SyncAnswer a;
  a.epoch = epoch_;
  a.heartbeat_ms = options_.heartbeat;
  if (it == nodes_.end()) return a;
  Node& n = it->second;
  wait = std::min(wait, options_.heartbeat);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait);
  while (!shutdown_ && n.version == known && n.acked.empty() &&
         cv_.wait_until(lock, until) == std::cv_status::no_timeout) {
  }
  a.version = n.version;
  for (const auto& [key, task] : n.run)
    a.run.push_back(task);
  for (const auto& [key, stop] : n.stop)
    a.stop.push_back(stop);
  a.acked = std::move(n.acked);
  n.acked.clear();
  return a;
}

std::vector<std::string> AgentHub::Expired(TimeMs now) {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  for (auto& [name, n] : nodes_) {
    if (!n.live || now - n.last_seen <= options_.lost_after) continue;
    n.live = false;
    n.agent.clear();
    n.run.clear();
    n.stop.clear();
    Touch(n);
    out.push_back(name);
  }
  return out;
}

void AgentHub::Expect(const std::string& node, TimeMs now) {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.live) return;
  it->second.live = true;
  it->second.last_seen = now;
}

bool AgentHub::Live(const std::string& node) const {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second.live;
}

void AgentHub::KeepLog(const TaskKey& key, const std::string& text) {
  auto [it, fresh] = logs_.try_emplace(key);
  if (fresh) log_order_.push_back(key);
  it->second =
      text.size() > options_.log_bytes ? text.substr(text.size() - options_.log_bytes) : text;
  while (log_order_.size() > options_.log_tasks) {
    logs_.erase(log_order_.front());
    log_order_.pop_front();
  }
}

std::optional<std::string> AgentHub::Log(const TaskKey& key) const {
  MutexLock lock(mu_);
  auto it = logs_.find(key);
  if (it == logs_.end()) return std::nullopt;
  return it->second;
}

std::optional<AgentNodeStatus> AgentHub::NodeStatus(const std::string& node) const {
  MutexLock lock(mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.agent.empty()) return std::nullopt;
  const Node& n = it->second;
  return AgentNodeStatus{n.agent,
                         n.address,
                         n.live,
                         n.last_seen,
                         n.inventory.cpu,
                         n.inventory.memory,
                         n.telemetry.cpu_used,
                         n.telemetry.memory_used,
                         n.telemetry.gpus,
                         n.run.size()};
}

void AgentHub::Shutdown() {
  MutexLock lock(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

}  // namespace tessera
