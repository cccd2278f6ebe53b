// tessera place --fleet F --jobs J [--policy P] [-o table|json]: a dry run of placement.
// Every job is placed as a gang (all tasks or none, within its topology rule) and every
// service's minimum replicas one by one, in file order, each seeing the ones before it.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/output.h"
#include "sched/fragmentation.h"
#include "sched/gang.h"
#include "sched/scorer.h"

namespace tessera::cli {
namespace {

using json = nlohmann::ordered_json;

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

// The declared workload as FGD's target: each distinct task shape weighted by its task count.
TargetWorkload DeclaredWorkload(const Spec& spec) {
  std::vector<std::pair<const TaskRequest*, int64_t>> reqs;
  for (const Job& j : spec.jobs) {
    for (const TaskGroup& g : j.task_groups)
      reqs.push_back({&g.request, g.count});
  }
  for (const Service& s : spec.services)
    reqs.push_back({&s.replica, std::max(1, s.min_replicas)});
  return TargetFromRequests(spec, reqs);
}

int RunPlace(const PlaceArgs& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> files = args.fleet;
  files.insert(files.end(), args.jobs.begin(), args.jobs.end());
  std::optional<Spec> loaded = LoadOrReport(files, err);
  if (!loaded) return kExitInvalidInput;
  const Spec& spec = *loaded;
  ScorerRegistry registry;
  RegisterBuiltinScorers(registry);
  TargetWorkload workload = DeclaredWorkload(spec);
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
  Placer placer(**scorer);
  placer.set_explain(true);  // "why here": the score parts of every placement
  ShapeTable shapes;
  SeededRng rng(1);
  json rows = json::array();
  auto emit = [&](const std::string& job, const std::vector<std::string>& tasks,
                  const GangResult& r) {
    for (size_t t = 0; t < tasks.size(); ++t) {
      json row = {{"job", job}, {"task", tasks[t]}};
      if (r.outcome == PlaceOutcome::kPlaced) {
        const Placement& p = r.placements[t];
        const Node& node = spec.node(cell->spec_node(p.node));
        json devices = json::array();
        for (const DeviceUse& u : p.devices) {
          devices.push_back({{"index", u.index}, {"milli", u.milli}});
        }
        row["cluster"] = spec.cluster(node.cluster).name;
        row["node"] = node.name;
        row["devices"] = devices;
        row["level"] = std::string(TopologyLevelName(r.level));
        json score = json::object();
        if (t < r.parts.size()) {
          for (const auto& [part, value] : r.parts[t])
            score[part] = value;
        }
        row["score"] = score;
      } else {
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
      }
      rows.push_back(row);
    }
  };
  for (const Job& j : spec.jobs) {
    GangRequest gang;
    gang.require = j.gang.require;
    gang.prefer = j.gang.prefer;
    std::vector<std::string> names;
    for (const TaskGroup& g : j.task_groups) {
      TaskShape s = MakeTaskShape(spec, g.request);
      shapes.Intern(s);
      gang.groups.push_back({s, g.count});
      for (int32_t i = 0; i < g.count; ++i)
        names.push_back(g.name + "-" + std::to_string(i));
    }
    emit(j.name, names, PlaceGang(*cell, placer, gang, &rng));
  }
  for (const Service& s : spec.services) {
    TaskShape shape = MakeTaskShape(spec, s.replica);
    shapes.Intern(shape);
    for (int32_t i = 0; i < s.min_replicas; ++i) {
      GangRequest one{{{shape, 1}}, TopologyLevel::kNode, TopologyLevel::kAny, JobId()};
      emit(s.name, {"replica-" + std::to_string(i)}, PlaceGang(*cell, placer, one, &rng));
    }
  }
  if (args.output == "json") {
    out << rows.dump(2) << "\n";
    return kExitOk;
  }
  Table table({"JOB", "TASK", "CLUSTER", "NODE", "DEVICES"});
  for (const json& row : rows) {
    if (row.contains("pending")) {
      table.Add({row["job"], row["task"], "-", row["outcome"].get<std::string>(),
                 row["summary"].get<std::string>()});
      continue;
    }
    std::string devices;
    for (const json& d : row["devices"]) {
      devices += (devices.empty() ? "" : ",") + std::to_string(d["index"].get<int>());
      if (d["milli"].get<int>() < 1000) devices += fmt::format("({}m)", d["milli"].get<int>());
    }
    table.Add(
        {row["job"], row["task"], row["cluster"], row["node"], devices.empty() ? "-" : devices});
  }
  table.Write(out);
  return kExitOk;
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
  std::string names;
  for (const std::string& n : registry.Names())
    names += (names.empty() ? "" : ", ") + n;
  return names;
}

}  // namespace tessera::cli
