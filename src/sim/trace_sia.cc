// Sia's Philly workloads (siasosp23/artifacts, sia-simulator/workloads):
// name,time,application,num_replicas,batch_size. The files give arrivals and sizes but not
// durations: Sia derives those from its own goodput profiles, which are not public here. So
// Tessera uses a documented table of work per application, in GPU-hours on the reference
// device (docs/simulation.md), divided over the job's replicas; the device's speed is the
// catalog's training speed for its model. The replicas are a gang of one GPU each.
#include <cmath>
#include <map>

#include "config/csv.h"
#include "sim/workload.h"

namespace tessera {

namespace {
// GPU-hours of work on the reference device (speed 1000), by application.
const std::map<std::string, double, std::less<>> kSiaWork = {
    {"bert", 4.0}, {"cifar10", 1.0}, {"deepspeech2", 8.0}, {"imagenet", 48.0}, {"yolov3", 12.0},
};
}  // namespace

Result<Workload> ParseSiaWorkload(const Spec& spec, const std::string& name, std::string_view text,
                                  const ImportOptions& options) {
  auto table = CsvTable::Parse(name, text);
  if (!table.ok()) return table.status();
  TESSERA_RETURN_IF_ERROR(
      table->RequireColumns({"name", "time", "application", "num_replicas", "batch_size"}));
  Workload w;
  CsvErrors errors;
  TenantId tenant = DefaultTenant(spec);
  for (size_t i = 0; i < table->size(); ++i) {
    CsvRow row = table->row(i);
    Status width = row.CheckWidth();
    if (!width.ok()) {
      errors.Add(width);
      continue;
    }
    auto job_name = row.NonEmpty("name");
    auto time = row.Int("time", 0);
    auto app = row.NonEmpty("application");
    auto replicas = row.Int("num_replicas", 1, 4096);
    auto batch = row.Int("batch_size", 1);
    for (const Status* s :
         {&job_name.status(), &time.status(), &app.status(), &replicas.status(), &batch.status()}) {
      if (!s->ok()) errors.Add(*s);
    }
    if (!job_name.ok() || !time.ok() || !app.ok() || !replicas.ok() || !batch.ok()) continue;
    auto work = kSiaWork.find(*app);
    if (work == kSiaWork.end()) {
      errors.Add(row.ErrorAt(*table->Column("application"),
                             "unknown application \"" + std::string(*app) +
                                 "\" (known: bert, cifar10, deepspeech2, imagenet, yolov3)"));
      continue;
    }
    TraceJob tj;
    tj.job = TraceTrainingJob(std::string(*job_name), tenant, options);
    Job& job = tj.job;
    job.labels["application"] = std::string(*app);
    job.labels["batch_size"] = std::to_string(*batch);
    TaskGroup g;
    g.name = "replica";
    g.count = static_cast<int32_t>(*replicas);
    g.request.cpu = kMilliPerUnit;
    g.request.devices.count = 1;
    g.request.devices.kind = DeviceKind::kGpu;
    job.task_groups.push_back(std::move(g));
    tj.work = std::llround(work->second * 3600.0 * 1000.0 / static_cast<double>(*replicas));
    job.runtime = tj.work;
    job.submit_time = *time * 1000;
    w.jobs.push_back(std::move(tj));
  }
  TESSERA_RETURN_IF_ERROR(errors.ToStatus(name));
  if (w.jobs.empty()) return InvalidArgument(name + ": no jobs in the workload");
  return w;
}

}  // namespace tessera
