// The daemon's fleet endpoints: clusters and nodes as the engine sees them now, and the
// operator's holds on nodes (cordon, drain, uncordon), persisted in the store.
#include <fmt/format.h>

#include <set>

#include "server/daemon.h"

namespace tessera {

namespace {

std::string NodeStateName(bool up, bool cordoned, bool draining) {
  if (!up) return "down";
  if (draining) return "drained";
  return cordoned ? "cordoned" : "ready";
}

}  // namespace

std::vector<ClusterSummary> Daemon::Clusters() const {
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
  std::vector<ClusterSummary> out;
  for (size_t c = 0; c < spec_->clusters.size(); ++c) {
    const Cluster& cl = spec_->clusters[c];
    const Totals& t = totals[c];
    ClusterSummary v{cl.name,
                     spec_->region(cl.region).name,
                     std::string(ClusterTierName(cl.tier)),
                     std::string(BackendKindName(cl.backend)),
                     t.nodes,
                     t.ready,
                     t.cordoned,
                     t.down,
                     {}};
    for (const auto& [model, d] : t.devices)
      v.devices.push_back({spec_->model(DeviceModelId(model)).name, d.first, d.second});
    out.push_back(std::move(v));
  }
  return out;
}

NodeView Daemon::NodeViewOf(const Caller& caller, uint32_t n) const {
  const CellState& cell = engine_->cell();
  const NodeState& s = cell.node(n);
  const std::string& name = cell.node_name(n);
  NodeView v;
  v.name = name;
  v.cluster = spec_->clusters[s.cluster].name;
  // A node the configuration cordons is out of the cell (the engine sees it down): it is
  // cordoned, by the configuration, not down.
  v.cordoned_by_config = CordonedInConfig(n);
  const bool draining = flags_.count(name) && flags_.at(name).draining;
  v.state = v.cordoned_by_config
                ? "cordoned"
                : NodeStateName(engine_->node_up(n), engine_->cordoned(n), draining);
  v.cpu = s.cpu_total;
  v.cpu_free = s.cpu_free;
  v.memory_mib = s.mem_total;
  v.memory_free_mib = s.mem_free;
  std::map<uint16_t, std::pair<int64_t, int64_t>> devices;  // model -> (count, free milli)
  for (const DeviceSlot& d : cell.devices(n)) {
    auto& [count, free] = devices[d.model];
    ++count;
    free += d.free;
  }
  for (const auto& [model, d] : devices)
    v.devices.push_back({spec_->model(DeviceModelId(model)).name, d.first, d.second});
  std::set<uint32_t> seen;
  for (const TaskRef& t : cell.tasks_on(n)) {
    if (!seen.insert(t.job.value()).second || !book_.Knows(t.job) || book_.IdOf(t.job) == 0)
      continue;
    const StoredJob& j = book_.row(book_.IdOf(t.job));
    if (caller.MaySee(j.tenant)) v.jobs.push_back({j.id, j.name, j.tenant});
  }
  const size_t declared = cell.devices(n).size();
  v.agent = backends_->agents().NodeStatus(name);
  v.show_agent_id = caller.MayAdministerFleet();
  if (v.agent && !v.agent->gpus.empty() && v.agent->gpus.size() != declared) {
    // The scheduler places on the declared devices: a host that has others is worth a look.
    v.agent_mismatch = "the fleet declares " + std::to_string(declared) +
                       " devices on this node; the agent's host has " +
                       std::to_string(v.agent->gpus.size());
  }
  if (backends_->slurm()) v.slurm = backends_->slurm()->NodeInfo(name);
  // Tessera places on what the fleet declares: a node Slurm sees otherwise is worth a look.
  if (v.slurm && v.slurm->gpus >= 0 && static_cast<size_t>(v.slurm->gpus) != declared) {
    v.slurm_mismatch = "the fleet declares " + std::to_string(declared) +
                       " devices on this node; Slurm's GRES has " + std::to_string(v.slurm->gpus);
  }
  return v;
}

std::string Daemon::DownReason(uint32_t n) const {
  const std::string& name = engine_->cell().node_name(n);
  if (std::optional<SlurmNode> sn =
          backends_->slurm() ? backends_->slurm()->NodeInfo(name) : std::nullopt) {
    return " (Slurm says " + sn->state + ")";
  }
  const Cluster& c = spec_->clusters[engine_->cell().node(n).cluster];
  if (c.backend == BackendKind::kLocal) {
    std::optional<AgentNodeStatus> agent = backends_->agents().NodeStatus(name);
    if (!agent) return " (no agent has synced it)";
    if (!agent->live) return " (its agent went silent)";
  }
  return "";
}

bool Daemon::CordonedInConfig(uint32_t n) const {
  return spec_->node(engine_->cell().spec_node(n)).cordoned;
}

NodePage Daemon::ListNodes(const Caller& caller, const std::string& cluster, int64_t after,
                           int limit) const {
  ViewLock lock(*this);
  const CellState& cell = engine_->cell();
  NodePage page;
  for (uint32_t n = static_cast<uint32_t>(std::max<int64_t>(after, 0)); n < cell.node_count();
       ++n) {
    if (!cluster.empty() && spec_->clusters[cell.node(n).cluster].name != cluster) continue;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next = n;
      break;
    }
    page.items.push_back(NodeViewOf(caller, n));
  }
  return page;
}

Result<NodeView> Daemon::GetNode(const Caller& caller, const std::string& name) const {
  ViewLock lock(*this);
  auto it = core_->node_index.find(name);
  if (it == core_->node_index.end()) return NotFound("no node \"" + name + "\"");
  return NodeViewOf(caller, it->second);
}

Result<NodeView> Daemon::HoldNode(const Caller& caller, const std::string& name,
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
  return NodeViewOf(caller, node->second);
}

}  // namespace tessera
