#include "server/api_views.h"

#include <cmath>

#include "config/yaml_json.h"
#include "server/placement_view.h"

namespace tessera {

using json = nlohmann::ordered_json;

namespace {

double Units(Milli m) {
  return static_cast<double>(m) / kMilliPerUnit;
}

double Round(double v, double scale) {
  return std::round(v * scale) / scale;
}

// The agent's fields in name order (the order the fleet view has always shown).
json AgentJson(const AgentNodeStatus& a, bool show_id, const std::string& mismatch) {
  json gpus = json::array();
  for (const GpuSample& g : a.gpus) {
    gpus.push_back({{"index", g.index},
                    {"memory_total_mib", g.memory_total},
                    {"memory_used_mib", g.memory_used},
                    {"name", g.name},
                    {"utilization", g.utilization},
                    {"uuid", g.uuid}});
  }
  json out = {{"address", a.address}};
  if (show_id) out["agent"] = a.agent;
  out["cpu"] = a.cpu;
  out["cpu_used"] = a.cpu_used;
  out["gpus"] = gpus;
  out["last_seen_ms"] = a.last_seen;
  out["live"] = a.live;
  out["memory_mib"] = a.memory;
  out["memory_used_mib"] = a.memory_used;
  out["tasks"] = a.tasks;
  if (!mismatch.empty()) out["mismatch"] = mismatch;
  return out;
}

json SlurmJson(const SlurmNode& s, const std::string& mismatch) {
  json out = {{"state", s.state}, {"cpus", s.cpus}, {"memory_mib", s.memory_mb}, {"gpus", s.gpus}};
  if (!mismatch.empty()) out["mismatch"] = mismatch;
  return out;
}

// A decision's detail, stored as JSON text; nothing when empty or unreadable.
void AddDetail(json& line, const std::string& detail) {
  auto parsed = json::parse(detail, nullptr, false);
  if (!parsed.is_discarded() && !parsed.empty()) line["detail"] = parsed;
}

json StringArray(const std::vector<std::string>& items) {
  json out = json::array();
  for (const std::string& s : items)
    out.push_back(s);
  return out;
}

}  // namespace

json ToJson(const StoredJob& j, bool with_spec) {
  json out = {
      {"id", j.id},         {"name", j.name},     {"tenant", j.tenant},         {"state", j.state},
      {"reason", j.reason}, {"detail", j.detail}, {"submitted_ms", j.submitted}};
  out["class"] = j.job_class;
  if (with_spec) {
    auto body = json::parse(j.body, nullptr, false);
    if (!body.is_discarded()) out["spec"] = body;
  }
  out["first_start_ms"] = j.first_start ? json(*j.first_start) : json(nullptr);
  out["finished_ms"] = j.finished ? json(*j.finished) : json(nullptr);
  out["restarts"] = j.restarts;
  out["placement"] = PlacementView(j.placement);
  out["submitted_by"] = j.principal;
  return out;
}

json ToJson(const ClusterSummary& c) {
  json devices = json::array();
  for (const ClusterSummary::Devices& d : c.devices) {
    devices.push_back({{"model", d.model}, {"count", d.count}, {"allocated", Units(d.allocated)}});
  }
  return {{"name", c.name},         {"region", c.region}, {"tier", c.tier},
          {"backend", c.backend},   {"nodes", c.nodes},   {"ready", c.ready},
          {"cordoned", c.cordoned}, {"down", c.down},     {"devices", devices}};
}

json ToJson(const NodeView& n) {
  json devices = json::array();
  for (const NodeView::Devices& d : n.devices)
    devices.push_back({{"model", d.model}, {"count", d.count}, {"free", Units(d.free)}});
  json jobs = json::array();
  for (const JobRef& j : n.jobs)
    jobs.push_back({{"id", j.id}, {"name", j.name}});
  json out = {
      {"name", n.name},
      {"cluster", n.cluster},
      {"state", n.state},
      {"cpu", Units(n.cpu)},
      {"cpu_free", Units(n.cpu_free)},
      {"memory_mib", n.memory_mib},
      {"memory_free_mib", n.memory_free_mib},
      {"devices", devices},
      {"jobs", jobs},
      {"agent", n.agent ? AgentJson(*n.agent, n.show_agent_id, n.agent_mismatch) : json(nullptr)},
      {"slurm", n.slurm ? SlurmJson(*n.slurm, n.slurm_mismatch) : json(nullptr)}};
  if (n.cordoned_by_config) out["cordoned_by"] = "configuration";
  return out;
}

json ToJson(const TenantView& t) {
  json quotas = json::array();
  for (const TenantView::Quota& q : t.quotas) {
    quotas.push_back({{"model", q.model},
                      {"used", Units(q.used)},
                      {"guaranteed", Units(q.guaranteed)},
                      {"limit", q.limit ? json(Units(*q.limit)) : json(nullptr)},
                      {"borrowing", q.borrowing}});
  }
  json out = {{"tenant", t.path}, {"quotas", quotas}};
  if (t.budget_per_day) out["budget_per_day"] = Units(*t.budget_per_day);
  return out;
}

json ToJson(const ServiceView& s) {
  const char* state = s.deleted ? "deleted" : s.error.empty() ? "active" : "invalid";
  json out = {{"name", s.name},
              {"tenant", s.tenant},
              {"submitted_by", s.principal},
              {"created_ms", s.created},
              {"state", state}};
  if (!s.error.empty()) out["error"] = s.error;
  out["replicas"] = {{"min", s.min_replicas},
                     {"max", s.max_replicas},
                     {"wanted", s.wanted},
                     {"running", s.running},
                     {"pending", s.pending}};
  out["replica_jobs"] = s.replica_jobs;
  out["load"] = {{"rps", Round(s.rps, 1000)}, {"source", s.reported ? "reported" : "curve"}};
  out["slo"] = {
      {"latency_ms", s.latency_slo},
      {"requests", std::round(s.requests)},
      {"served_within_slo", std::round(s.served)},
      {"attainment", s.requests > 0 ? json(Round(s.served / s.requests, 1e4)) : json(nullptr)}};
  json spec = json::parse(s.body, nullptr, false);
  if (!spec.is_discarded()) out["spec"] = spec;
  return out;
}

json ToJson(const JobExplanation& e) {
  const StoredJob& row = e.job;
  json out = {{"id", row.id}, {"name", row.name}, {"tenant", row.tenant}, {"state", row.state}};
  out["scheduler"] = {{"policy", e.policy}, {"placement", e.placement}};
  if (row.state == "pending" || row.state == "admitted") {
    out["why_pending"] = {{"code", row.reason}, {"detail", row.detail}};
  } else if (row.state == "running" || row.state == "placed") {
    out["why_here"] = row.detail;
    out["placement"] = PlacementView(row.placement);
  }
  if (e.deadline) {
    const DeadlineOutlook& d = *e.deadline;
    auto time = [](TimeMs t) { return t == kNever ? json(nullptr) : json(t); };
    out["deadline"] = {{"at_ms", d.deadline},
                       {"state", DeadlineStateName(d.state)},
                       {"start_ms", time(d.start)},
                       {"end_ms", time(d.end)}};
  }
  json decisions = json::array();
  for (const StoredDecision& d : e.decisions)
    decisions.push_back(ToJson(d, nullptr));
  out["decisions"] = decisions;
  return out;
}

json ToJson(const StoredDecision& d, const JobRef* job) {
  json line;
  if (job) line["seq"] = d.seq;
  line["time_ms"] = d.time;
  line["kind"] = d.kind;
  if (job) line["job"] = {{"id", job->id}, {"name", job->name}, {"tenant", job->tenant}};
  line["reason"] = d.reason;
  AddDetail(line, d.detail);
  return line;
}

json ToJson(const DecisionPage& page) {
  json items = json::array();
  for (const DecisionPage::Item& i : page.items)
    items.push_back(ToJson(i.decision, &i.job));
  json out = {{"items", items}};
  if (page.next) out["next"] = *page.next;
  return out;
}

json ToJson(const SpendingReport& r) {
  json items = json::array();
  for (const auto& [key, amount] : r.items)
    items.push_back({{r.by, key}, {"amount", Round(MicroUnits(amount), 1e4)}});
  return {{"by", r.by},
          {"since_ms", r.since},
          {"until_ms", r.until},
          {"currency", r.currency},
          {"total", Round(MicroUnits(r.total), 1e4)},
          {"items", items}};
}

json ToJson(const ReloadReport& r) {
  json out = {{"ok", r.ok}, {"applied", r.applied}};
  if (!r.ok) {
    out["errors"] = DiagnosticsJson(r.errors);
    return out;
  }
  json changes = json::object();
  for (const ReloadReport::Change& c : r.changes)
    changes[c.section] = {{"added", StringArray(c.added)}, {"removed", StringArray(c.removed)}};
  out["changes"] = changes;
  if (r.jobs) {
    out["jobs"] = {{"resumed", r.jobs->resumed},
                   {"requeued", r.jobs->requeued},
                   {"queued", r.jobs->queued},
                   {"failed", r.jobs->failed}};
  }
  return out;
}

json ToJson(const TaskLogView& l) {
  return {{"job", l.job}, {"run", l.run}, {"task", l.task}, {"log", l.log}};
}

}  // namespace tessera
