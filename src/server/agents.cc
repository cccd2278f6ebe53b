// The daemon's local backend: runs on `local` clusters go to the node agents through the
// AgentHub; everything else runs on the emulated backend. Agents' syncs come in here, their
// outcomes go to the engine, and silent agents' nodes are lost.
#include <nlohmann/json.hpp>

#include "server/daemon.h"

namespace tessera {

using json = nlohmann::ordered_json;

namespace {

// The variable that names a task's devices to the vendor's runtime.
std::string VisibleVariable(const std::string& vendor) {
  if (vendor == "nvidia") return "CUDA_VISIBLE_DEVICES";
  if (vendor == "huawei") return "ASCEND_RT_VISIBLE_DEVICES";
  if (vendor == "amd") return "HIP_VISIBLE_DEVICES";
  return "TESSERA_VISIBLE_DEVICES";
}

}  // namespace

bool Daemon::OnLocal(const JobRecord& job) const {
  if (job.placements.empty()) return false;
  const CellState& cell = engine_->cell();
  uint32_t cluster = cell.node(job.placements[0].node).cluster;
  return spec_->clusters[cluster].backend == BackendKind::kLocal;
}

RunOrder Daemon::OrderOf(const JobRecord& job) const {
  const CellState& cell = engine_->cell();
  int64_t id = by_engine_[job.id.value()];
  RunOrder order;
  order.job = id;
  order.run = restart_base_[id - 1] + job.restarts;
  order.generation = job.generation;
  order.job_name = job.job.name;
  order.command = job.job.command;
  if (order.command.empty()) {
    // A job that names no program sleeps for its runtime (a placeholder that holds devices).
    Millis runtime = job.job.runtime.value_or(0) - job.kept_ms;
    order.command = {"/bin/sh", "-c",
                     runtime > 0 ? "exec sleep " + std::to_string((runtime + 999) / 1000)
                                 : "exec sleep infinity"};
  }
  order.env = job.job.env;
  for (const Placement& p : job.placements) {
    RunOrder::Task& t = order.tasks.emplace_back();
    t.index = p.task.index;
    t.node = cell.node_name(p.node);
    std::string vendor;
    for (const DeviceUse& u : p.devices) {
      t.devices.push_back(u.index);
      t.milli_each = u.milli;
      vendor = spec_->model(DeviceModelId(cell.devices(p.node)[u.index].model)).vendor;
    }
    if (!t.devices.empty()) t.visible_variable = VisibleVariable(vendor);
  }
  return order;
}

void Daemon::ApplyAgents() {
  TimeMs now = clock_.Now();
  const CellState& cell = engine_->cell();
  for (uint32_t n = 0; n < cell.node_count(); ++n) {
    if (spec_->clusters[cell.node(n).cluster].backend != BackendKind::kLocal) continue;
    const std::string& name = cell.node_name(n);
    if (agents_->Live(name)) continue;
    if (cell.node(n).tasks > 0) {
      agents_->Expect(name, now);  // its agent has lost_after to come back to its runs
    } else {
      engine_->NodeLost(n, now);  // out of service until its agent registers
    }
  }
}

void Daemon::CheckAgents(TimeMs now) {
  for (const std::string& name : agents_->Expired(now)) {
    auto it = core_->node_index.find(name);
    if (it != core_->node_index.end()) engine_->NodeLost(it->second, now);
  }
}

Result<std::string> Daemon::AgentSync(const Caller& caller, const std::string& node,
                                      const std::string& body, std::string* field) {
  if (caller.role != Role::kAgent && caller.role != Role::kAdmin) {
    return PermissionDenied("only node agents (the agent role) sync");
  }
  auto request = ReadSyncRequest(body, field);
  if (!request.ok()) return request.status();
  TimeMs now = clock_.Now();
  auto report = agents_->Report(node, *request, now);
  if (!report.ok()) return report.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = core_->node_index.find(node);
    if (it != core_->node_index.end()) {
      if (report->replaced) engine_->NodeLost(it->second, now);  // its runs died with the agent
      if (report->joined || report->replaced) engine_->NodeRecovered(it->second, now);
    }
    for (const RunOutcome& o : report->ended) {
      if (o.job < 1 || o.job > static_cast<int64_t>(jobs_.size())) continue;
      const std::optional<JobId>& eid = engine_id_[o.job - 1];
      if (!eid) continue;
      const JobRecord& rec = engine_->job(*eid);
      if (!rec.running() || rec.generation != o.generation ||
          restart_base_[o.job - 1] + rec.restarts != o.run) {
        continue;  // an older run's report
      }
      if (!o.succeeded) fail_detail_[o.job] = o.detail;
      Event e;
      e.time = now;
      e.kind = o.succeeded ? EventKind::kFinish : EventKind::kFail;
      e.job = *eid;
      e.generation = o.generation;
      engine_->Post(e);
    }
    Poke();
  }
  SyncAnswer answer = agents_->Wait(node, request->known_version, request->wait_ms);
  return ToJson(answer).dump();
}

Result<json> Daemon::TaskLog(const Caller& caller, const std::string& ref,
                             const std::string& tenant, int task, std::optional<int> run) {
  int64_t id = 0;
  int32_t current = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = Resolve(caller, ref, tenant);
    if (!found.ok()) return found.status();
    id = *found;
    const StoredJob& row = jobs_[id - 1];
    current = row.restarts;
    if (const auto& eid = engine_id_[id - 1]) {
      current = restart_base_[id - 1] + engine_->job(*eid).restarts;
    }
  }
  TaskKey key{id, run.value_or(current), task};
  auto log = agents_->Log(key);
  if (!log) {
    return NotFound("no output of task " + std::to_string(task) + " of run " +
                    std::to_string(key.run) + " of job " + std::to_string(id) +
                    " (only tasks on agents' nodes report output; it may not have started)");
  }
  return json{{"job", id}, {"run", key.run}, {"task", task}, {"log", *log}};
}

}  // namespace tessera
