// tessera place --fleet F --jobs J [--policy P] [-o table|json]: a dry run of placement.
// Every job is placed as a gang (all tasks or none, within its topology rule) and every
// service's minimum replicas one by one, in file order, each seeing the ones before it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/output.h"
#include "common/text.h"
#include "sched/constraints.h"
#include "sched/fragmentation.h"
#include "sched/gang.h"
#include "sched/policy_match.h"
#include "sched/scope.h"
#include "sched/scorer.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

struct PlaceArgs {
  std::vector<std::string> fleet;
  std::vector<std::string> jobs;
  std::string policy = std::string(kDefaultScorer);
  std::string output = "table";
};

std::string_view OutcomeName(PlaceOutcome o) {
  switch (o) {
    case PlaceOutcome::kPlaced:
      return "placed";
    case PlaceOutcome::kPending:
      return "pending";
    case PlaceOutcome::kInfeasible:
      return "infeasible";
  }
  return "?";
}

double Rounded(double v) {
  return std::round(v * 1e4) / 1e4;
}

// What `place` prints for one task.
json TaskRow(const Spec& spec, const CellState& cell, const std::string& job,
             const std::string& task, const GangResult& r, size_t t, const PreferenceStep* step) {
  json row = {{"job", job}, {"task", task}};
  if (r.outcome != PlaceOutcome::kPlaced) {
    json reasons = json::array();
    for (const auto& [reason, count] : r.why.dropped) {
      reasons.push_back({{"code", std::string(ReasonCode(reason))},
                         {"nodes", count},
                         {"text", std::string(ReasonText(reason))}});
    }
    row["pending"] = true;
    row["outcome"] = std::string(OutcomeName(r.outcome));
    row["reasons"] = reasons;
    row["summary"] = r.why.ToString() + (r.detail.empty() ? "" : "; " + r.detail);
    return row;
  }
  const Placement& p = r.placements[t];
  const Node& node = spec.node(cell.spec_node(p.node));
  const Cluster& cluster = spec.cluster(node.cluster);
  json devices = json::array();
  for (const DeviceUse& u : p.devices)
    devices.push_back({{"index", u.index}, {"milli", u.milli}});
  row["outcome"] = "placed";
  row["cluster"] = cluster.name;
  row["region"] = spec.region(cluster.region).name;
  row["tier"] = std::string(ClusterTierName(cluster.tier));
  row["node"] = node.name;
  row["devices"] = devices;
  if (!p.devices.empty()) {
    DeviceModelId model(cell.devices(p.node)[p.devices.front().index].model);
    row["model"] = spec.model(model).name;
  }
  if (step != nullptr) row["speed"] = Rounded(static_cast<double>(step->speed) / 1000.0);
  row["level"] = std::string(TopologyLevelName(r.level));
  json score = json::object();
  if (t < r.parts.size()) {
    for (const auto& [part, value] : r.parts[t])
      score[part] = Rounded(value);
  }
  row["score"] = score;
  return row;
}

// The names of rules and datasets that keep the job off some cluster, for a pending row.
std::string ExcludedBy(const JobConstraints& k) {
  std::vector<std::string> names;
  for (const std::string& by : k.excluded_by)
    if (!by.empty() && std::find(names.begin(), names.end(), by) == names.end())
      names.push_back(by);
  return JoinNames(names);
}

// The rule kinds of the configuration that `place` does not apply, for the one-line notice.
std::string UnappliedKinds(const Spec& spec) {
  std::vector<std::string> kinds;
  for (RuleKind k : {RuleKind::kWeights, RuleKind::kPreemption, RuleKind::kBurst,
                     RuleKind::kReservation, RuleKind::kIdleReclaim}) {
    int n = 0;
    for (const PolicyRule& r : spec.policies)
      n += r.kind() == k;
    if (n > 0) kinds.push_back(std::string(RuleKindName(k)) + " (" + std::to_string(n) + ")");
  }
  return JoinNames(kinds);
}

// One unit of the dry run: a job's gang, or one replica of a service.
struct Unit {
  const Job* job = nullptr;  // as the rules see it
  GangRequest gang;
  std::vector<std::string> tasks;
};

class DryRun {
 public:
  DryRun(const Spec& spec, CellState& cell, Scorer& scorer)
      : spec_(spec), cell_(cell), chain_(MakeScopedFilters(scopes_)), placer_(scorer, chain_) {
    placer_.set_explain(true);  // "why here": the score parts of every placement
  }

  // Places the unit under `k`: each step of the preference order in turn, then the whole
  // scope (which explains a failure, or finds a gang that mixes the steps' models).
  void Place(const Unit& u, const JobConstraints& k, json& rows) {
    ModelMask accepted = 0;
    bool cpu_only = true;
    for (const GangGroup& g : u.gang.groups) {
      accepted |= g.shape.models;
      cpu_only = cpu_only && g.shape.cpu_only();
    }
    for (const PreferenceStep& step : PreferenceOrder(spec_, *u.job, k, accepted, cpu_only)) {
      GangResult r = Try(u.gang, step.verdicts, cpu_only ? kAnyAccelerator : step.models);
      if (r.outcome == PlaceOutcome::kPlaced) return Emit(u, r, &step, k, rows);
    }
    Emit(u, Try(u.gang, k.verdicts, kAnyAccelerator), nullptr, k, rows);
  }

  int placed() const { return placed_; }
  int waiting() const { return waiting_; }

 private:
  GangResult Try(const GangRequest& base, const ScopeTable::Verdicts& verdicts, ModelMask models) {
    GangRequest gang = base;
    uint32_t scope = scopes_.Intern(verdicts);
    for (GangGroup& g : gang.groups) {
      if (!g.shape.cpu_only()) g.shape.models &= models;
      g.shape.scope = scope;
      shapes_.Intern(g.shape);
    }
    return PlaceGang(cell_, placer_, gang, &rng_);
  }

  void Emit(const Unit& u, const GangResult& r, const PreferenceStep* step, const JobConstraints& k,
            json& rows) {
    for (size_t t = 0; t < u.tasks.size(); ++t) {
      json row = TaskRow(spec_, cell_, u.job->name, u.tasks[t], r, t, step);
      if (r.outcome == PlaceOutcome::kPlaced) {
        ++placed_;
        // The gang searched the tightest level first, so a preference is met whenever it
        // could be; say whether it was.
        TopologyLevel prefer = u.job->gang.prefer;
        if (prefer != TopologyLevel::kAny) row["preferred_level_met"] = r.level <= prefer;
      } else {
        ++waiting_;
        std::string by = ExcludedBy(k);
        if (!by.empty()) row["excluded_by"] = by;
      }
      rows.push_back(std::move(row));
    }
  }

  const Spec& spec_;
  CellState& cell_;
  ScopeTable scopes_;
  FilterChain chain_;
  Placer placer_;
  ShapeTable shapes_;
  SeededRng rng_{1};
  int placed_ = 0;
  int waiting_ = 0;
};

void WriteTable(const json& rows, std::ostream& out) {
  Table table({"JOB", "TASK", "STATUS", "CLUSTER", "NODE", "DEVICES", "REASON"});
  for (const json& row : rows) {
    if (row.contains("pending")) {
      std::string reason = row["summary"].get<std::string>();
      if (row.contains("excluded_by"))
        reason += " (excluded by " + row["excluded_by"].get<std::string>() + ")";
      table.Add({row["job"], row["task"], row["outcome"], "-", "-", "-", reason});
      continue;
    }
    std::string devices;
    for (const json& d : row["devices"]) {
      devices += (devices.empty() ? "" : ",") + std::to_string(d["index"].get<int>());
      if (d["milli"].get<int>() < 1000) devices += fmt::format("({}m)", d["milli"].get<int>());
    }
    table.Add({row["job"], row["task"], "placed", row["cluster"], row["node"],
               devices.empty() ? "-" : devices, ""});
  }
  table.Write(out);
}

int RunPlace(const PlaceArgs& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> files = args.fleet;
  files.insert(files.end(), args.jobs.begin(), args.jobs.end());
  std::optional<Spec> loaded = LoadOrReport(files, err);
  if (!loaded) return kExitInvalidInput;
  const Spec& spec = *loaded;
  ScorerRegistry registry;
  RegisterBuiltinScorers(registry);
  TargetWorkload workload = DeclaredTarget(spec);
  ScorerContext ctx{&workload};
  auto scorer = registry.Create(args.policy, ctx);
  if (!scorer.ok()) {
    err << "tessera place: " << scorer.status().message() << "\n";
    return kExitInvalidInput;
  }
  auto cell = CellState::FromSpec(spec);
  if (!cell.ok()) {
    err << "tessera place: " << cell.status().message() << "\n";
    return kExitInvalidInput;
  }
  std::string unapplied = UnappliedKinds(spec);
  if (!unapplied.empty()) {
    err << "note: place applies the constrain rules, dataset residency and the fallback order; "
           "it does not apply these rules: "
        << unapplied << "\n";
  }
  DryRun run(spec, *cell, **scorer);
  json rows = json::array();
  ShapeTable shapes;
  for (const Job& j : spec.jobs) {
    Unit u;
    u.job = &j;
    u.gang.require = j.gang.require;
    for (const TaskGroup& g : j.task_groups) {
      u.gang.groups.push_back({MakeTaskShape(spec, g.request), g.count});
      for (int32_t i = 0; i < g.count; ++i)
        u.tasks.push_back(g.name + "-" + std::to_string(i));
    }
    run.Place(u, CompileConstraints(spec, j), rows);
  }
  for (const Service& s : spec.services) {
    Job as_job = ServiceAsJob(s);
    JobConstraints k = CompileConstraints(spec, as_job);
    TaskShape shape = MakeTaskShape(spec, s.replica);
    for (int32_t i = 0; i < s.min_replicas; ++i) {
      Unit u;
      u.job = &as_job;
      u.gang.groups.push_back({shape, 1});
      u.gang.require = TopologyLevel::kNode;
      u.tasks.push_back("replica-" + std::to_string(i));
      size_t before = rows.size();
      run.Place(u, k, rows);
      // crossRegion: false keeps the later replicas in the first one's region.
      if (!k.cross_region && rows[before].value("outcome", "") == "placed") {
        RegionId home = *spec.FindRegion(rows[before]["region"].get<std::string>());
        for (size_t c = 0; c < spec.clusters.size(); ++c) {
          if (!k.verdicts[c] && spec.clusters[c].region != home) {
            k.verdicts[c] = Reason::kRegionNotAllowed;
            k.excluded_by[c] = "crossRegion: false";
          }
        }
      }
    }
  }
  std::ostream& summary = args.output == "json" ? err : out;
  if (args.output == "json") {
    for (json& row : rows)
      out << row.dump() << "\n";
  } else {
    WriteTable(rows, out);
  }
  auto count = [](size_t n, const char* noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
  };
  summary << fmt::format("{} task(s) placed, {} pending or infeasible ({}, {})\n", run.placed(),
                         run.waiting(), count(spec.jobs.size(), "job"),
                         count(spec.services.size(), "service"));
  return run.waiting() > 0 ? kExitNotAllPlaced : kExitOk;
}

}  // namespace

void RegisterPlace(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto* cmd =
      app.add_subcommand("place", "Dry run: where each task of each job would go, or why not");
  auto args = std::make_shared<PlaceArgs>();
  cmd->add_option("--fleet", args->fleet, "Fleet configuration files or directories")->required();
  cmd->add_option("--jobs", args->jobs, "Files or directories with the jobs and services")
      ->required();
  cmd->add_option("--policy", args->policy, "Placement policy: " + PlacementPolicyNames())
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->callback([args, &out, &err, &code] { code = RunPlace(*args, out, err); });
}

std::string PlacementPolicyNames() {
  ScorerRegistry registry;
  RegisterBuiltinScorers(registry);
  std::vector<std::string> names = registry.Names();
  return JoinNames(names);
}

}  // namespace tessera::cli
