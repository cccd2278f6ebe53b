// The daemon's fleet endpoints: clusters and nodes as the engine sees them now, and the
// operator's holds on nodes (cordon, drain, uncordon), persisted in the store.
#include <fmt/format.h>

#include <set>

#include "server/daemon.h"

namespace tessera {

using json = nlohmann::ordered_json;

namespace {

std::string NodeStateName(bool up, bool cordoned, bool draining) {
  if (!up) return "down";
  if (draining) return "drained";
  return cordoned ? "cordoned" : "ready";
}

}  // namespace

json Daemon::Clusters() const {
  ViewLock lock(*this);
  const CellState& cell = engine_->cell();
  struct Totals {
    int64_t nodes = 0, ready = 0, cordoned = 0, down = 0;
    std::map<uint16_t, std::pair<int64_t, int64_t>> devices;  // model -> (count, used milli)
  };
  std::vector<Totals> totals(spec_->clusters.size());
  for (uint32_t n = 0; n < cell.node_count(); ++n) {
    Totals& t = totals[cell.node(n).cluster];
    ++t.nodes;
    bool up = engine_->node_up(n);
    t.down += !up;
    t.cordoned += up && engine_->cordoned(n);
    t.ready += up && !engine_->cordoned(n);
    for (const DeviceSlot& d : cell.devices(n)) {
      auto& [count, used] = t.devices[d.model];
      ++count;
      used += kMilliPerUnit - d.free;
    }
  }
  json out = json::array();
  for (size_t c = 0; c < spec_->clusters.size(); ++c) {
    const Cluster& cl = spec_->clusters[c];
    json devices = json::array();
    for (const auto& [model, v] : totals[c].devices) {
      devices.push_back({{"model", spec_->model(DeviceModelId(model)).name},
                         {"count", v.first},
                         {"allocated", static_cast<double>(v.second) / kMilliPerUnit}});
    }
    out.push_back({{"name", cl.name},
                   {"region", spec_->region(cl.region).name},
                   {"tier", std::string(ClusterTierName(cl.tier))},
                   {"backend", std::string(BackendKindName(cl.backend))},
                   {"nodes", totals[c].nodes},
                   {"ready", totals[c].ready},
                   {"cordoned", totals[c].cordoned},
                   {"down", totals[c].down},
                   {"devices", devices}});
  }
  return out;
}

json Daemon::SlurmNodeJson(uint32_t n) const {
  std::optional<SlurmNode> s = backends_->slurm()
                                   ? backends_->slurm()->NodeInfo(engine_->cell().node_name(n))
                                   : std::nullopt;
  if (!s) return nullptr;
  json out = {
      {"state", s->state}, {"cpus", s->cpus}, {"memory_mib", s->memory_mb}, {"gpus", s->gpus}};
  // Tessera places on what the fleet declares: a node Slurm sees otherwise is worth a look.
  const int declared = static_cast<int>(engine_->cell().devices(n).size());
  if (s->gpus >= 0 && s->gpus != declared) {
    out["mismatch"] = "the fleet declares " + std::to_string(declared) +
                      " devices on this node; Slurm's GRES has " + std::to_string(s->gpus);
  }
  return out;
}

json Daemon::NodeJson(const Caller& caller, uint32_t n) const {
  const CellState& cell = engine_->cell();
  const NodeState& s = cell.node(n);
  std::map<uint16_t, std::pair<int64_t, int64_t>> devices;
  for (const DeviceSlot& d : cell.devices(n)) {
    auto& [count, free] = devices[d.model];
    ++count;
    free += d.free;
  }
  json dev = json::array();
  for (const auto& [model, v] : devices) {
    dev.push_back({{"model", spec_->model(DeviceModelId(model)).name},
                   {"count", v.first},
                   {"free", static_cast<double>(v.second) / kMilliPerUnit}});
  }
  json jobs = json::array();
  std::set<uint32_t> seen;
  for (const TaskRef& t : cell.tasks_on(n)) {
    if (!seen.insert(t.job.value()).second || !book_.Knows(t.job) || book_.IdOf(t.job) == 0)
      continue;
    const StoredJob& j = book_.row(book_.IdOf(t.job));
    if (caller.MaySee(j.tenant)) jobs.push_back({{"id", j.id}, {"name", j.name}});
  }
  bool draining = flags_.count(cell.node_name(n)) && flags_.at(cell.node_name(n)).draining;
  json agent = json(backends_->agents().NodeStatus(cell.node_name(n)));
  // The agent's id is the fleet's operators' to see (it names the process that answers for the
  // node); members and viewers see the node's health without it.
  if (agent.is_object() && !caller.MayAdministerFleet()) agent.erase("agent");
  if (agent.is_object() && !agent["gpus"].empty() &&
      agent["gpus"].size() != cell.devices(n).size()) {
    // The scheduler places on the declared devices: a host that has others is worth a look.
    agent["mismatch"] = "the fleet declares " + std::to_string(cell.devices(n).size()) +
                        " devices on this node; the agent's host has " +
                        std::to_string(agent["gpus"].size());
  }
  // A node the configuration cordons is out of the cell (the engine sees it down): it is
  // cordoned, by the configuration, not down.
  const bool config_cordon = CordonedInConfig(n);
  json out = {
      {"name", cell.node_name(n)},
      {"cluster", spec_->clusters[s.cluster].name},
      {"state", config_cordon ? "cordoned"
                              : NodeStateName(engine_->node_up(n), engine_->cordoned(n), draining)},
      {"cpu", static_cast<double>(s.cpu_total) / kMilliPerUnit},
      {"cpu_free", static_cast<double>(s.cpu_free) / kMilliPerUnit},
      {"memory_mib", s.mem_total},
      {"memory_free_mib", s.mem_free},
      {"devices", dev},
      {"jobs", jobs},
      {"agent", agent},
      {"slurm", SlurmNodeJson(n)}};
  if (config_cordon) out["cordoned_by"] = "configuration";
  return out;
}

std::string Daemon::DownReason(uint32_t n) const {
  const std::string& name = engine_->cell().node_name(n);
  if (std::optional<SlurmNode> sn =
          backends_->slurm() ? backends_->slurm()->NodeInfo(name) : std::nullopt) {
    return " (Slurm says " + sn->state + ")";
  }
  const Cluster& c = spec_->clusters[engine_->cell().node(n).cluster];
  if (c.backend == BackendKind::kLocal) {
    json agent = json(backends_->agents().NodeStatus(name));
    if (!agent.is_object()) return " (no agent has synced it)";
    if (agent.value("live", false) == false) return " (its agent went silent)";
  }
  return "";
}

bool Daemon::CordonedInConfig(uint32_t n) const {
  return spec_->node(engine_->cell().spec_node(n)).cordoned;
}

json Daemon::ListNodes(const Caller& caller, const std::string& cluster, int64_t after, int limit,
                       int64_t* next) const {
  ViewLock lock(*this);
  const CellState& cell = engine_->cell();
  json out = json::array();
  *next = 0;
  for (uint32_t n = static_cast<uint32_t>(std::max<int64_t>(after, 0)); n < cell.node_count();
       ++n) {
    if (!cluster.empty() && spec_->clusters[cell.node(n).cluster].name != cluster) continue;
    if (static_cast<int>(out.size()) == limit) {
      *next = n;
      break;
    }
    out.push_back(NodeJson(caller, n));
  }
  return out;
}

Result<json> Daemon::GetNode(const Caller& caller, const std::string& name) const {
  ViewLock lock(*this);
  auto it = core_->node_index.find(name);
  if (it == core_->node_index.end()) return NotFound("no node \"" + name + "\"");
  return NodeJson(caller, it->second);
}

Result<json> Daemon::HoldNode(const Caller& caller, const std::string& name,
                              const std::string& action) {
  if (!caller.MayAdministerFleet()) {
    return PermissionDenied("only admins and operators " + action + " nodes");
  }
  std::shared_future<Status> durable;
  std::optional<NodeFlags> before;  // restored when the store fails
  {
    ViewLock lock(*this);
    auto it = core_->node_index.find(name);
    if (it == core_->node_index.end()) return NotFound("no node \"" + name + "\"");
    if (action == "uncordon" && CordonedInConfig(it->second)) {
      return FailedPrecondition("node \"" + name +
                                "\" is cordoned in the configuration: remove its `cordoned: "
                                "true` there and reload (tessera reload)");
    }
    const bool held = flags_.count(name) && (flags_.at(name).cordoned || flags_.at(name).draining);
    if (action == "uncordon" && !held && !engine_->node_up(it->second)) {
      // Nothing to lift, and the node takes no work anyway: say why instead of "down" and 0.
      return FailedPrecondition("node \"" + name + "\" is down" + DownReason(it->second) +
                                "; uncordon lifts an operator's cordon or drain, and there is "
                                "none on it");
    }
    if (auto was = flags_.find(name); was != flags_.end()) before = was->second;
    NodeFlags f{name, action != "uncordon", action == "drain"};
    flags_[name] = f;
    durable = store_->PutNodeFlags(f);
  }
  Status s = durable.get();
  ViewLock lock(*this);
  if (!s.ok()) {
    // Not durable, so not done: the node shows what it did before.
    if (before) {
      flags_[name] = *before;
    } else {
      flags_.erase(name);
    }
    return Unavailable("the store did not record the " + action + ": " + s.message());
  }
  // The engine's thread holds the node and schedules at once (by name: a reload meanwhile
  // numbers the nodes anew); the answer shows what that changed.
  const bool ran = host_.Post(lock, [this, name, action]() REQUIRES(mu_) {
    auto node = core_->node_index.find(name);
    if (node == core_->node_index.end()) return;  // it left the fleet in a reload meanwhile
    const uint32_t n = node->second;
    const TimeMs now = clock_.Now();
    if (action == "cordon") {
      engine_->Cordon(n, now);
    } else if (action == "drain") {
      engine_->Drain(n, now);
    } else {
      engine_->Uncordon(n, now);
    }
  });
  if (!ran) return Unavailable("the daemon is stopping");
  ApplyChanges();
  auto node = core_->node_index.find(name);
  if (node == core_->node_index.end()) return NotFound("node \"" + name + "\" left the fleet");
  return NodeJson(caller, node->second);
}

}  // namespace tessera
