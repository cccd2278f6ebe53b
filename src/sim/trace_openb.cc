// The openb pod list replayed with its real timings: each pod is a one-task job that arrives
// at its creation time and runs until its deletion time (its work; the estimate is exact).
// Pods that never ran (no deletion time, or deleted before created) are skipped and counted
// in the workload's notes.
#include <algorithm>

#include "sim/openb_pods.h"
#include "sim/workload.h"

namespace tessera {

Result<Workload> OpenbWorkload(const Spec& spec, const std::string& path,
                               const ImportOptions& options) {
  auto pods = ReadOpenbPods(path);
  if (!pods.ok()) return pods.status();
  Workload w;
  TenantId tenant = DefaultTenant(spec);
  size_t skipped = 0, unknown_model = 0;
  for (const TracePod& pod : *pods) {
    if (!pod.creation || !pod.deletion || *pod.deletion <= *pod.creation) {
      ++skipped;
      continue;
    }
    TraceJob tj;
    Job& job = tj.job;
    job.name = pod.name;
    job.job_class = pod.num_gpu == 0 ? WorkloadClass::kBatch : WorkloadClass::kTraining;
    job.tenant = tenant;
    job.priority = "normal";
    job.preemptible = true;
    job.checkpoint_interval = options.default_checkpoint;
    job.labels["qos"] = pod.qos;
    TaskGroup g;
    g.name = "pod";
    g.request.cpu = pod.cpu;
    g.request.memory = pod.memory;
    if (pod.num_gpu > 0) {
      g.request.devices.count = pod.num_gpu;
      g.request.devices.milli_each = pod.num_gpu == 1 && pod.gpu_milli > 0
                                         ? std::min(pod.gpu_milli, kMilliPerUnit)
                                         : kMilliPerUnit;
      g.request.devices.kind = DeviceKind::kGpu;
      for (const std::string& m : pod.spec) {
        if (auto id = FindModelNoCase(spec, m)) {
          g.request.devices.models.push_back({*id, kMilliPerUnit});
        }
      }
      if (!pod.spec.empty() && g.request.devices.models.empty()) {
        ++unknown_model;
        continue;
      }
    }
    job.task_groups.push_back(std::move(g));
    job.gang.require = TopologyLevel::kNode;
    tj.work = *pod.deletion - *pod.creation;
    job.runtime = tj.work;
    job.submit_time = *pod.creation;
    w.jobs.push_back(std::move(tj));
  }
  if (skipped) w.notes.push_back(std::to_string(skipped) + " pods without a run skipped");
  if (unknown_model)
    w.notes.push_back(std::to_string(unknown_model) + " pods asking for models the fleet lacks");
  if (w.jobs.empty()) return InvalidArgument(path + ": no pod with a creation and deletion time");
  return w;
}

}  // namespace tessera
