#include "server/backend_router.h"

#include <string>

namespace tessera {

namespace {

// The variable that names a task's devices to the vendor's runtime.
std::string VisibleVariable(const std::string& vendor) {
  if (vendor == "nvidia") return "CUDA_VISIBLE_DEVICES";
  if (vendor == "huawei") return "ASCEND_RT_VISIBLE_DEVICES";
  if (vendor == "amd") return "HIP_VISIBLE_DEVICES";
  return "TESSERA_VISIBLE_DEVICES";
}

}  // namespace

BackendKind BackendRouter::KindOf(const JobRecord& job) const {
  if (job.placements.empty()) return BackendKind::kEmulated;
  return spec_->clusters[cell_->node(job.placements[0].node).cluster].backend;
}

void BackendRouter::Launch(const JobRecord& job, TimeMs now) {
  switch (KindOf(job)) {
    case BackendKind::kLocal:
      return agents_->Assign(OrderOf(job));
    case BackendKind::kSlurm: {
      const std::string& cluster =
          spec_->clusters[cell_->node(job.placements[0].node).cluster].name;
      return slurm_->Submit(cluster, OrderOf(job), ShapesOf(job));
    }
    default:
      return emulated_.Launch(job, now);
  }
}

void BackendRouter::Stop(const JobRecord& job, TimeMs now) {
  const BackendKind kind = KindOf(job);
  if (kind != BackendKind::kLocal && kind != BackendKind::kSlurm) return emulated_.Stop(job, now);
  const RunKey key = key_of_(job);
  if (kind == BackendKind::kLocal) return agents_->Stop(key.job, key.run, job.stop_grace);
  slurm_->Stop(key.job, key.run, job.stop_grace);
}

void BackendRouter::Resize(const JobRecord& job, TimeMs now) {
  switch (KindOf(job)) {
    case BackendKind::kLocal:
      return agents_->Resize(OrderOf(job), job.stop_grace);
    case BackendKind::kSlurm:
      return slurm_->Resize(spec_->clusters[cell_->node(job.placements[0].node).cluster].name,
                            OrderOf(job), ShapesOf(job), job.stop_grace);
    default:
      return emulated_.Resize(job, now);
  }
}

RunOrder BackendRouter::OrderOf(const JobRecord& job) const {
  const RunKey key = key_of_(job);
  RunOrder order;
  order.job = key.job;
  order.run = key.run;
  order.generation = job.generation;
  order.job_name = job.job.name;
  order.task_count = job.task_count;
  order.elastic = job.job.gang.min_members > 0 && job.job.gang.min_members < job.task_count;
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
    t.node = cell_->node_name(p.node);
    const ClusterId cluster = spec_->node(cell_->spec_node(p.node)).cluster;
    if (const RunAs* as = spec_->RunAsFor(job.job.tenant, cluster)) {
      t.run_as_user = as->user;
      t.run_as_group = as->group;
    }
    std::string vendor;
    for (const DeviceUse& u : p.devices) {
      t.devices.push_back(u.index);
      t.milli_each = u.milli;
      vendor = spec_->model(DeviceModelId(cell_->devices(p.node)[u.index].model)).vendor;
    }
    if (!t.devices.empty()) t.visible_variable = VisibleVariable(vendor);
  }
  return order;
}

std::vector<SlurmTaskShape> BackendRouter::ShapesOf(const JobRecord& job) {
  std::vector<SlurmTaskShape> out;
  for (const Placement& p : job.placements) {
    int32_t index = p.task.index;
    const TaskRequest* request = nullptr;
    for (const TaskGroup& g : job.job.task_groups) {
      if (index < g.count) {
        request = &g.request;
        break;
      }
      index -= g.count;
    }
    SlurmTaskShape s;
    if (request != nullptr) {
      s.cpu = request->cpu;
      s.memory = request->memory;
      s.gpus = request->devices.fractional() ? 1 : request->devices.count;
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace tessera
