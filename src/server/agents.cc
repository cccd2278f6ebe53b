// The daemon's real backends: runs on `local` clusters go to the node agents through the
// AgentHub, runs on `slurm` clusters to their controllers; everything else runs on the
// emulated backend. Agents' syncs and Slurm's reports come in here, their outcomes go to the
// engine, silent agents' nodes and Slurm's down nodes are lost, and an unreachable controller's
// nodes take no new work.
#include <nlohmann/json.hpp>
#include <set>

#include "server/daemon.h"

namespace tessera {

void Daemon::EndRun(const RunOutcome& o, TimeMs now) {
  if (!book_.contains(o.job)) return;
  const std::optional<JobId>& eid = book_.engine_id(o.job);
  if (!eid) return;
  const JobRecord& rec = engine_->job(*eid);
  if (!rec.running() || rec.generation != o.generation ||
      book_.restart_base(o.job) + rec.restarts != o.run) {
    return;  // an older run's report
  }
  if (!o.succeeded) fail_detail_[o.job] = o.detail;
  Event e;
  e.time = now;
  e.kind = o.succeeded ? EventKind::kFinish : EventKind::kFail;
  e.job = *eid;
  e.generation = o.generation;
  engine_->Post(e);
}

void Daemon::ApplySlurm(TimeMs now) {
  SlurmClusters* slurm = backends_->slurm();
  if (slurm == nullptr) return;
  for (SlurmEvent& e : slurm->Take()) {
    auto node = core_->node_index.find(e.node);
    switch (e.kind) {
      case SlurmEvent::Kind::kRunEnded:
        EndRun(e.outcome, now);
        break;
      case SlurmEvent::Kind::kNodeDown:
        if (node != core_->node_index.end()) engine_->NodeLost(node->second, now);
        break;
      case SlurmEvent::Kind::kNodeUp:
        if (node != core_->node_index.end()) engine_->NodeRecovered(node->second, now);
        break;
      case SlurmEvent::Kind::kUnreachable:
      case SlurmEvent::Kind::kReachable: {
        bool down = e.kind == SlurmEvent::Kind::kUnreachable;
        if (down ? !unreachable_.insert(e.cluster).second : unreachable_.erase(e.cluster) == 0) {
          break;
        }
        const CellState& cell = engine_->cell();
        for (uint32_t n = 0; n < cell.node_count(); ++n) {
          if (spec_->clusters[cell.node(n).cluster].name != e.cluster) continue;
          auto f = flags_.find(cell.node_name(n));
          if (f != flags_.end() && f->second.cordoned) continue;  // the operator's hold stays
          if (down) {
            engine_->Cordon(n, now);
          } else {
            engine_->Uncordon(n, now);
          }
        }
        break;
      }
    }
  }
}

void Daemon::ApplyAgents() {
  TimeMs now = clock_.Now();
  const CellState& cell = engine_->cell();
  for (uint32_t n = 0; n < cell.node_count(); ++n) {
    if (spec_->clusters[cell.node(n).cluster].backend != BackendKind::kLocal) continue;
    const std::string& name = cell.node_name(n);
    if (backends_->agents().Live(name)) continue;
    if (cell.node(n).tasks > 0) {
      backends_->agents().Expect(name, now);  // its agent has lost_after to come back to its runs
    } else {
      engine_->NodeLost(n, now);  // out of service until its agent registers
    }
  }
}

void Daemon::CheckAgents(TimeMs now) {
  for (const std::string& name : backends_->agents().Expired(now)) {
    auto it = core_->node_index.find(name);
    if (it != core_->node_index.end()) engine_->NodeLost(it->second, now);
  }
}

Result<std::string> Daemon::AgentSync(const Caller& caller, const std::string& node,
                                      const std::string& body) {
  if (caller.role != Role::kAgent && caller.role != Role::kAdmin) {
    return PermissionDenied("only node agents (the agent role) sync");
  }
  if (caller.role == Role::kAgent && caller.node.empty()) {
    // An agent principal made before agents were bound to a node: it could act for any node.
    {
      MutexLock lock(logged_mu_);
      if (unbound_agents_logged_.insert(caller.name).second) {
        Log("warn", "agent refused: its principal is bound to no node",
            {{"principal", caller.name}, {"node", node}});
      }
    }
    return PermissionDenied("agent principal \"" + caller.name +
                            "\" is bound to no node; create one per node with --role agent "
                            "--node NODE and give each agent its own token");
  }
  if (caller.role == Role::kAgent && caller.node != node) {
    return PermissionDenied("this agent's token answers for node \"" + caller.node + "\" only");
  }
  auto request = ReadSyncRequest(body);
  if (!request.ok()) return request.status();
  TimeMs now = clock_.Now();
  auto report = backends_->agents().Report(node, *request, now);
  if (!report.ok()) return report.status();
  // The tails of ended tasks go to the store, durable before the exits are acknowledged: a
  // restarted daemon shows them though the agents sent them to this one. (An exit is reported,
  // with its tail, until acknowledged, and again to a new daemon: the row is replaced.)
  bool kept = false;
  for (const TaskReport& t : request->tasks) {
    if (t.phase != TaskPhase::kExited) continue;
    std::optional<std::string> tail = backends_->agents().Log(t.key);
    if (!tail || tail->empty()) continue;  // no output
    store_->PutTaskLog(t.key.job, t.key.run, t.key.task, std::move(*tail));
    kept = true;
  }
  if (kept) {
    if (Status s = store_->Flush().get(); !s.ok()) return s;
  }
  {
    ViewLock lock(*this);
    auto it = core_->node_index.find(node);
    if (it != core_->node_index.end()) {
      if (report->replaced) engine_->NodeLost(it->second, now);  // its runs died with the agent
      if (report->joined || report->replaced) engine_->NodeRecovered(it->second, now);
    }
    for (const RunOutcome& o : report->ended)
      EndRun(o, now);
    if (it != core_->node_index.end()) ReportUtilization(it->second, request->telemetry, now);
    host_.Poke();
  }
  SyncAnswer answer = backends_->agents().Wait(node, request->known_version, request->wait_ms);
  return ToJson(answer).dump();
}

void Daemon::ReportUtilization(uint32_t node, const AgentTelemetry& telemetry, TimeMs now) {
  std::map<int, double> busy;  // GPU index -> share busy
  for (const GpuSample& g : telemetry.gpus) {
    if (g.utilization >= 0) busy[g.index] = g.utilization;
  }
  if (busy.empty()) return;  // no nvidia-smi or npu-smi, or devices that do not say
  const CellState& cell = engine_->cell();
  std::set<uint32_t> seen;
  for (const TaskRef& t : cell.tasks_on(node)) {
    if (!seen.insert(t.job.value()).second) continue;
    const JobRecord& rec = engine_->job(t.job);
    if (!rec.running()) continue;
    double sum = 0;
    int devices = 0;
    bool known = true;
    for (const Placement& p : rec.placements) {
      if (p.node != node) continue;
      for (const DeviceUse& u : p.devices) {
        auto b = busy.find(u.index);
        known = known && b != busy.end();
        if (b != busy.end()) sum += b->second;
        ++devices;
      }
    }
    if (!known || devices == 0) continue;
    // The run's utilization: the mean over the nodes that reported its devices.
    RunUtilization& u = utilization_[t.job.value()];
    if (u.generation != rec.generation) u = {rec.generation, {}};
    u.by_node[node] = sum / devices;
    double mean = 0;
    for (const auto& [n, share] : u.by_node)
      mean += share;
    mean /= static_cast<double>(u.by_node.size());
    engine_->ReportUtilization(t.job, rec.generation, static_cast<Milli>(mean * kMilliPerUnit),
                               now);
  }
}

Result<TaskLogView> Daemon::TaskLog(const Caller& caller, const std::string& ref,
                                    const std::string& tenant, int task, std::optional<int> run) {
  int64_t id = 0;
  int32_t current = 0;
  {
    ViewLock lock(*this);
    auto found = book_.Resolve(caller, ref, tenant);
    if (!found.ok()) return found.status();
    id = *found;
    current = book_.row(id).restarts;
    if (const auto& eid = book_.engine_id(id)) {
      current = book_.restart_base(id) + engine_->job(*eid).restarts;
    }
  }
  TaskKey key{id, run.value_or(current), task};
  std::optional<std::string> log = backends_->slurm() ? backends_->slurm()->Log(key) : std::nullopt;
  if (!log) log = backends_->agents().Log(key);
  if (!log) {
    auto kept = store_->QueryTaskLog(key.job, key.run, key.task);  // an ended task's
    if (!kept.ok()) return kept.status();
    log = std::move(*kept);
  }
  if (!log) {
    return NotFound("no output of task " + std::to_string(task) + " of run " +
                    std::to_string(key.run) + " of job " + std::to_string(id) +
                    " (only tasks on agents' nodes report output; it may not have started)");
  }
  return TaskLogView{id, key.run, task, std::move(*log)};
}

std::vector<Gauge> Daemon::AgentGauges() const {
  Gauge up{"tessera_agent_up", "Whether the node's agent is in touch (local clusters).", {}};
  Gauge cpu{"tessera_node_cpu_used", "CPUs busy on the node, as its agent measured.", {}};
  Gauge memory{"tessera_node_memory_used_bytes", "Memory in use on the node.", {}};
  Gauge util{
      "tessera_device_utilization",
      "Busy share of each device over the last sample (0..1), as nvidia-smi or npu-smi report it.",
      {}};
  Gauge device_memory{"tessera_device_memory_used_bytes", "Memory in use on each GPU.", {}};
  const CellState& cell = engine_->cell();
  for (uint32_t n = 0; n < cell.node_count(); ++n) {
    if (spec_->clusters[cell.node(n).cluster].backend != BackendKind::kLocal) continue;
    const std::string& name = cell.node_name(n);
    const std::string node = "node=\"" + LabelValue(name) + "\"";
    std::optional<AgentNodeStatus> status = backends_->agents().NodeStatus(name);
    up.samples.push_back({node, status && status->live ? 1.0 : 0.0});
    if (!status) continue;
    cpu.samples.push_back({node, static_cast<double>(status->cpu_used) / kMilliPerUnit});
    memory.samples.push_back({node, static_cast<double>(status->memory_used) * 1048576.0});
    for (const GpuSample& g : status->gpus) {
      const std::string labels = node + ",device=\"" + std::to_string(g.index) + "\"";
      if (g.utilization >= 0) util.samples.push_back({labels, g.utilization});
      device_memory.samples.push_back({labels, static_cast<double>(g.memory_used) * 1048576.0});
    }
  }
  Gauge reachable{"tessera_cluster_reachable",
                  "Whether a slurm cluster's controller answers (1) or not (0).",
                  {}};
  for (const Cluster& c : spec_->clusters) {
    if (c.backend != BackendKind::kSlurm) continue;
    reachable.samples.push_back(
        {"cluster=\"" + LabelValue(c.name) + "\"", unreachable_.count(c.name) ? 0.0 : 1.0});
  }
  return {up, cpu, memory, util, device_memory, reachable};
}

}  // namespace tessera
