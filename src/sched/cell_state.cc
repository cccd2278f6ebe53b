#include "sched/cell_state.h"

#include <algorithm>
#include <bit>
#include <map>
#include <tuple>

namespace tessera {
namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

}  // namespace

Result<CellState> CellState::FromSpec(const Spec& spec, std::optional<ClusterId> only) {
  if (spec.device_models.size() > static_cast<size_t>(kMaxDeviceModels)) {
    return InvalidArgument("the scheduler supports at most " + std::to_string(kMaxDeviceModels) +
                           " device models in one cell, the spec declares " +
                           std::to_string(spec.device_models.size()));
  }
  CellState c;
  for (const DeviceModel& m : spec.device_models)
    c.model_memory_.push_back(m.memory);
  c.model_devices_.assign(c.model_memory_.size(), 0);
  for (size_t i = 0; i < spec.nodes.size(); ++i) {
    if (only && spec.nodes[i].cluster != *only) continue;
    c.AppendNode(spec.nodes[i], NodeId(static_cast<uint32_t>(i)));
  }
  for (uint32_t i = 0; i < c.nodes_.size(); ++i)
    c.Classify(i);
  c.BuildDomains();
  return c;
}

void CellState::AppendNode(const Node& n, NodeId id) {
  NodeState s;
  s.cpu_total = s.cpu_free = n.cpu;
  s.mem_total = s.mem_free = n.memory;
  s.first_device = static_cast<uint32_t>(devices_.size());
  s.device_count = static_cast<uint16_t>(n.devices.size());
  // Static types: capacity plus the device layout (model and island per index).
  std::vector<std::pair<uint32_t, int32_t>> layout;
  for (const Device& d : n.devices) {
    DeviceSlot slot;
    slot.model = static_cast<uint16_t>(d.model.value());
    slot.island = static_cast<uint16_t>(d.island);
    devices_.push_back(slot);
    s.models |= ModelMask{1} << d.model.value();
    layout.emplace_back(d.model.value(), d.island);
  }
  // The cluster is part of the type, so a class never mixes clusters and filters that depend
  // on a node's cluster (policy scopes) stay class-safe.
  auto [it, fresh] =
      types_.emplace(std::make_tuple(n.cluster.value(), n.cpu, n.memory, std::move(layout)),
                     static_cast<uint16_t>(types_.size()));
  s.type = it->second;
  s.cluster = n.cluster.value();
  s.leaf = n.leaf;
  s.spine = n.spine;
  s.rank = static_cast<uint32_t>(nodes_.size());
  s.schedulable = !n.cordoned;
  nodes_.push_back(s);
  names_.push_back(n.name);
  spec_ids_.push_back(id);
  ledger_.emplace_back();
}

Result<uint32_t> CellState::AddNode(const Spec& spec, NodeId id) {
  if (!id.valid() || id.value() >= spec.nodes.size()) {
    return InvalidArgument("no node " + std::to_string(id.value()) + " in the spec");
  }
  if (std::find(spec_ids_.begin(), spec_ids_.end(), id) != spec_ids_.end()) {
    return InvalidArgument("node " + spec.nodes[id.value()].name + " is already in the cell");
  }
  const Node& n = spec.nodes[id.value()];
  for (const Device& d : n.devices) {
    if (d.model.value() >= model_memory_.size()) {
      return InvalidArgument("node " + n.name + " has a device model the cell does not know");
    }
  }
  AppendNode(n, id);
  uint32_t i = static_cast<uint32_t>(nodes_.size() - 1);
  Touch(i);
  Classify(i);
  PlaceInDomains(i);
  AccountDomains(i, +1);
  return i;
}

void CellState::RetireNode(uint32_t node) {
  if (nodes_[node].retired) return;
  SetSchedulable(node, false);
  nodes_[node].retired = true;
  const size_t models = model_memory_.size();
  for (size_t l = 0; l < kDomainLevels; ++l) {
    uint32_t d = node_domain_[l][node];
    domains_[l][d].cpu_total -= nodes_[node].cpu_total;
    for (const DeviceSlot& dev : devices(node))
      if (dev.healthy) domain_capacity_[l][d * models + dev.model] -= 1000;
  }
}

size_t CellState::DomainLevel(TopologyLevel level) {
  switch (level) {
    case TopologyLevel::kLeaf:
      return 0;
    case TopologyLevel::kSpine:
      return 1;
    case TopologyLevel::kCluster:
      return 2;
    default:
      CHECK(false) << "no domain index at level " << TopologyLevelName(level);
      return 0;
  }
}

void CellState::BuildDomains() {
  for (size_t l = 0; l < kDomainLevels; ++l) {
    // Domains numbered in key order (cluster, leaf | spine | 0) for the nodes of the spec;
    // nodes added later append theirs.
    for (const NodeState& n : nodes_) {
      int32_t sub = l == 0 ? n.leaf : l == 1 ? n.spine : 0;
      domain_index_[l].emplace(std::make_pair(n.cluster, sub), 0);
    }
    uint32_t next = 0;
    for (auto& [key, d] : domain_index_[l])
      d = next++;
    domains_[l].assign(domain_index_[l].size(), Domain{});
    domain_free_[l].assign(domain_index_[l].size() * model_memory_.size(), 0);
    domain_capacity_[l].assign(domain_index_[l].size() * model_memory_.size(), 0);
  }
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    PlaceInDomains(i);
    AccountDomains(i, +1);
  }
}

void CellState::PlaceInDomains(uint32_t node) {
  const size_t models = model_memory_.size();
  const NodeState& n = nodes_[node];
  for (size_t l = 0; l < kDomainLevels; ++l) {
    int32_t sub = l == 0 ? n.leaf : l == 1 ? n.spine : 0;
    auto [it, fresh] = domain_index_[l].emplace(std::make_pair(n.cluster, sub),
                                                static_cast<uint32_t>(domains_[l].size()));
    if (fresh) {
      domains_[l].emplace_back();
      domain_free_[l].resize(domains_[l].size() * models, 0);
      domain_capacity_[l].resize(domains_[l].size() * models, 0);
    }
    uint32_t d = it->second;
    if (node_domain_[l].size() <= node) node_domain_[l].resize(node + 1, 0);
    node_domain_[l][node] = d;
    domains_[l][d].nodes.push_back(node);
    domains_[l][d].cpu_total += n.cpu_total;
    for (const DeviceSlot& dev : devices(node))
      if (dev.healthy) domain_capacity_[l][d * models + dev.model] += 1000;
  }
  max_node_device_milli_ = std::max<Milli>(max_node_device_milli_, Milli{n.device_count} * 1000);
  max_node_cpu_ = std::max(max_node_cpu_, n.cpu_total);
  if (model_devices_.size() < models) model_devices_.resize(models, 0);
  for (const DeviceSlot& dev : devices(node))
    ++model_devices_[dev.model];
  device_total_ += n.device_count;
}

void CellState::AccountDomains(uint32_t node, int sign) {
  const NodeState& n = nodes_[node];
  if (!n.schedulable) return;
  const size_t models = model_memory_.size();
  for (size_t l = 0; l < kDomainLevels; ++l) {
    uint32_t d = node_domain_[l][node];
    domains_[l][d].cpu_free += sign * n.cpu_free;
    for (const DeviceSlot& dev : devices(node))
      if (dev.healthy) domain_free_[l][d * models + dev.model] += sign * Milli{dev.free};
  }
}

void CellState::ShiftDomains(const Placement& p, int sign) {
  const NodeState& n = nodes_[p.node];
  if (!n.schedulable) return;
  const size_t models = model_memory_.size();
  for (size_t l = 0; l < kDomainLevels; ++l) {
    uint32_t d = node_domain_[l][p.node];
    domains_[l][d].cpu_free += sign * p.cpu;
    for (const DeviceUse& u : p.devices) {
      const DeviceSlot& dev = devices_[n.first_device + u.index];
      if (dev.healthy) domain_free_[l][d * models + dev.model] += sign * u.milli;
    }
  }
}

Milli CellState::SumModels(const std::vector<Milli>& per_model, size_t d, ModelMask mask) const {
  const size_t models = model_memory_.size();
  if (models < static_cast<size_t>(kMaxDeviceModels)) mask &= (ModelMask{1} << models) - 1;
  Milli sum = 0;
  for (; mask != 0; mask &= mask - 1)
    sum += per_model[d * models + static_cast<size_t>(std::countr_zero(mask))];
  return sum;
}

Milli CellState::DomainFreeDevices(TopologyLevel level, size_t d, ModelMask mask) const {
  return SumModels(domain_free_[DomainLevel(level)], d, mask);
}

Milli CellState::DomainDeviceCapacity(TopologyLevel level, size_t d, ModelMask mask) const {
  return SumModels(domain_capacity_[DomainLevel(level)], d, mask);
}

std::optional<size_t> CellState::ClusterDomain(uint32_t cluster) const {
  auto it = domain_index_[DomainLevel(TopologyLevel::kCluster)].find({cluster, 0});
  if (it == domain_index_[DomainLevel(TopologyLevel::kCluster)].end()) return std::nullopt;
  return it->second;
}

uint64_t CellState::Hash(uint32_t i) const {
  const NodeState& n = nodes_[i];
  uint64_t h = Mix(n.type, static_cast<uint64_t>(n.cpu_free));
  h = Mix(h, static_cast<uint64_t>(n.mem_free));
  h = Mix(h, n.kinds);
  h = Mix(h, n.schedulable);
  for (const DeviceSlot& d : devices(i))
    h = Mix(h, (uint64_t{d.free} << 1) | d.healthy);
  return h;
}

bool CellState::SameState(uint32_t a, uint32_t b) const {
  const NodeState& x = nodes_[a];
  const NodeState& y = nodes_[b];
  if (x.type != y.type || x.cpu_free != y.cpu_free || x.mem_free != y.mem_free ||
      x.kinds != y.kinds || x.schedulable != y.schedulable) {
    return false;
  }
  auto dx = devices(a), dy = devices(b);
  for (size_t k = 0; k < dx.size(); ++k) {
    if (dx[k].free != dy[k].free || dx[k].healthy != dy[k].healthy) return false;
  }
  return true;
}

void CellState::Classify(uint32_t i) {
  uint64_t h = Hash(i);
  auto& bucket = by_hash_[h];
  auto before = [this](uint32_t a, uint32_t b) {
    return std::tie(nodes_[a].rank, a) < std::tie(nodes_[b].rank, b);
  };
  for (uint32_t slot : bucket) {
    NodeClass& k = classes_[slot];
    if (SameState(k.members.front(), i)) {
      k.members.insert(std::upper_bound(k.members.begin(), k.members.end(), i, before), i);
      nodes_[i].klass = slot;
      ++k.stamp;
      LogEvent(slot);
      return;
    }
  }
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    ++classes_[slot].generation;
  } else {
    slot = static_cast<uint32_t>(classes_.size());
    classes_.emplace_back();
  }
  classes_[slot].hash = h;
  classes_[slot].members = {i};
  ++classes_[slot].stamp;
  bucket.push_back(slot);
  nodes_[i].klass = slot;
  ++live_classes_;
  LogEvent(slot);
}

void CellState::LogEvent(uint32_t slot) {
  events_.push_back(slot);
  // Keep the log bounded: a reader that falls behind the trimmed part rebuilds its index.
  if (events_.size() > 8 * classes_.size() + 4096) {
    size_t drop = events_.size() / 2;
    events_.erase(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(drop));
    events_base_ += drop;
  }
}

void CellState::Unclassify(uint32_t i) {
  uint32_t slot = nodes_[i].klass;
  NodeClass& k = classes_[slot];
  auto it = std::find(k.members.begin(), k.members.end(), i);
  CHECK(it != k.members.end()) << "node " << i << " missing from its class";
  k.members.erase(it);
  ++k.stamp;
  if (!k.members.empty()) LogEvent(slot);
  if (k.members.empty()) {
    auto& bucket = by_hash_[k.hash];
    bucket.erase(std::find(bucket.begin(), bucket.end(), slot));
    if (bucket.empty()) by_hash_.erase(k.hash);
    free_slots_.push_back(slot);
    --live_classes_;
  }
}

void CellState::Touch(uint32_t node) {
  nodes_[node].version = ++version_;
}

Status CellState::Commit(const Placement& p) {
  if (p.node >= nodes_.size()) return InvalidArgument("placement on an unknown node");
  NodeState& n = nodes_[p.node];
  if (n.version != p.node_version) {
    return FailedPrecondition("node " + names_[p.node] +
                              " changed since the placement was "
                              "computed (version " +
                              std::to_string(p.node_version) + " < " + std::to_string(n.version) +
                              ")");
  }
  if (p.cpu > n.cpu_free || p.memory > n.mem_free) {
    return InvalidArgument("placement exceeds the free CPU or memory of " + names_[p.node]);
  }
  for (const DeviceUse& u : p.devices) {
    if (u.index >= n.device_count || u.milli > devices_[n.first_device + u.index].free) {
      return InvalidArgument("placement exceeds the free share of a device on " + names_[p.node]);
    }
  }
  Unclassify(p.node);
  ShiftDomains(p, -1);
  n.cpu_free -= p.cpu;
  n.mem_free -= p.memory;
  for (const DeviceUse& u : p.devices) {
    devices_[n.first_device + u.index].free =
        static_cast<uint16_t>(devices_[n.first_device + u.index].free - u.milli);
  }
  if (p.kind != 0) n.kinds |= 1u << p.kind;
  ++n.tasks;
  ledger_[p.node].push_back(p.task);
  Touch(p.node);
  Classify(p.node);
  return Status::Ok();
}

void CellState::Release(const Placement& p) {
  NodeState& n = nodes_[p.node];
  Unclassify(p.node);
  ShiftDomains(p, +1);
  n.cpu_free += p.cpu;
  n.mem_free += p.memory;
  CHECK(n.cpu_free <= n.cpu_total && n.mem_free <= n.mem_total)
      << "release of more than was committed on " << names_[p.node];
  for (const DeviceUse& u : p.devices) {
    DeviceSlot& d = devices_[n.first_device + u.index];
    d.free = static_cast<uint16_t>(d.free + u.milli);
    CHECK(d.free <= 1000) << "release of more than a whole device on " << names_[p.node];
  }
  CHECK(n.tasks > 0) << "release on an empty node";
  auto& ledger = ledger_[p.node];
  auto entry = std::find(ledger.begin(), ledger.end(), p.task);
  CHECK(entry != ledger.end()) << "release of a task not on " << names_[p.node];
  ledger.erase(entry);
  if (--n.tasks == 0) n.kinds = 0;
  Touch(p.node);
  Classify(p.node);
}

void CellState::SetRanks(const std::vector<uint32_t>& rank_of_node) {
  CHECK(rank_of_node.size() == nodes_.size()) << "one rank per node";
  for (uint32_t i = 0; i < nodes_.size(); ++i)
    Unclassify(i);
  for (uint32_t i = 0; i < nodes_.size(); ++i)
    nodes_[i].rank = rank_of_node[i];
  for (uint32_t i = 0; i < nodes_.size(); ++i)
    Classify(i);
}

void CellState::SetSchedulable(uint32_t node, bool schedulable) {
  if (nodes_[node].retired) schedulable = false;  // a retired node never comes back
  Unclassify(node);
  AccountDomains(node, -1);
  nodes_[node].schedulable = schedulable;
  Touch(node);
  AccountDomains(node, +1);
  Classify(node);
}

size_t CellState::MemoryBytes() const {
  size_t bytes = nodes_.capacity() * sizeof(NodeState) + devices_.capacity() * sizeof(DeviceSlot) +
                 spec_ids_.capacity() * sizeof(NodeId) + classes_.capacity() * sizeof(NodeClass);
  for (const std::string& s : names_)
    bytes += sizeof(std::string) + s.capacity();
  for (const NodeClass& k : classes_)
    bytes += k.members.capacity() * sizeof(uint32_t);
  for (const auto& ledger : ledger_)
    bytes += sizeof(ledger) + ledger.capacity() * sizeof(TaskRef);
  bytes += by_hash_.size() * (sizeof(uint64_t) + sizeof(std::vector<uint32_t>) + 32);
  return bytes;
}

void CellState::Restore(const NodeSnapshot& snap) {
  Unclassify(snap.node);
  AccountDomains(snap.node, -1);
  nodes_[snap.node] = snap.state;
  std::copy(snap.devices.begin(), snap.devices.end(),
            devices_.begin() + nodes_[snap.node].first_device);
  ledger_[snap.node] = snap.ledger;
  AccountDomains(snap.node, +1);
  Classify(snap.node);
}

Status CellState::Proposal::Add(const Placement& p) {
  CHECK(open_) << "adding to a closed proposal";
  if (p.node >= cell_.nodes_.size()) return InvalidArgument("placement on an unknown node");
  bool seen = std::any_of(touched_.begin(), touched_.end(),
                          [&](const NodeSnapshot& s) { return s.node == p.node; });
  if (!seen) {
    auto devs = cell_.devices(p.node);
    touched_.push_back(
        {p.node, cell_.nodes_[p.node], {devs.begin(), devs.end()}, cell_.ledger_[p.node]});
  }
  Status s = cell_.Commit(p);
  if (s.ok()) placements_.push_back(p);
  return s;
}

void CellState::Proposal::Abort() {
  if (!open_) return;
  open_ = false;
  for (auto it = touched_.rbegin(); it != touched_.rend(); ++it) {
    // The class slot may have changed; Restore re-derives it from the restored state.
    NodeSnapshot snap = *it;
    snap.state.klass = cell_.nodes_[snap.node].klass;
    cell_.Restore(snap);
  }
  cell_.version_ = version_;
  placements_.clear();
}

}  // namespace tessera
