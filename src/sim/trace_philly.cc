// Microsoft's Philly trace with real durations (../shared/data/philly/philly-jobs.csv, as
// processed by Sia's artifacts): timestamp,duration,num_gpus,gpu_time,cluster — submission
// time "YYYY-MM-DD HH:MM:SS", run time in seconds, GPUs, GPU-seconds, and Philly's virtual
// cluster id. Each row is one training job:
//   * arrival: its timestamp, counted from the earliest row read (of the chosen virtual
//     cluster, with ImportOptions::philly_cluster);
//   * work: the recorded duration, on the reference device (speed 1000), and the job's
//     runtime estimate is the same (the trace's durations are the only estimate there is);
//   * shape: a gang of num_gpus GPUs in tasks as large as the fleet's largest node allows
//     (8 GPUs -> one task of 8; 32 -> four tasks of 8 within one cluster, preferably one
//     leaf switch), one CPU core per GPU;
//   * tenant: the fleet's leaf tenant named after the virtual cluster (`6214e9`, at any depth)
//     if there is exactly one, else the default tenant — so a multi-tenant run gives each virtual
//     cluster its quota.
// Gang sizes that do not divide into node-sized tasks run as one-GPU tasks.
#include <algorithm>
#include <chrono>
#include <map>

#include "common/text.h"
#include "config/csv.h"
#include "sim/workload.h"

namespace tessera {
namespace {

// "2017-10-09 07:01:55" as milliseconds since the Unix epoch (UTC), or nullopt.
std::optional<int64_t> ParseTimestamp(std::string_view s) {
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' ||
      s[16] != ':') {
    return std::nullopt;
  }
  auto field = [&](size_t at, size_t len, int* out) {
    int v = 0;
    for (size_t i = at; i < at + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
  };
  int y, mo, d, h, mi, se;
  if (!field(0, 4, &y) || !field(5, 2, &mo) || !field(8, 2, &d) || !field(11, 2, &h) ||
      !field(14, 2, &mi) || !field(17, 2, &se)) {
    return std::nullopt;
  }
  using namespace std::chrono;
  year_month_day date{year(y), month(static_cast<unsigned>(mo)), day(static_cast<unsigned>(d))};
  if (!date.ok() || h > 23 || mi > 59 || se > 59) return std::nullopt;
  auto t = sys_days(date) + hours(h) + minutes(mi) + seconds(se);
  return duration_cast<milliseconds>(t.time_since_epoch()).count();
}

int32_t LargestNodeDevices(const Spec& spec) {
  int32_t most = 0;
  for (const Node& n : spec.nodes)
    most = std::max(most, static_cast<int32_t>(n.devices.size()));
  return most;
}

// The leaf tenant named `id` (its last path component), if exactly one has that name.
std::optional<TenantId> TenantNamed(const Spec& spec, std::string_view id) {
  std::optional<TenantId> found;
  for (size_t t = 0; t < spec.tenants.size(); ++t) {
    const Tenant& tenant = spec.tenants[t];
    if (!tenant.children.empty() || tenant.name != id) continue;
    if (found) return std::nullopt;
    found = TenantId(static_cast<uint32_t>(t));
  }
  return found;
}

}  // namespace

Result<Workload> ParsePhillyJobs(const Spec& spec, const std::string& name, std::string_view text,
                                 const ImportOptions& options) {
  auto table = CsvTable::Parse(name, text);
  if (!table.ok()) return table.status();
  TESSERA_RETURN_IF_ERROR(
      table->RequireColumns({"timestamp", "duration", "num_gpus", "gpu_time", "cluster"}));
  const int32_t per_node = std::max(1, LargestNodeDevices(spec));
  Workload w;
  CsvErrors errors;
  const TenantId fallback = DefaultTenant(spec);
  std::map<std::string, size_t, std::less<>> per_cluster;  // jobs read per virtual cluster
  std::map<std::string, size_t, std::less<>> seen;         // rows per virtual cluster
  std::vector<int64_t> arrivals;                           // absolute, aligned with w.jobs
  for (size_t i = 0; i < table->size(); ++i) {
    CsvRow row = table->row(i);
    Status width = row.CheckWidth();
    if (!width.ok()) {
      errors.Add(width);
      continue;
    }
    auto cluster = row.NonEmpty("cluster");
    if (!cluster.ok()) {
      errors.Add(cluster.status());
      continue;
    }
    ++seen[std::string(*cluster)];
    if (!options.philly_cluster.empty() && *cluster != options.philly_cluster) continue;
    auto stamp = row.Text("timestamp");
    auto duration = row.MilliValue("duration");  // seconds -> milliseconds
    auto gpus = row.Int("num_gpus", 1, 4096);
    auto gpu_time = row.MilliValue("gpu_time");
    for (const Status* s :
         {&stamp.status(), &duration.status(), &gpus.status(), &gpu_time.status()})
      if (!s->ok()) errors.Add(*s);
    if (!stamp.ok() || !duration.ok() || !gpus.ok() || !gpu_time.ok()) continue;
    std::optional<int64_t> at = ParseTimestamp(*stamp);
    if (!at) {
      errors.Add(row.ErrorAt(
          *table->Column("timestamp"),
          "expected a time like 2017-10-09 07:01:55, got \"" + std::string(*stamp) + "\""));
      continue;
    }
    if (*duration <= 0) {
      errors.Add(row.ErrorAt(*table->Column("duration"), "expected a duration above 0 seconds"));
      continue;
    }
    const int32_t n = static_cast<int32_t>(*gpus);
    int32_t per_task = std::min(n, per_node);
    if (n % per_task != 0) per_task = 1;
    std::optional<TenantId> own = TenantNamed(spec, *cluster);
    TraceJob tj;
    tj.job = TraceTrainingJob("philly-" + std::string(*cluster) + "-" + std::to_string(row.line()),
                              own ? *own : fallback, options);
    Job& job = tj.job;
    job.labels["virtual_cluster"] = std::string(*cluster);
    TaskGroup g;
    g.name = "worker";
    g.count = n / per_task;
    g.request.cpu = kMilliPerUnit * per_task;
    g.request.devices.count = per_task;
    g.request.devices.kind = DeviceKind::kGpu;
    job.task_groups.push_back(std::move(g));
    if (n / per_task > 1) job.gang.prefer = TopologyLevel::kLeaf;
    tj.work = *duration;
    job.runtime = tj.work;
    ++per_cluster[std::string(*cluster)];
    arrivals.push_back(*at);
    w.jobs.push_back(std::move(tj));
  }
  TESSERA_RETURN_IF_ERROR(errors.ToStatus(name));
  if (!options.philly_cluster.empty() && seen.count(options.philly_cluster) == 0) {
    std::vector<std::string> known;
    for (const auto& [id, rows] : seen)
      known.push_back(id);
    return InvalidArgument(name + ": no virtual cluster \"" + options.philly_cluster +
                           "\" (the trace has " + JoinNames(known) + ")");
  }
  if (w.jobs.empty()) return InvalidArgument(name + ": no jobs in the workload");
  const int64_t first = *std::min_element(arrivals.begin(), arrivals.end());
  for (size_t k = 0; k < w.jobs.size(); ++k)
    w.jobs[k].job.submit_time = arrivals[k] - first;
  for (const auto& [id, jobs] : per_cluster) {
    std::optional<TenantId> own = TenantNamed(spec, id);
    w.notes.push_back(
        "virtual cluster " + id + ": " + std::to_string(jobs) + " jobs, tenant " +
        (own ? spec.tenants[own->value()].path
             : spec.tenants[fallback.value()].path + " (no tenant named " + id + ")"));
  }
  return w;
}

}  // namespace tessera
