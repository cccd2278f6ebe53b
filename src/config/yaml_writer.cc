#include "config/yaml_writer.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>

namespace tessera {
namespace {

// Keeps the emitter calls short; every value goes through yaml-cpp, which quotes as needed.
class Out {
 public:
  explicit Out(YAML::Emitter& e) : e_(e) {}

  void Field(const char* key, const std::string& value) {
    e_ << YAML::Key << key << YAML::Value << value;
  }
  void Field(const char* key, std::string_view value) { Field(key, std::string(value)); }
  void Field(const char* key, const char* value) { Field(key, std::string(value)); }
  void Field(const char* key, int64_t value) { e_ << YAML::Key << key << YAML::Value << value; }
  void Key(const char* key) { e_ << YAML::Key << key << YAML::Value; }
  void Labels(const char* key, const std::map<std::string, std::string>& labels) {
    if (labels.empty()) return;
    Key(key);
    e_ << YAML::Flow << YAML::BeginMap;
    for (const auto& [k, v] : labels)
      e_ << YAML::Key << k << YAML::Value << v;
    e_ << YAML::EndMap;
  }
  void List(const char* key, const std::vector<std::string>& items) {
    if (items.empty()) return;
    Key(key);
    e_ << YAML::Flow << YAML::BeginSeq;
    for (const std::string& s : items)
      e_ << s;
    e_ << YAML::EndSeq;
  }
  YAML::Emitter& e() { return e_; }

 private:
  YAML::Emitter& e_;
};

void WriteDeviceModel(Out& o, const DeviceModel& m) {
  o.e() << YAML::Flow << YAML::BeginMap;
  o.Field("name", m.name);
  o.Field("kind", DeviceKindName(m.kind));
  if (!m.vendor.empty()) o.Field("vendor", m.vendor);
  if (m.memory != 0 || m.kind != DeviceKind::kCpu) o.Field("memory", FormatMemory(m.memory));
  o.List("labels", m.labels);
  bool uniform =
      std::all_of(m.speed.begin(), m.speed.end(), [&](Milli s) { return s == m.speed.front(); });
  if (uniform && m.speed.front() != kMilliPerUnit) {
    o.Field("speed", FormatMilli(m.speed.front()));
  } else if (!uniform) {
    o.Key("speed");
    o.e() << YAML::Flow << YAML::BeginMap;
    for (int i = 0; i < kWorkloadClassCount; ++i) {
      o.Field(std::string(WorkloadClassName(static_cast<WorkloadClass>(i))).c_str(),
              FormatMilli(m.speed[static_cast<size_t>(i)]));
    }
    o.e() << YAML::EndMap;
  }
  o.e() << YAML::EndMap;
}

void WriteInterconnect(Out& o, const Interconnect& ic) {
  // The loader defaults spine to leaf and core to spine bandwidth; write only what differs.
  bool plain = ic.fabric == Interconnect{}.fabric && ic.island_bandwidth == 0 &&
               ic.node_bandwidth == 0 && ic.leaf_bandwidth == 0 && ic.spine_bandwidth == 0 &&
               ic.core_bandwidth == 0;
  if (plain) return;
  o.Key("interconnect");
  o.e() << YAML::Flow << YAML::BeginMap;
  o.Field("fabric", ic.fabric);
  if (ic.island_bandwidth != 0) o.Field("islandBandwidth", FormatBandwidth(ic.island_bandwidth));
  if (ic.node_bandwidth != 0) o.Field("nodeBandwidth", FormatBandwidth(ic.node_bandwidth));
  if (ic.leaf_bandwidth != 0) o.Field("leafBandwidth", FormatBandwidth(ic.leaf_bandwidth));
  if (ic.spine_bandwidth != ic.leaf_bandwidth) {
    o.Field("spineBandwidth", FormatBandwidth(ic.spine_bandwidth));
  }
  if (ic.core_bandwidth != ic.spine_bandwidth) {
    o.Field("coreBandwidth", FormatBandwidth(ic.core_bandwidth));
  }
  o.e() << YAML::EndMap;
}

void WriteNodeGroup(Out& o, const Spec& spec, const NodeGroup& g) {
  o.e() << YAML::BeginMap;
  o.Field("name", g.name);
  o.Field("count", int64_t{g.count});
  o.Field("cpu", FormatMilli(g.cpu));
  o.Field("memory", FormatMemory(g.memory));
  o.Labels("labels", g.labels);
  if (g.device_model && g.devices_per_node > 0) {
    o.Key("devices");
    o.e() << YAML::Flow << YAML::BeginMap;
    o.Field("model", spec.model(*g.device_model).name);
    o.Field("count", int64_t{g.devices_per_node});
    if (g.devices_per_island > 0) o.Field("perIsland", int64_t{g.devices_per_island});
    o.e() << YAML::EndMap;
  }
  if (g.nodes_per_leaf > 0 || g.leaves_per_spine > 0) {
    o.Key("topology");
    o.e() << YAML::Flow << YAML::BeginMap;
    if (g.nodes_per_leaf > 0) o.Field("nodesPerLeaf", int64_t{g.nodes_per_leaf});
    if (g.leaves_per_spine > 0) o.Field("leavesPerSpine", int64_t{g.leaves_per_spine});
    o.e() << YAML::EndMap;
  }
  o.e() << YAML::EndMap;
}

// The islands of a single node as the schema declares them: equal runs of `per_island`
// devices. 0 = the whole node is one island.
Result<int32_t> DevicesPerIsland(const Node& n) {
  int32_t count = static_cast<int32_t>(n.devices.size());
  int32_t per = 0;
  while (per < count && n.devices[static_cast<size_t>(per)].island == 0)
    ++per;
  for (int32_t k = 0; k < count; ++k) {
    if (per == 0 || n.devices[static_cast<size_t>(k)].island != k / per || count % per != 0) {
      return InvalidArgument("node \"" + n.name +
                             "\": its islands are not equal runs of devices, which the YAML "
                             "schema cannot express");
    }
  }
  return per == count ? 0 : per;
}

// Which single nodes of a cluster need a named leaf or spine: those sharing one. A node alone
// on its leaf (and a leaf alone under its spine) gets a fresh one from the loader unnamed.
struct SharedSwitches {
  std::map<int32_t, int> nodes_per_leaf;
  std::map<int32_t, std::set<int32_t>> leaves_per_spine;
};

Status WriteNode(Out& o, const Spec& spec, const Node& n, const SharedSwitches& sw) {
  o.e() << YAML::Flow << YAML::BeginMap;
  o.Field("name", n.name);
  o.Field("cpu", FormatMilli(n.cpu));
  o.Field("memory", FormatMemory(n.memory));
  o.Labels("labels", n.labels);
  if (!n.devices.empty()) {
    DeviceModelId model = n.devices.front().model;
    for (const Device& d : n.devices) {
      if (d.model != model || !d.model.valid() || d.model.value() >= spec.device_models.size()) {
        return InvalidArgument("node \"" + n.name +
                               "\": a single node's devices must be of one known model");
      }
    }
    auto per_island = DevicesPerIsland(n);
    if (!per_island.ok()) return per_island.status();
    o.Key("devices");
    o.e() << YAML::Flow << YAML::BeginMap;
    o.Field("model", spec.model(model).name);
    o.Field("count", static_cast<int64_t>(n.devices.size()));
    if (*per_island > 0) o.Field("perIsland", int64_t{*per_island});
    o.e() << YAML::EndMap;
  }
  if (sw.nodes_per_leaf.at(n.leaf) > 1) o.Field("leaf", "leaf-" + std::to_string(n.leaf));
  if (sw.leaves_per_spine.at(n.spine).size() > 1) {
    o.Field("spine", "spine-" + std::to_string(n.spine));
  }
  if (n.cordoned) o.Field("cordoned", "true");
  o.e() << YAML::EndMap;
  return Status::Ok();
}

Status WriteCluster(Out& o, const Spec& spec, const Cluster& c) {
  o.e() << YAML::BeginMap;
  o.Field("name", c.name);
  o.Field("region", spec.region(c.region).name);
  o.Field("tier", ClusterTierName(c.tier));
  o.Field("backend", BackendKindName(c.backend));
  o.Labels("backendOptions", c.backend_options);
  o.Labels("labels", c.labels);
  WriteInterconnect(o, c.interconnect);
  if (!c.price_per_device_hour.empty() || c.price_per_cpu_core_hour) {
    o.Key("prices");
    o.e() << YAML::Flow << YAML::BeginMap;
    for (const auto& [model, price] : c.price_per_device_hour)
      o.Field(spec.model(model).name.c_str(), FormatMilli(price));
    if (c.price_per_cpu_core_hour) o.Field("cpu", FormatMilli(*c.price_per_cpu_core_hour));
    o.e() << YAML::EndMap;
  }
  if (!c.node_groups.empty()) {
    o.Key("nodeGroups");
    o.e() << YAML::BeginSeq;
    for (const NodeGroup& g : c.node_groups)
      WriteNodeGroup(o, spec, g);
    o.e() << YAML::EndSeq;
  }
  // Nodes expanded from a group carry its name; the rest were declared one by one.
  std::vector<const Node*> singles;
  SharedSwitches sw;
  for (uint32_t k = 0; k < c.node_count; ++k) {
    const Node& n = spec.node(NodeId(c.first_node.value() + k));
    if (!n.group.empty()) continue;
    singles.push_back(&n);
    ++sw.nodes_per_leaf[n.leaf];
    sw.leaves_per_spine[n.spine].insert(n.leaf);
  }
  if (!singles.empty()) {
    o.Key("nodes");
    o.e() << YAML::BeginSeq;
    for (const Node* n : singles)
      TESSERA_RETURN_IF_ERROR(WriteNode(o, spec, *n, sw));
    o.e() << YAML::EndSeq;
  }
  o.e() << YAML::EndMap;
  return Status::Ok();
}

void WriteDataset(Out& o, const Spec& spec, const Dataset& d) {
  auto names = [&](const std::vector<RegionId>& ids) {
    std::vector<std::string> out;
    for (RegionId id : ids)
      out.push_back(spec.region(id).name);
    return out;
  };
  o.e() << YAML::Flow << YAML::BeginMap;
  o.Field("name", d.name);
  o.Field("region", spec.region(d.region).name);
  o.Field("size", FormatMemory(d.size));
  o.List("residency", names(d.residency));
  o.List("replicas", names(d.replicas));
  o.e() << YAML::EndMap;
}

Status WriteDocument(Out& o, const Spec& spec) {
  YAML::Emitter& e = o.e();
  e << YAML::BeginMap;
  o.Field("currency", spec.currency);
  if (!spec.device_models.empty()) {
    o.Key("deviceModels");
    e << YAML::BeginSeq;
    for (const DeviceModel& m : spec.device_models)
      WriteDeviceModel(o, m);
    e << YAML::EndSeq;
  }
  if (!spec.regions.empty()) {
    o.Key("regions");
    e << YAML::BeginSeq;
    for (const Region& r : spec.regions) {
      e << YAML::Flow << YAML::BeginMap;
      o.Field("name", r.name);
      if (!r.description.empty()) o.Field("description", r.description);
      o.Labels("labels", r.labels);
      e << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  if (!spec.links.empty()) {
    o.Key("links");
    e << YAML::BeginSeq;
    for (const RegionLink& l : spec.links) {
      e << YAML::Flow << YAML::BeginMap;
      o.Field("from", spec.region(l.a).name);
      o.Field("to", spec.region(l.b).name);
      o.Field("latency", FormatDuration(l.latency));
      o.Field("bandwidth", FormatBandwidth(l.bandwidth));
      e << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  if (!spec.clusters.empty()) {
    o.Key("clusters");
    e << YAML::BeginSeq;
    for (const Cluster& c : spec.clusters)
      TESSERA_RETURN_IF_ERROR(WriteCluster(o, spec, c));
    e << YAML::EndSeq;
  }
  if (!spec.datasets.empty()) {
    o.Key("datasets");
    e << YAML::BeginSeq;
    for (const Dataset& d : spec.datasets)
      WriteDataset(o, spec, d);
    e << YAML::EndSeq;
  }
  e << YAML::EndMap;
  return Status::Ok();
}

}  // namespace

Result<std::string> WriteFleetYaml(const Spec& spec, const YamlWriteOptions& options) {
  YAML::Emitter e;
  Out o(e);
  try {
    for (const std::string& line : options.header_comment)
      e << YAML::Comment(line) << YAML::Newline;
    TESSERA_RETURN_IF_ERROR(WriteDocument(o, spec));
  } catch (const YAML::Exception& ex) {
    return Internal(std::string("writing YAML: ") + ex.what());
  }
  if (!e.good()) return Internal("writing YAML: " + e.GetLastError());
  std::string text = e.c_str();
  text += "\n";
  return text;
}

}  // namespace tessera
