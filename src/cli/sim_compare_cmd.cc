// tessera sim compare BASE OTHER [--policy P] [-o table|json|yaml]: two runs of one workload
// (the --out directories of two `sim run`s) compared over the jobs both started
// (docs/simulation.md#comparing-two-runs).
#include <fmt/format.h>

#include <filesystem>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "common/file.h"
#include "sim/compare.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {
namespace fs = std::filesystem;

struct SimCompareArgs {
  std::string base, other, policy, output = "table";
};

// The policy subdirectories (those holding a decisions.jsonl) of a run's directory.
std::vector<std::string> PoliciesIn(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec) && fs::exists(entry.path() / "decisions.jsonl", ec))
      names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string Seconds(const json& v) {
  return v.is_null() ? std::string("-") : fmt::format("{:.0f}", v.get<double>());
}

void WriteTable(const json& doc, std::ostream& out) {
  Table table({"CLASS", "JOBS", "BASE MEAN S", "BASE P95 S", "OTHER MEAN S", "OTHER P95 S"});
  auto row = [&](const std::string& name, const json& q) {
    table.Add({name, std::to_string(q["base"]["count"].get<size_t>()), Seconds(q["base"]["mean"]),
               Seconds(q["base"]["p95"]), Seconds(q["other"]["mean"]), Seconds(q["other"]["p95"])});
  };
  for (const auto& [name, q] : doc["queue_s"]["per_class"].items())
    row(name, q);
  row("all", doc["queue_s"]["all"]);
  table.Write(out);
  const json& jobs = doc["jobs"];
  out << "queueing delay over the " << jobs["both"].get<size_t>() << " jobs both runs started; "
      << jobs["only_base"].get<size_t>() << " started only in base, "
      << jobs["only_other"].get<size_t>() << " only in other\n";
}

int RunSimCompare(const SimCompareArgs& args, std::ostream& out, std::ostream& err) {
  std::string policy = args.policy;
  if (policy.empty()) {
    std::vector<std::string> in_base = PoliciesIn(args.base);
    if (in_base.size() != 1) {
      err << "tessera sim compare: " << args.base << ": "
          << (in_base.empty() ? "no run here (no POLICY/decisions.jsonl)"
                              : "runs of several policies: name one with --policy")
          << "\n";
      return kExitInvalidInput;
    }
    policy = in_base.front();
  }
  std::string texts[2];
  std::string names[2];
  const std::string* dirs[2] = {&args.base, &args.other};
  for (int i = 0; i < 2; ++i) {
    names[i] = (fs::path(*dirs[i]) / policy / "decisions.jsonl").string();
    Result<std::string> text = ReadFileBounded(names[i], kMaxTraceFileBytes * 4);
    if (!text.ok()) {
      err << "tessera sim compare: " << text.status().message() << "\n";
      return kExitInvalidInput;
    }
    texts[i] = std::move(*text);
  }
  Result<json> doc = CompareDecisionLogs({names[0], texts[0]}, {names[1], texts[1]});
  if (!doc.ok()) {
    err << "tessera sim compare: " << doc.status().message() << "\n";
    return kExitInvalidInput;
  }
  json full = {{"base", args.base}, {"other", args.other}, {"policy", policy}};
  full.update(*doc);
  switch (*ParseOutputFormat(args.output)) {
    case OutputFormat::kTable:
      WriteTable(full, out);
      break;
    case OutputFormat::kJson:
      out << full.dump(2) << "\n";
      break;
    case OutputFormat::kYaml:
      WriteYaml(full, out);
      break;
  }
  return kExitOk;
}

}  // namespace

void RegisterSimCompare(CLI::App* sim, std::ostream& out, std::ostream& err, int& code) {
  auto* cmd = sim->add_subcommand(
      "compare", "Two runs of one workload, job by job: queueing over the jobs both started");
  auto args = std::make_shared<SimCompareArgs>();
  cmd->add_option("BASE", args->base, "The --out directory of the first run")->required();
  cmd->add_option("OTHER", args->other, "The --out directory of the second run")->required();
  cmd->add_option("--policy", args->policy,
                  "The policy whose runs to compare (default: the one policy BASE ran)");
  cmd->add_option("-o,--output", args->output, "Output format")
      ->check(CLI::IsMember({"table", "json", "yaml"}))
      ->capture_default_str();
  cmd->callback([args, &out, &err, &code] { code = RunSimCompare(*args, out, err); });
}

}  // namespace tessera::cli
