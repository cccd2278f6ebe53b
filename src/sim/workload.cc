#include "sim/workload.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "common/file.h"

namespace tessera {

std::optional<TraceFormat> ParseTraceFormat(std::string_view s) {
  if (s == "openb") return TraceFormat::kOpenb;
  if (s == "gavel") return TraceFormat::kGavel;
  if (s == "sia") return TraceFormat::kSia;
  if (s == "pai2020") return TraceFormat::kPai2020;
  if (s == "philly") return TraceFormat::kPhilly;
  if (s == "jsonl") return TraceFormat::kJsonl;
  if (s == "synthetic") return TraceFormat::kSynthetic;
  return std::nullopt;
}

std::string_view TraceFormatName(TraceFormat f) {
  switch (f) {
    case TraceFormat::kOpenb:
      return "openb";
    case TraceFormat::kGavel:
      return "gavel";
    case TraceFormat::kSia:
      return "sia";
    case TraceFormat::kPai2020:
      return "pai2020";
    case TraceFormat::kPhilly:
      return "philly";
    case TraceFormat::kJsonl:
      return "jsonl";
    case TraceFormat::kSynthetic:
      return "synthetic";
  }
  return "?";
}

TenantId DefaultTenant(const Spec& spec) {
  if (auto t = spec.FindTenant("default")) return *t;
  // The first leaf of the tree.
  for (size_t i = 0; i < spec.tenants.size(); ++i) {
    if (spec.tenants[i].children.empty()) return TenantId(static_cast<uint32_t>(i));
  }
  return TenantId();
}

Job TraceTrainingJob(std::string name, TenantId tenant, const ImportOptions& options) {
  Job job;
  job.name = std::move(name);
  job.job_class = WorkloadClass::kTraining;
  job.tenant = tenant;
  job.priority = "normal";
  job.preemptible = true;
  job.checkpoint_interval = options.default_checkpoint;
  job.gang.require = TopologyLevel::kCluster;
  job.gang.prefer = TopologyLevel::kNode;
  return job;
}

bool LineReader::Next(std::string_view* line) {
  while (pos_ <= text_.size()) {
    size_t nl = text_.find('\n', pos_);
    std::string_view l = text_.substr(pos_, nl == std::string_view::npos ? nl : nl - pos_);
    pos_ = nl == std::string_view::npos ? text_.size() + 1 : nl + 1;
    ++line_no_;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    *line = l;
    return true;
  }
  return false;
}

void SortByArrival(Workload& w) {
  std::stable_sort(w.jobs.begin(), w.jobs.end(), [](const TraceJob& a, const TraceJob& b) {
    return a.job.submit_time.value_or(0) < b.job.submit_time.value_or(0);
  });
}

std::optional<DeviceModelId> FindModelNoCase(const Spec& spec, std::string_view name) {
  for (size_t i = 0; i < spec.device_models.size(); ++i) {
    const std::string& n = spec.device_models[i].name;
    if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return DeviceModelId(static_cast<uint32_t>(i));
    }
  }
  return std::nullopt;
}

namespace {

Result<std::string> ReadText(const std::string& path) {
  return ReadFileBounded(path, kMaxTraceFileBytes);
}

std::string Dirname(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

Result<Workload> ImportWorkload(const Spec& spec, TraceFormat format, const std::string& path,
                                const ImportOptions& options) {
  if (!DefaultTenant(spec).valid() && format != TraceFormat::kJsonl &&
      format != TraceFormat::kSynthetic) {
    return InvalidArgument("the fleet declares no tenant to charge trace jobs to");
  }
  Result<Workload> w = Status(StatusCode::kInternal, "unreachable");
  if (format == TraceFormat::kSynthetic) {
    w = SyntheticWorkload(spec, options);
  } else if (format == TraceFormat::kOpenb) {
    w = OpenbWorkload(spec, path, options);
  } else {
    auto text = ReadText(path);
    if (!text.ok()) return text.status();
    switch (format) {
      case TraceFormat::kGavel: {
        std::string tput = options.throughputs;
        if (tput.empty()) {
          std::string dir = Dirname(path);
          for (int up = 0; up < 4 && tput.empty(); ++up, dir += "/..") {
            std::string candidate = dir + "/isolated_throughputs_v100_p100_k80.csv";
            if (std::ifstream(candidate)) tput = candidate;
          }
          if (tput.empty()) {
            return NotFound(path +
                            ": no isolated_throughputs_v100_p100_k80.csv beside the trace or "
                            "above it; pass --throughputs");
          }
        }
        auto csv = ReadText(tput);
        if (!csv.ok()) return csv.status();
        w = ParseGavelTrace(spec, path, *text, *csv, options);
        break;
      }
      case TraceFormat::kSia:
        w = ParseSiaWorkload(spec, path, *text, options);
        break;
      case TraceFormat::kPai2020:
        w = ParsePaiTasks(spec, path, *text, options);
        break;
      case TraceFormat::kPhilly:
        w = ParsePhillyJobs(spec, path, *text, options);
        break;
      case TraceFormat::kJsonl:
        w = ParseJsonlJobs(spec, path, *text, options);
        break;
      default:
        break;
    }
  }
  if (!w.ok()) return w;
  SortByArrival(*w);
  return w;
}

}  // namespace tessera
