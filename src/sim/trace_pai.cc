// The task table of Alibaba's PAI 2020 trace (alibaba/clusterdata cluster-trace-gpu-v2020,
// pai_task_table): job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,
// plan_gpu,gpu_type — no header in the published file (one is accepted). plan_cpu and plan_gpu
// are percent of one core / one GPU (600 = 6 cores, 50 = half a GPU), plan_mem is GB. The
// rows of one job_name form one job: each row a task group of inst_num tasks, the whole job a
// gang that arrives at its earliest start and whose work is its longest task. Rows that did
// not terminate (Failed, Running, Waiting) or lack times are skipped and counted in the notes.
#include <cmath>
#include <map>

#include "config/csv.h"
#include "sim/workload.h"

namespace tessera {
namespace {

bool ParseDecimal(std::string_view text, double* out) {
  std::string s(text);
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && end != s.c_str() && *end == '\0' && std::isfinite(*out) && *out >= 0;
}

}  // namespace

Result<Workload> ParsePaiTasks(const Spec& spec, const std::string& name, std::string_view text,
                               const ImportOptions& options) {
  const std::vector<std::string> columns = {"job_name",   "task_name", "inst_num", "status",
                                            "start_time", "end_time",  "plan_cpu", "plan_mem",
                                            "plan_gpu",   "gpu_type"};
  CsvOptions csv;
  csv.header = false;
  csv.column_names = columns;
  auto table = CsvTable::Parse(name, text, csv);
  if (!table.ok()) return table.status();
  Workload w;
  CsvErrors errors;
  TenantId tenant = DefaultTenant(spec);
  std::map<std::string, size_t> index;  // job name -> position in w.jobs
  size_t skipped = 0;
  for (size_t i = 0; i < table->size(); ++i) {
    CsvRow row = table->row(i);
    if (i == 0 && row.Text(0).ok() && *row.Text(0) == "job_name") continue;  // a header
    Status width = row.CheckWidth();
    if (!width.ok()) {
      errors.Add(width);
      continue;
    }
    auto status = row.Text("status");
    if (!status.ok() || *status != "Terminated") {
      ++skipped;
      continue;
    }
    auto job_name = row.NonEmpty("job_name");
    auto task = row.NonEmpty("task_name");
    if (!job_name.ok() || !task.ok()) {
      errors.Add(job_name.ok() ? task.status() : job_name.status());
      continue;
    }
    double inst = 0, start = 0, end = 0, cpu = 0, mem = 0, gpu = 0;
    struct Field {
      const char* column;
      double* out;
      bool optional;
    };
    bool ok = true;
    for (Field f : {Field{"inst_num", &inst, false}, Field{"start_time", &start, false},
                    Field{"end_time", &end, false}, Field{"plan_cpu", &cpu, true},
                    Field{"plan_mem", &mem, true}, Field{"plan_gpu", &gpu, true}}) {
      auto t = row.Text(f.column);
      if (t.ok() && t->empty() && f.optional) continue;
      if (!t.ok() || !ParseDecimal(*t, f.out)) {
        errors.Add(row.ErrorAt(*table->Column(f.column),
                               "expected a number >= 0, got \"" +
                                   std::string(t.ok() ? *t : std::string_view()) + "\""));
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    if (end <= start || inst < 1) {
      ++skipped;
      continue;
    }
    TaskGroup g;
    g.name = std::string(*task);
    g.count = static_cast<int32_t>(std::min(inst, 4096.0));
    g.request.cpu = std::llround(cpu * 10);  // percent of a core -> milli-cores
    g.request.memory = std::llround(mem * 1024);
    if (gpu > 0) {
      g.request.devices.kind = DeviceKind::kGpu;
      if (gpu < 100) {
        g.request.devices.count = 1;
        g.request.devices.milli_each = std::max<Milli>(1, std::llround(gpu * 10));
      } else {
        g.request.devices.count = static_cast<int32_t>(std::llround(gpu / 100));
      }
      auto type = row.Text("gpu_type");
      if (type.ok() && !type->empty() && *type != "MISC") {
        if (auto id = FindModelNoCase(spec, *type)) g.request.devices.models.push_back({*id, 1000});
      }
    }
    Millis work = std::llround((end - start) * 1000);
    TimeMs arrival = std::llround(start * 1000);
    auto [it, fresh] = index.emplace(std::string(*job_name), w.jobs.size());
    if (fresh) {
      TraceJob tj;
      tj.job = TraceTrainingJob(std::string(*job_name), tenant, options);
      tj.job.submit_time = arrival;
      w.jobs.push_back(std::move(tj));
    }
    TraceJob& tj = w.jobs[it->second];
    tj.job.task_groups.push_back(std::move(g));
    tj.job.submit_time = std::min(*tj.job.submit_time, arrival);
    tj.work = std::max(tj.work, work);
    tj.job.runtime = tj.work;
  }
  TESSERA_RETURN_IF_ERROR(errors.ToStatus(name));
  if (skipped) w.notes.push_back(std::to_string(skipped) + " task rows not terminated skipped");
  if (w.jobs.empty()) return InvalidArgument(name + ": no terminated task in the table");
  return w;
}

}  // namespace tessera
