#include "cli/sim_fgd_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "cli/app.h"
#include "cli/fgd_chart.h"
#include "common/text.h"
#include "sched/scorer.h"
#include "sim/fgd_experiment.h"

namespace tessera::cli {
namespace {

// The policies of `--policy all`, in the order of the FGD paper, then Tessera's own.
const std::vector<std::string> kAllPolicies = {"random",      "dot-product", "gpu-clustering",
                                               "gpu-packing", "best-fit",    "fgd",
                                               "first-fit",   "tessera"};

// A float as Python's repr writes it ("44.0", "13.919183673469389"); NaN as pandas does ("").
std::string PyFloat(double v) {
  if (std::isnan(v)) return "";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string Stem(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

}  // namespace

Result<std::vector<uint64_t>> ParseSeeds(const std::string& text) {
  constexpr uint64_t kMaxSeeds = 10000;
  std::vector<uint64_t> seeds;
  std::set<uint64_t> seen;
  auto number = [](const std::string& t, uint64_t* v) {
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 19)
      return false;
    *v = std::stoull(t);
    return true;
  };
  auto fail = [](const std::string& why) { return InvalidArgument("--seeds: " + why); };
  for (const std::string& part : SplitCommas(text)) {
    size_t dash = part.find('-');
    uint64_t lo = 0, hi = 0;
    bool ok = dash == std::string::npos
                  ? number(part, &lo) && (hi = lo, true)
                  : number(part.substr(0, dash), &lo) && number(part.substr(dash + 1), &hi);
    if (!ok) {
      return fail("expected a seed, a range such as 42-51, or a comma-separated list; got \"" +
                  part + "\" in \"" + text + "\"");
    }
    if (hi < lo) {
      return fail("the range " + part + " is reversed (write " + std::to_string(hi) + "-" +
                  std::to_string(lo) + ")");
    }
    if (hi - lo >= kMaxSeeds || seeds.size() + (hi - lo + 1) > kMaxSeeds) {
      return fail("\"" + text + "\" asks for too many seeds (at most " + std::to_string(kMaxSeeds) +
                  ")");
    }
    for (uint64_t v = lo; v <= hi; ++v) {
      if (!seen.insert(v).second) {
        return fail("seed " + std::to_string(v) + " is given twice (each seed counts once in " +
                    "the medians)");
      }
      seeds.push_back(v);
    }
  }
  return seeds;
}

namespace {

// --policy: "all" or a comma-separated list of scorers, each once and each known.
std::optional<std::vector<std::string>> FgdPolicies(const std::string& flag,
                                                    const ScorerRegistry& registry,
                                                    std::ostream& err) {
  std::vector<std::string> policies;
  if (flag == "all") {
    policies = kAllPolicies;
  } else {
    for (const std::string& p : SplitCommas(flag)) {
      if (p.empty()) {
        err << "tessera sim fgd: --policy: an empty policy name in \"" << flag
            << "\"; run 'tessera sim fgd --help' for the names\n";
        return std::nullopt;
      }
      if (std::find(policies.begin(), policies.end(), p) != policies.end()) {
        err << "tessera sim fgd: --policy: " << p << " is named twice\n";
        return std::nullopt;
      }
      policies.push_back(p);
    }
  }
  for (const std::string& p : policies) {
    if (!registry.Has(p)) {
      std::string names;
      for (const std::string& n : registry.Names())
        names += (names.empty() ? "" : ", ") + n;
      err << "tessera sim fgd: unknown policy \"" << p << "\"; expected all or one of " << names
          << "\n";
      return std::nullopt;
    }
  }
  return policies;
}

// Every (policy, seed) run, spread over `threads` threads, in (policy, seed) order; a
// policy's scorer that cannot be made is said on `err` (false).
bool RunAll(const FgdExperiment& exp, const ScorerRegistry& registry,
            const std::vector<std::string>& policies, const std::vector<uint64_t>& seeds,
            double tune, int threads, std::vector<FgdRun>& runs, std::ostream& err) {
  struct Job {
    std::string policy;
    uint64_t seed;
  };
  std::vector<Job> jobs;
  for (const std::string& p : policies) {
    for (uint64_t s : seeds)
      jobs.push_back({p, s});
  }
  runs.assign(jobs.size(), FgdRun());
  std::vector<std::string> failures(jobs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      ScorerContext ctx{&exp.workload()};
      auto scorer = registry.Create(jobs[i].policy, ctx);
      if (!scorer.ok()) {
        failures[i] = scorer.status().message();
        continue;
      }
      runs[i] = exp.Run(**scorer, jobs[i].seed, tune);
      runs[i].policy = jobs[i].policy;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(worker);
  for (std::thread& t : pool)
    t.join();
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!failures[i].empty()) {
      err << "tessera sim fgd: " << jobs[i].policy << ": " << failures[i] << "\n";
      return false;
    }
  }
  return true;
}

// allo.csv, frag.csv and frag_ratio.csv: one line per run, the curve's points as columns.
bool WriteCurves(const std::string& out_dir, const std::string& workload, const std::string& tune,
                 const FgdExperiment& exp, const std::vector<FgdRun>& runs) {
  auto write = [&](const std::string& file, bool with_total, std::vector<double> FgdRun::*curve) {
    std::ofstream f(std::filesystem::path(out_dir) / file);
    f << "workload,sc_policy,tune,seed";
    if (with_total) f << ",total_gpus";
    for (int x = 0; x < kFgdCurvePoints; ++x)
      f << "," << x;
    f << "\n";
    for (const FgdRun& r : runs) {
      f << workload << "," << r.policy << "," << tune << "," << r.seed;
      if (with_total) f << "," << exp.total_gpus();
      for (double v : r.*curve)
        f << "," << PyFloat(v);
      f << "\n";
    }
    return static_cast<bool>(f);
  };
  return write("allo.csv", true, &FgdRun::allo) && write("frag.csv", false, &FgdRun::frag) &&
         write("frag_ratio.csv", false, &FgdRun::frag_ratio);
}

// placements.jsonl: where each run put each arriving pod.
bool WritePlacements(const std::string& out_dir, const FgdExperiment& exp,
                     const std::vector<FgdRun>& runs) {
  std::ofstream f(std::filesystem::path(out_dir) / "placements.jsonl");
  const Spec& fleet = exp.fleet();
  for (const FgdRun& r : runs) {
    for (size_t arrival = 0; arrival < r.outcomes.size(); ++arrival) {
      const FgdPodOutcome& o = r.outcomes[arrival];
      // A resampled trace repeats pod names: the arrival index tells the copies apart.
      f << "{\"policy\": \"" << r.policy << "\", \"seed\": " << r.seed
        << ", \"arrival\": " << arrival << ", \"pod\": \"" << exp.pods()[o.pod].name
        << "\", \"node\": ";
      if (o.node) {
        f << "\"" << fleet.node(exp.cell().spec_node(*o.node)).name << "\", \"devices\": [";
        for (size_t k = 0; k < o.devices.size(); ++k) {
          f << (k ? ", " : "") << "{\"index\": " << o.devices[k].index
            << ", \"milli\": " << o.devices[k].milli << "}";
        }
        f << "]}\n";
      } else {
        f << "null, \"devices\": []}\n";
      }
    }
  }
  return static_cast<bool>(f);
}

// The published curves the chart overlays, or why there are none.
struct Overlay {
  std::optional<PublishedCurves> curves;
  std::string note;
};

// --published (or fgd-expected beside the pods' folder), read before anything runs so that a
// bad --published costs nothing; nullopt after saying what is wrong.
std::optional<Overlay> ReadOverlay(const SimFgdArgs& args, const std::string& workload,
                                   std::ostream& err) {
  std::string dir =
      args.published.empty()
          ? (std::filesystem::path(args.pods).parent_path().parent_path() / "fgd-expected").string()
          : args.published;
  std::error_code dir_error;
  if (!args.published.empty() && !std::filesystem::is_directory(args.published, dir_error)) {
    err << "tessera sim fgd: --published: " << args.published << " is not a directory\n";
    return std::nullopt;
  }
  Overlay overlay;
  if (auto read = ReadPublishedCurves(dir, workload); read.ok()) {
    overlay.curves = std::move(*read);
  } else if (read.status().code() != StatusCode::kNotFound) {
    err << "tessera sim fgd: --published: " << read.status().message() << "\n";
    return std::nullopt;
  } else {
    overlay.note = read.status().message();
  }
  return overlay;
}

// The median allocation ratio at 100% and 130% arrived demand, and failed pods, per policy.
void WriteFgdSummary(const std::vector<std::string>& policies, const std::vector<FgdRun>& runs,
                     std::ostream& out) {
  out << fmt::format("{:<16} {:>10} {:>10} {:>10}\n", "POLICY", "ALLO@100", "ALLO@130", "FAILED");
  for (const std::string& p : policies) {
    std::vector<double> a100, a130, failed;
    for (const FgdRun& r : runs) {
      if (r.policy != p) continue;
      a100.push_back(r.allo[100]);
      a130.push_back(r.allo[130]);
      failed.push_back(static_cast<double>(r.failed));
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      size_t n = v.size();
      return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    };
    // A small trace may never reach 100% or 130% arrived: say so instead of "nan".
    auto cell = [](double v) {
      return std::isnan(v) ? std::string("-") : fmt::format("{:.2f}", v);
    };
    out << fmt::format("{:<16} {:>10} {:>10} {:>10.0f}\n", p, cell(median(a100)),
                       cell(median(a130)), median(failed));
  }
}

}  // namespace

int RunSimFgd(const SimFgdArgs& args, std::ostream& out, std::ostream& err) {
  Result<std::vector<uint64_t>> seeds_read = ParseSeeds(args.seeds);
  if (!seeds_read.ok()) {
    err << "tessera sim fgd: " << seeds_read.status().message() << "\n";
    return kExitInvalidInput;
  }
  const std::vector<uint64_t>& seeds = *seeds_read;
  if (args.threads < 0 || args.threads > 1024) {
    err << "tessera sim fgd: --threads must be from 0 (one per core) to 1024\n";
    return kExitInvalidInput;
  }
  if (!(args.tune > 0 && args.tune <= 10)) {
    err << "tessera sim fgd: --tune must be above 0 and at most 10\n";
    return kExitInvalidInput;
  }
  ScorerRegistry registry;
  RegisterBuiltinScorers(registry);
  std::optional<std::vector<std::string>> policies = FgdPolicies(args.policy, registry, err);
  if (!policies) return kExitInvalidInput;
  std::optional<PodMix> mix;
  if (!args.mix.empty()) {
    auto parsed = ParsePodMix(args.mix);
    if (!parsed.ok()) {
      err << "tessera sim fgd: --mix: " << parsed.status().message() << "\n";
      return kExitInvalidInput;
    }
    mix = *parsed;
  }
  auto exp = FgdExperiment::Load(args.nodes, args.pods, mix ? &*mix : nullptr);
  if (!exp.ok()) {
    err << "tessera sim fgd: " << exp.status().message() << "\n";
    return kExitInvalidInput;
  }
  // A resampled list is a workload of its own: "openb_pod_list_default+gpushare=0.8".
  const std::string workload_name = Stem(args.pods) + (mix ? "+" + mix->ToString() : "");
  std::optional<Overlay> overlay = ReadOverlay(args, workload_name, err);
  if (!overlay) return kExitInvalidInput;
  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  if (ec) {
    err << "tessera sim fgd: cannot create " << args.out << ": " << ec.message() << "\n";
    return kExitFailure;
  }

  // Runs are independent: spread them over threads, keep the output in (policy, seed) order.
  int threads = args.threads > 0
                    ? args.threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<FgdRun> runs;
  auto start = std::chrono::steady_clock::now();
  if (!RunAll(*exp, registry, *policies, seeds, args.tune, threads, runs, err))
    return kExitInvalidInput;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::string& workload = workload_name;
  bool ok = WriteCurves(args.out, workload, PyFloat(args.tune), *exp, runs);
  if (ok && args.placements) {
    ok = WritePlacements(args.out, *exp, runs);
  } else if (ok) {
    // No placements this time: an earlier run's file would pass for this run's.
    std::error_code gone;
    std::filesystem::remove(std::filesystem::path(args.out) / "placements.jsonl", gone);
  }
  if (!ok) {
    err << "tessera sim fgd: cannot write the results to " << args.out << "\n";
    return kExitFailure;
  }
  FgdChartInput chart_input;
  chart_input.workload = workload;
  chart_input.tune = args.tune;
  chart_input.seeds = args.seeds;
  chart_input.seed_count = seeds.size();
  chart_input.policies = *policies;
  chart_input.runs = &runs;
  chart_input.published = std::move(overlay->curves);
  chart_input.published_note = overlay->note;
  Status chart =
      WriteFgdChart((std::filesystem::path(args.out) / "chart.html").string(), chart_input);
  if (!chart.ok()) {
    err << "tessera sim fgd: chart.html: " << chart.message() << "\n";
    return kExitFailure;
  }
  // Summary: median allocation ratio at 100% and 130% arrived demand per policy.
  out << fmt::format(
      "{} runs ({} policies x {} seeds) in {:.2f}s on {} threads; {} pods per "
      "run from {}\n",
      runs.size(), policies->size(), seeds.size(), seconds, threads,
      runs.empty() ? 0 : runs[0].outcomes.size(), workload);
  WriteFgdSummary(*policies, runs, out);
  out << "wrote allo.csv, frag.csv, frag_ratio.csv, chart.html"
      << (args.placements ? ", placements.jsonl" : "") << " to " << args.out << "\n";
  return kExitOk;
}

}  // namespace tessera::cli
