// tessera sim run: replay a workload through the engine on a fleet, for one or more
// policies, and write metrics.json, timeseries.csv, decisions.jsonl per policy and one
// report.html comparing them (docs/simulation.md).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <variant>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/output.h"
#include "cli/sim_report.h"
#include "common/file.h"
#include "common/text.h"
#include "engine/ordering.h"
#include "sim/isolated.h"
#include "sim/sim_run.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

struct SimRunArgs {
  std::vector<std::string> fleet;
  std::string workload;
  std::string format;
  std::string policy;  // empty: the configuration's scheduler section's (model/scheduler.h)
  std::string compare;
  std::string out;
  uint64_t seed = 1;
  int64_t jobs = 1000;
  double load = 0.8;
  std::optional<double>
      days;  // synthetic: arrivals over this many days; the job count follows from load
  std::string placement;  // empty: the configuration's scheduler section's
  std::string throughputs;
  std::string checkpoint = "5m";
  std::string mtbf;
  std::string mttr = "4h";
  std::string failures;
  std::string cluster;                   // philly: one virtual cluster
  std::string backfill = "on";           // off: no policy of the run backfills
  std::string baseline = "coordinated";  // isolated: a static home cluster per team and class
  bool progress = false;
  bool no_progress = false;
};

bool WriteText(const std::filesystem::path& path, const std::string& text, std::ostream& err) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f) {
    err << "tessera sim run: cannot write " << path.string() << "\n";
    return false;
  }
  return true;
}

// The flags that need no file: the trace's format, or an error said on `err`.
std::optional<TraceFormat> CheckFlags(const SimRunArgs& args, std::ostream& err) {
  auto format = ParseTraceFormat(args.format);
  if (!format) {
    err << "tessera sim run: --format: expected openb, gavel, sia, pai2020, philly, jsonl or "
           "synthetic, got \""
        << args.format << "\"\n";
    return std::nullopt;
  }
  const char* wrong = nullptr;
  if (!args.cluster.empty() && *format != TraceFormat::kPhilly) {
    wrong = "--cluster is for --format philly only";
  } else if (args.backfill != "on" && args.backfill != "off") {
    err << "tessera sim run: --backfill: expected on or off, got \"" << args.backfill << "\"\n";
    return std::nullopt;
  } else if (*format != TraceFormat::kSynthetic && args.workload.empty()) {
    err << "tessera sim run: --workload is required for --format " << args.format << "\n";
    return std::nullopt;
  } else if (args.jobs < 1 || args.jobs > 100000000) {
    wrong = "--jobs: expected 1..100000000";
  } else if (args.days && !(*args.days > 0 && *args.days <= 366)) {
    wrong = "--days: expected a number in (0, 366]";
  } else if (args.days && *format != TraceFormat::kSynthetic) {
    wrong = "--days is for --format synthetic only";
  } else if (!(args.load > 0 && args.load <= 100)) {
    wrong = "--load: expected a number in (0, 100]";
  }
  if (wrong != nullptr) {
    err << "tessera sim run: " << wrong << "\n";
    return std::nullopt;
  }
  return format;
}

// --policy and --compare, each once, with --backfill applied.
std::optional<std::vector<SimPolicy>> ParsePolicies(const SimRunArgs& args, std::ostream& err) {
  std::vector<SimPolicy> policies;
  std::vector<std::string> names = {args.policy};
  if (!args.compare.empty()) {
    for (const std::string& p : SplitCommas(args.compare))
      names.push_back(p);  // an empty item is an unknown policy
  }
  for (const std::string& name : names) {
    auto p = ParseSimPolicy(name);
    if (!p.ok()) {
      err << "tessera sim run: --policy/--compare: " << p.status().message() << "\n";
      return std::nullopt;
    }
    if (std::any_of(policies.begin(), policies.end(),
                    [&](const SimPolicy& q) { return q.name == p->name; })) {
      err << "tessera sim run: policy " << name << " named twice\n";
      return std::nullopt;
    }
    if (args.backfill == "off") {
      if (p->name == "backfill") {
        err << "tessera sim run: policy backfill with --backfill off is fifo\n";
        return std::nullopt;
      }
      p->backfill = false;
    }
    policies.push_back(*p);
  }
  return policies;
}

// --mtbf and --failures into `so`; false after saying what is wrong.
bool ReadFailures(const SimRunArgs& args, const Spec& spec, SimOptions& so, std::ostream& err) {
  if (!args.mtbf.empty()) {
    auto mtbf = ParseMtbf(spec, args.mtbf);
    if (!mtbf.ok()) {
      err << "tessera sim run: " << mtbf.status().message() << "\n";
      return false;
    }
    so.failures.mtbf = *mtbf;
  }
  if (args.failures.empty()) return true;
  Result<std::string> text = ReadFileBounded(args.failures, kMaxTraceFileBytes);
  if (!text.ok()) {
    err << "tessera sim run: --failures: " << text.status().message() << "\n";
    return false;
  }
  auto cell = CellState::FromSpec(spec);
  if (!cell.ok()) {
    err << "tessera sim run: " << cell.status().message() << "\n";
    return false;
  }
  auto schedule = ParseOutageSchedule(args.failures, *text, *cell);
  if (!schedule.ok()) {
    err << "tessera sim run: " << schedule.status().message() << "\n";
    return false;
  }
  so.failures.schedule = *schedule;
  return true;
}

// The progress bar of one policy's run: on a terminal it appears once the run has taken a
// second (short runs stay quiet); `always` (--progress) draws it from the start.
std::function<void(double)> ProgressBar(const std::string& name, bool always, std::ostream& err) {
  auto started = std::chrono::steady_clock::now();
  auto last = std::make_shared<double>(-1);  // the share drawn last; -1 = nothing yet
  return [&err, name, started, last, always](double done) {
    if (done == *last) return;
    if (!always && *last < 0 &&
        std::chrono::steady_clock::now() - started < std::chrono::seconds(1)) {
      return;
    }
    *last = done;
    int width = 40, filled = static_cast<int>(done * width);
    err << fmt::format("\r{:<9} [{}{}] {:5.1f}%", name, std::string(filled, '#'),
                       std::string(width - filled, '.'), done * 100)
        << (done >= 1.0 ? "\n" : "") << std::flush;
  };
}

// The table printed at the end: one line per policy.
void WriteSummary(const std::vector<PolicyRun>& runs, std::ostream& out) {
  Table table({"POLICY", "COMPLETED", "MEAN JCT", "P95 JCT", "MEAN QUEUE", "GPU ALLOC",
               "PREEMPTIONS", "LOST GPU-H"});
  auto num = [](const json& v) {
    return v.is_null() ? std::string("-") : fmt::format("{:.0f}s", v.get<double>());
  };
  for (const PolicyRun& r : runs) {
    const json& m = r.metrics;
    table.Add({r.policy,
               std::to_string(m["jobs"]["completed"].get<size_t>()) + "/" +
                   std::to_string(m["jobs"]["submitted"].get<size_t>()),
               num(m["jct_s"]["mean"]), num(m["jct_s"]["p95"]), num(m["queue_s"]["mean"]),
               fmt::format("{:.1f}%", m["gpu_alloc_ratio"]["mean"].get<double>() * 100),
               std::to_string(m["preemptions"].get<uint64_t>()),
               fmt::format("{:.1f}", m["lost_gpu_hours"].get<double>())});
  }
  table.Write(out);
}

// Each policy's run, written under --out as it ends; the runs, or an exit code.
std::variant<std::vector<PolicyRun>, int> RunPolicies(const SimRunArgs& args, const Spec& spec,
                                                      const Workload& workload,
                                                      const std::vector<SimPolicy>& policies,
                                                      SimOptions so, const json& assignment,
                                                      std::ostream& err) {
  ScorerRegistry scorers;
  RegisterBuiltinScorers(scorers);
  OrderingRegistry orderings;
  RegisterBuiltinOrderings(orderings);
  const bool show = !args.no_progress && (args.progress || isatty(2));
  std::vector<PolicyRun> runs;
  for (const SimPolicy& policy : policies) {
    if (show) so.progress = ProgressBar(policy.name, args.progress, err);
    auto outcome = RunSimulation(spec, workload, policy, so, scorers, orderings);
    if (!outcome.ok()) {
      err << "tessera sim run: " << outcome.status().message() << "\n";
      return kExitInvalidInput;
    }
    outcome->metrics["baseline"] = args.baseline;
    if (!assignment.is_null()) outcome->metrics["assignment"] = assignment;
    std::filesystem::path dir = std::filesystem::path(args.out) / policy.name;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!WriteText(dir / "metrics.json", outcome->metrics.dump(2) + "\n", err) ||
        !WriteText(dir / "timeseries.csv", outcome->timeseries_csv, err) ||
        !WriteText(dir / "decisions.jsonl", outcome->decisions_jsonl, err)) {
      return kExitFailure;
    }
    runs.push_back({policy.name, outcome->metrics, std::move(outcome->timeseries_csv)});
  }
  return runs;
}

int RunSimRun(SimRunArgs args, std::ostream& out, std::ostream& err) {
  std::optional<TraceFormat> format = CheckFlags(args, err);
  if (!format) return kExitInvalidInput;
  auto checkpoint = ParseDuration(args.checkpoint);
  auto mttr = ParseDuration(args.mttr);
  if (!checkpoint.ok() || !mttr.ok() || *mttr <= 0) {
    err << "tessera sim run: " << (!checkpoint.ok() ? "--checkpoint" : "--mttr")
        << ": expected a duration such as 5m or 4h\n";
    return kExitInvalidInput;
  }
  std::optional<Spec> loaded = LoadOrReport(args.fleet, err);
  if (!loaded) return kExitInvalidInput;
  Spec& spec = *loaded;
  if (spec.tenants.empty()) {
    Tenant t;
    t.name = "default";
    t.path = "default";
    spec.tenants.push_back(t);
  }
  // Unnamed, the policy and scorer are the configuration's (its scheduler section, or the
  // defaults): what the daemon would run on it.
  if (args.policy.empty()) args.policy = spec.scheduler.policy_or_default();
  if (args.placement.empty()) args.placement = spec.scheduler.placement_or_default();
  std::optional<std::vector<SimPolicy>> policies = ParsePolicies(args, err);
  if (!policies) return kExitInvalidInput;
  ScorerRegistry scorers;
  RegisterBuiltinScorers(scorers);
  if (!scorers.Has(args.placement)) {
    err << "tessera sim run: --placement: unknown scorer " << args.placement << "\n";
    return kExitInvalidInput;
  }
  ImportOptions io;
  io.throughputs = args.throughputs;
  io.default_checkpoint = *checkpoint;
  io.jobs = args.jobs;
  io.load = args.load;
  io.days = args.days.value_or(0);
  io.seed = args.seed;
  io.philly_cluster = args.cluster;
  auto workload = ImportWorkload(spec, *format, args.workload, io);
  if (!workload.ok()) {
    err << "tessera sim run: " << workload.status().message() << "\n";
    return kExitInvalidInput;
  }
  // The isolated baseline's home clusters are rules added to the fleet after the workload is
  // drawn: both baselines replay the very same jobs (the synthetic generator's datasets
  // depend on the rules).
  json assignment = nullptr;
  if (args.baseline == "isolated") assignment = IsolateClusters(spec);
  SimOptions so;
  so.placement = args.placement;
  so.seed = args.seed;
  so.failures.mttr = *mttr;
  if (!ReadFailures(args, spec, so, err)) return kExitInvalidInput;
  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  if (ec) {
    err << "tessera sim run: cannot create " << args.out << ": " << ec.message() << "\n";
    return kExitFailure;
  }
  for (const std::string& note : workload->notes)
    err << "tessera sim run: " << note << "\n";
  auto ran = RunPolicies(args, spec, *workload, *policies, so, assignment, err);
  if (const int* code = std::get_if<int>(&ran)) return *code;
  const auto& runs = std::get<std::vector<PolicyRun>>(ran);
  json all = json::object();
  for (const PolicyRun& r : runs)
    all[r.policy] = r.metrics;
  if (!WriteText(std::filesystem::path(args.out) / "metrics.json", all.dump(2) + "\n", err))
    return kExitFailure;
  std::string title =
      "tessera sim run: " + std::string(TraceFormatName(*format)) +
      (args.workload.empty() ? "" : " " + std::filesystem::path(args.workload).filename().string());
  auto page = RenderSimReport(title, runs);
  if (!page.ok()) {
    err << "tessera sim run: " << page.status().message() << "\n";
    return kExitFailure;
  }
  if (!WriteText(std::filesystem::path(args.out) / "report.html", *page, err)) return kExitFailure;
  WriteSummary(runs, out);
  out << "wrote " << args.out << "/{metrics.json,report.html} and per policy "
      << "metrics.json, timeseries.csv, decisions.jsonl\n";
  return kExitOk;
}

}  // namespace

void RegisterSimRun(CLI::App* sim, std::ostream& out, std::ostream& err, int& code) {
  auto* run = sim->add_subcommand(
      "run", "Replay a workload through the engine on a fleet (docs/simulation.md)");
  auto args = std::make_shared<SimRunArgs>();
  run->add_option("--fleet", args->fleet, "Fleet YAML files or directories")->required();
  run->add_option("--workload", args->workload, "Workload file (not for --format synthetic)");
  run->add_option("--format", args->format,
                  "openb, gavel, sia, pai2020, philly, jsonl or synthetic")
      ->required();
  run->add_option("--policy", args->policy,
                  "fifo, backfill, las or hetero (default: the policies' scheduler section's, else "
                  "backfill)");
  run->add_option("--compare", args->compare, "Further policies to run, comma-separated");
  run->add_option("--out", args->out, "Output directory")->required();
  run->add_option("--seed", args->seed, "Seed of every random choice")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            bool digits = !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
            return digits ? "" : "expected a whole number >= 0, got \"" + v + "\"";
          },
          "UINT"))
      ->capture_default_str();
  CLI::Option* jobs =
      run->add_option("--jobs", args->jobs, "Synthetic: number of jobs")->capture_default_str();
  run->add_option("--days", args->days,
                  "Synthetic: arrivals over D days, as many jobs as --load implies")
      ->excludes(jobs);
  run->add_option("--load", args->load, "Synthetic: offered device demand / capacity")
      ->capture_default_str();
  run->add_option("--placement", args->placement,
                  "Placement scorer: " + PlacementPolicyNames() +
                      " (default: the policies' scheduler section's, else tessera)");
  run->add_option(
      "--throughputs", args->throughputs,
      "Gavel: isolated_throughputs_v100_p100_k80.csv (default: found beside the trace)");
  run->add_option("--checkpoint", args->checkpoint,
                  "Checkpoint interval of trace jobs that declare none")
      ->capture_default_str();
  run->add_option("--mtbf", args->mtbf,
                  "Failures: MODEL=DURATION,... mean time between failures per device");
  run->add_option("--mttr", args->mttr, "Failures: mean time to repair a node")
      ->capture_default_str();
  run->add_option("--failures", args->failures, "Failures: schedule CSV time_s,node,down_s");
  run->add_option("--cluster", args->cluster,
                  "Philly: replay one virtual cluster (e.g. 6c71a0); default: all, each as the "
                  "tenant of its name if the fleet has one");
  run->add_option("--backfill", args->backfill,
                  "on: the policies backfill as documented; off: none does (to measure its gain)")
      ->capture_default_str();
  run->add_option("--baseline", args->baseline,
                  "coordinated: Tessera's global layer; isolated: every team's work of a class "
                  "on one cluster assigned in advance, no burst (docs/simulation.md#baselines)")
      ->check(CLI::IsMember({"coordinated", "isolated"}))
      ->capture_default_str();
  run->add_flag("--progress", args->progress,
                "Draw a progress bar on stderr even when not a terminal");
  run->add_flag("--no-progress", args->no_progress, "Never draw the progress bar");
  run->callback([args, &out, &err, &code] { code = RunSimRun(*args, out, err); });
}

}  // namespace tessera::cli
