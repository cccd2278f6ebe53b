// tessera place --fleet F --jobs J [--policy P] [-o table|json]: a dry run of the scheduler.
// The engine the daemon runs (engine/core.h), built from the configuration on an empty fleet,
// is given every job of the files at time 0 in file order, and its services' replicas as the
// service driver asks for them, and runs its cycle once: every rule applies as it would live
// (constraints, residency, fallback, weights, quotas, budgets, burst waits, reservations). Each
// task's row says where the engine started it (with the placer's score parts), or why the job
// waits.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "cli/output.h"
#include "common/text.h"
#include "engine/core.h"
#include "engine/drive.h"
#include "engine/run_speed.h"
#include "sched/constraints.h"
#include "sched/policy/builtin.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

struct PlaceArgs {
  std::vector<std::string> fleet;
  std::vector<std::string> jobs;
  std::string policy;  // the scorer; "" = the configuration's (scheduler.placement)
  std::string output = "table";
};

double Rounded(double v) {
  return std::round(v * 1e4) / 1e4;
}

// What `place` prints for task `t` of a job the engine started; `start` is the decision that
// started it (why it went ahead of others, and on several clusters why this cluster).
json PlacedRow(const Spec& spec, const Engine& engine, const JobRecord& rec, size_t t,
               const Decision* start) {
  const CellState& cell = engine.cell();
  const Placement& p = rec.placements[t];
  const Node& node = spec.node(cell.spec_node(p.node));
  const Cluster& cluster = spec.cluster(node.cluster);
  json devices = json::array();
  for (const DeviceUse& u : p.devices)
    devices.push_back({{"index", u.index}, {"milli", u.milli}});
  json row = {{"outcome", "placed"},
              {"cluster", cluster.name},
              {"region", spec.region(cluster.region).name},
              {"tier", std::string(ClusterTierName(cluster.tier))},
              {"node", node.name},
              {"devices", devices}};
  if (!p.devices.empty()) {
    DeviceModelId model(cell.devices(p.node)[p.devices.front().index].model);
    row["model"] = spec.model(model).name;
    row["speed"] = Rounded(static_cast<double>(RunSpeed(spec, cell, rec)) / 1000.0);
  }
  row["level"] = std::string(TopologyLevelName(rec.level));
  // The gang searched the tightest level first, so a preference is met whenever it could be;
  // say whether it was.
  if (rec.job.gang.prefer != TopologyLevel::kAny)
    row["preferred_level_met"] = rec.level <= rec.job.gang.prefer;
  json score = json::object();
  const PlacementExplained* said = engine.explained(rec.id);
  if (said != nullptr && t < said->parts.size()) {
    for (const auto& [part, value] : said->parts[t])
      score[part] = Rounded(value);
  }
  row["score"] = score;
  if (start != nullptr) {
    row["decision"] = start->reason;
    if (!start->where.empty()) row["where"] = start->where;
  }
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

// What `place` prints for a task of a job that waits: the engine's reason and detail, and the
// placer's counts of nodes by reason when the placer was asked.
json WaitingRow(const Spec& spec, const Engine& engine, const JobRecord& rec) {
  json reasons = json::array();
  if (const PlacementExplained* said = engine.explained(rec.id)) {
    for (const auto& [reason, count] : said->why.dropped) {
      reasons.push_back({{"code", std::string(ReasonCode(reason))},
                         {"nodes", count},
                         {"text", std::string(ReasonText(reason))}});
    }
  }
  json row = {{"pending", true},
              {"outcome", rec.reason == PendingReason::kInfeasible ? "infeasible" : "pending"},
              {"reason", std::string(PendingReasonCode(rec.reason))},
              {"reasons", reasons},
              {"summary", rec.detail}};
  std::string by = ExcludedBy(CompileConstraints(spec, rec.job));
  if (!by.empty()) row["excluded_by"] = by;
  return row;
}

// A backend that launches nothing: the dry run's engine starts runs on paper only.
class PaperBackend final : public Backend {
 public:
  void Launch(const JobRecord&, TimeMs) override {}
  void Stop(const JobRecord&, TimeMs) override {}
  void Resize(const JobRecord&, TimeMs) override {}
};

// The service driver's replicas go straight to the engine.
class EngineReplicas final : public ReplicaHost {
 public:
  explicit EngineReplicas(Engine& engine) : engine_(engine) {}
  std::optional<JobId> SubmitReplica(Job job, TimeMs now) override {
    return engine_.Submit(std::move(job), now);
  }
  void CancelReplica(JobId id, TimeMs now) override { engine_.Cancel(id, now); }

 private:
  Engine& engine_;
};

// The rows of one job or replica: one per task, named as given.
struct Rows {
  json rows = json::array();
  int placed = 0, waiting = 0;
  std::map<uint32_t, const Decision*> starts;  // by job: the decision that started its run
};

void AddRows(const Spec& spec, const Engine& engine, const JobRecord& rec, const std::string& job,
             const std::vector<std::string>& tasks, Rows& out) {
  auto start = out.starts.find(rec.id.value());
  for (size_t t = 0; t < tasks.size(); ++t) {
    const bool started = rec.running() && t < rec.placements.size();
    json row = {{"job", job}, {"task", tasks[t]}};
    row.update(started ? PlacedRow(spec, engine, rec, t,
                                   start == out.starts.end() ? nullptr : start->second)
                       : WaitingRow(spec, engine, rec));
    ++(started ? out.placed : out.waiting);
    out.rows.push_back(std::move(row));
  }
}

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
  auto shared = std::make_shared<const Spec>(std::move(*loaded));
  const Spec& spec = *shared;
  ScorerRegistry scorers;
  RegisterBuiltinScorers(scorers);
  OrderingRegistry orderings;
  RegisterBuiltinOrderings(orderings);
  // The daemon's: the configuration's scheduler, with the scorer asked for in its place.
  auto choice = ChoiceFor(spec.scheduler.OverriddenBy({"", args.policy}));
  if (!choice.ok()) {
    err << "tessera place: " << choice.status().message() << "\n";
    return kExitInvalidInput;
  }
  choice->options.explain = true;
  ManualClock clock(0);
  SeededRng rng(1);
  MemoryStore store;
  PaperBackend backend;
  EngineCore core;
  if (Status made = MakeEngineCore(core, shared, *choice, scorers, orderings, store, backend, clock,
                                   rng, clock.Now());
      !made.ok()) {
    err << "tessera place: " << made.message() << "\n";
    return kExitInvalidInput;
  }
  Engine& engine = *core.engine;
  std::vector<JobId> ids;
  for (const Job& j : spec.jobs)
    ids.push_back(engine.Submit(j, 0));
  for (const Service& s : spec.services)
    (void)core.services->Add(s, 0);  // the configuration's names are unique
  EngineReplicas replicas(engine);
  ServiceDriver& driver = *core.services;
  ServiceSteps services(driver, engine, replicas);
  DriveSource* const sources[] = {&services};
  ManualPace pace(clock, 0);
  Drive(engine, clock, pace, sources);

  Rows out_rows;
  for (const Decision& d : store.decisions())
    if (d.kind == DecisionKind::kStart) out_rows.starts[d.job.value()] = &d;
  for (size_t i = 0; i < spec.jobs.size(); ++i) {
    std::vector<std::string> tasks;
    for (const TaskGroup& g : spec.jobs[i].task_groups)
      for (int32_t k = 0; k < g.count; ++k)
        tasks.push_back(g.name + "-" + std::to_string(k));
    AddRows(spec, engine, engine.job(ids[i]), spec.jobs[i].name, tasks, out_rows);
  }
  for (const ServiceStatus& s : driver.Statuses(engine)) {
    for (size_t k = 0; k < s.replicas.size(); ++k)
      AddRows(spec, engine, engine.job(s.replicas[k]), s.name, {"replica-" + std::to_string(k)},
              out_rows);
  }
  std::ostream& summary = args.output == "json" ? err : out;
  if (args.output == "json") {
    for (json& row : out_rows.rows)
      out << row.dump() << "\n";
  } else {
    WriteTable(out_rows.rows, out);
  }
  auto count = [](size_t n, const char* noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
  };
  summary << fmt::format("{} task(s) placed, {} pending or infeasible ({}, {})\n", out_rows.placed,
                         out_rows.waiting, count(spec.jobs.size(), "job"),
                         count(spec.services.size(), "service"));
  return out_rows.waiting > 0 ? kExitNotAllPlaced : kExitOk;
}

}  // namespace

void RegisterPlace(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto* cmd =
      app.add_subcommand("place", "Dry run: where each task of each job would go, or why not");
  auto args = std::make_shared<PlaceArgs>();
  cmd->add_option("--fleet", args->fleet, "Fleet configuration files or directories")->required();
  cmd->add_option("--jobs", args->jobs, "Files or directories with the jobs and services")
      ->required();
  cmd->add_option("--policy", args->policy,
                  "Placement scorer in place of the configuration's (scheduler.placement, "
                  "default tessera): " +
                      PlacementPolicyNames());
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
