#include "sched/compile_job.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "sched/policy_match.h"

namespace tessera {

std::shared_ptr<const JobConstraints> ConstraintsTable::Intern(JobConstraints constraints) {
  return *table_.insert(std::make_shared<const JobConstraints>(std::move(constraints))).first;
}

namespace {

// Each acceptable model present in the cell, by the gang's speed there: a gang runs at the
// pace of its slowest task; a task that names no models runs at its fallback rule's speed of
// the model, else the catalog's for the job's class (GroupSpeedOn).
void RankModels(const Job& job, const CompileTables& t, CompiledJob& c) {
  const size_t models = t.model_present.size();
  const FallbackRule* fallback = FirstFallback(t.spec, job);
  std::vector<std::pair<Milli, uint16_t>> speeds;
  c.speed_of.assign(models, 0);
  for (size_t m = 0; m < models && m < kMaxDeviceModels; ++m) {
    if (!((c.mask >> m) & 1) || !t.model_present[m]) continue;
    DeviceModelId model_id(static_cast<uint32_t>(m));
    Milli speed = std::numeric_limits<Milli>::max();
    for (const TaskGroup& g : job.task_groups) {
      if (g.request.devices.count == 0) continue;
      speed = std::min(speed, GroupSpeedOn(t.spec, job, g, model_id, fallback));
    }
    c.speed_of[m] = speed;
    speeds.push_back({speed, static_cast<uint16_t>(m)});
  }
  std::stable_sort(speeds.begin(), speeds.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [speed, m] : speeds)
    c.by_speed.push_back(m);
}

// A job larger than its tenant's limit on every model it accepts can never be admitted.
void CheckLimits(const JobStanding& standing, const CompileTables& t, CompiledJob& c) {
  std::string over;
  for (size_t m = 0; m < t.model_present.size() && c.mask != 0; ++m) {
    if (!((c.mask >> m) & 1)) continue;
    Milli limit = standing.limit(m);
    if (limit < 0 || limit >= c.start_milli) return;
    over += (over.empty() ? "" : ", ") + FormatMilli(limit) + " " + t.spec.device_models[m].name;
  }
  if (!over.empty()) {
    c.over_limit = "the job's " + FormatMilli(c.start_milli) +
                   " devices exceed its tenant's limit (" + over + ")";
  }
}

// On several clusters: the global layer's request, the (cluster, model) pairs the job's
// demand presses on, and its burst rule.
void CompileGlobal(const Job& job, std::shared_ptr<const JobConstraints> constraints,
                   const WeightsRule* weights, const CompileTables& t, CompiledJob& c) {
  c.global = MakeGlobalRequest(t.spec, *t.paths, job, std::move(constraints), c.mask, c.mask == 0,
                               weights);
  const JobConstraints& k = *c.global->constraints;
  for (uint32_t cl = 0; cl < t.spec.clusters.size() && c.mask != 0; ++cl) {
    if (!k.allows(ClusterId(cl)) || std::find(k.tier_order.begin(), k.tier_order.end(),
                                              t.spec.clusters[cl].tier) == k.tier_order.end())
      continue;
    for (ModelMask m = c.mask & t.summaries->models(cl); m != 0; m &= m - 1)
      c.pressure_on.push_back({cl, static_cast<uint16_t>(std::countr_zero(m))});
  }
  if (!c.pressure_on.empty()) {
    c.pressure_share = c.device_milli / static_cast<Milli>(c.pressure_on.size());
    c.global->pressure_share = c.pressure_share;
  }
  std::vector<const PolicyRule*> burst = MatchingRules(t.spec, RuleKind::kBurst, job);
  if (!burst.empty()) c.burst = burst.front();
}

// The job as its first `tasks` tasks (an elastic gang's start).
Job FirstTasks(const Job& job, int32_t tasks) {
  Job first = job;
  first.task_groups.clear();
  for (const TaskGroup& g : job.task_groups) {
    if (tasks == 0) break;
    TaskGroup& kept = first.task_groups.emplace_back(g);
    kept.count = std::min(g.count, tasks);
    tasks -= kept.count;
  }
  return first;
}

}  // namespace

CompiledJob CompileJob(const Job& job, JobId id, const JobStanding& standing,
                       CompileTables& tables) {
  CompiledJob c;
  c.gang.job = id;
  c.gang.require =
      job.gang.require == TopologyLevel::kAny ? TopologyLevel::kCluster : job.gang.require;
  std::shared_ptr<const JobConstraints> constraints =
      tables.constraints.Intern(CompileConstraints(tables.spec, job));
  const uint32_t scope = tables.scopes.Intern(constraints->verdicts);
  // An elastic gang (0 < minMembers < tasks) starts with its first minMembers tasks.
  const int32_t all = job.TaskCount();
  const int32_t start =
      job.gang.min_members > 0 && job.gang.min_members < all ? job.gang.min_members : all;
  for (const TaskGroup& g : job.task_groups) {
    TaskShape s = MakeTaskShape(tables.spec, g.request);
    s.scope = scope;
    tables.shapes.Intern(s);
    const int32_t first = std::clamp(start - c.task_count, 0, g.count);
    if (first > 0) c.gang.groups.push_back({s, first});
    if (first < g.count) c.growth.push_back({s, g.count - first});
    c.task_count += g.count;
    c.device_milli += static_cast<Milli>(g.count) * s.total_milli();
    c.start_milli += static_cast<Milli>(first) * s.total_milli();
    if (!s.cpu_only()) c.mask |= s.models;
    c.signature.push_back(s.id);
    c.signature.push_back(static_cast<uint32_t>(g.count));
  }
  c.start_tasks = start;
  if (c.elastic()) {
    c.whole_gang.job = id;
    c.whole_gang.require = c.gang.require;
    for (const GangGroup& g : c.gang.groups)
      c.whole_gang.groups.push_back(g);
    for (const GangGroup& g : c.growth) {
      // A group split between the start and the growth is one group again.
      if (!c.whole_gang.groups.empty() && c.whole_gang.groups.back().shape.id == g.shape.id)
        c.whole_gang.groups.back().count += g.count;
      else
        c.whole_gang.groups.push_back(g);
    }
  }
  c.signature.push_back(static_cast<uint32_t>(start));
  RankModels(job, tables, c);
  CheckLimits(standing, tables, c);
  // The job's weights rule, the first that matches: the global layer's weights, the replica
  // spread and the scorer.
  std::vector<const PolicyRule*> weights = MatchingRules(tables.spec, RuleKind::kWeights, job);
  const WeightsRule* w = weights.empty() ? nullptr : &std::get<WeightsRule>(weights.front()->body);
  // The global layer looks for a cluster that holds the whole job, else its start.
  if (tables.summaries != nullptr) {
    if (c.elastic()) {
      c.whole_global =
          MakeGlobalRequest(tables.spec, *tables.paths, job, constraints, c.mask, c.mask == 0, w);
    }
    CompileGlobal(c.elastic() ? FirstTasks(job, start) : job, std::move(constraints), w, tables, c);
    if (c.whole_global) c.whole_global->pressure_share = c.pressure_share;
  }
  c.holds = standing.holds;
  if (standing.service_group && (w == nullptr || w->spread > 0))
    c.spread_group = standing.service_group;
  if (w != nullptr && !w->placement.empty()) {
    c.placement = w->placement;
    // Another scorer: other placement chances than the same job's under the scheduler's.
    c.signature.push_back(static_cast<uint32_t>(weights.front() - tables.spec.policies.data()));
    c.signature.push_back(0xffffffffu);
  }
  std::vector<const PolicyRule*> idle = MatchingRules(tables.spec, RuleKind::kIdleReclaim, job);
  if (!idle.empty()) c.idle = idle.front();
  c.signature.push_back(static_cast<uint32_t>(c.gang.require));
  c.signature.push_back(static_cast<uint32_t>(c.holds));
  c.signature.push_back(static_cast<uint32_t>(c.holds >> 32));
  c.signature.push_back(static_cast<uint32_t>(standing.priority));
  c.signature.push_back(job.tenant.value());
  return c;
}

}  // namespace tessera
