// Parsers for the resource sections: device models, regions, links, clusters (with node
// groups and single nodes) and datasets.
#include "config/parse.h"

namespace tessera::config_internal {
namespace {

const std::vector<std::string_view> kKinds = {"gpu", "npu", "cpu"};
const std::vector<std::string_view> kTiers = {"dedicated", "shared", "elastic"};
const std::vector<std::string_view> kBackends = {"sim", "emulated", "local", "slurm"};

// Device declaration of a node group or single node: {model, count, perIsland}.
struct DeviceDecl {
  int32_t count = 0;
  int32_t per_island = 0;
};

DeviceDecl ParseNodeDevices(YamlMap& parent, const std::function<void(Spec&, uint32_t)>& assign) {
  DeviceDecl d;
  auto n = parent.Node("devices", Need::kOptional);
  if (!n) return d;
  YamlMap m(parent.builder(), parent.file(), *n, parent.path().Field("devices"),
            "a device declaration");
  if (!m.ok()) return d;
  ParseRef(m, "model", RefKind::kDeviceModel, Need::kRequired, assign);
  d.count = static_cast<int32_t>(m.Int("count", 1, 1024, Need::kRequired).value_or(0));
  d.per_island = static_cast<int32_t>(m.Int("perIsland", 1, 1024).value_or(0));
  if (d.per_island > 0 && d.count > 0 && d.count % d.per_island != 0) {
    m.ErrorAt("perIsland", "devices per island (" + std::to_string(d.per_island) +
                               ") must divide the device count (" + std::to_string(d.count) + ")");
    d.per_island = 0;
  }
  return d;
}

Milli NodeCpu(YamlMap& m) {
  auto v = m.MilliValue("cpu", Need::kRequired);
  if (v && *v == 0) m.ErrorAt("cpu", "a node needs CPU (cores, e.g. 96)");
  return v.value_or(0);
}

MiB NodeMemory(YamlMap& m) {
  auto v = m.Memory("memory", Need::kRequired);
  if (v && *v == 0) m.ErrorAt("memory", "a node needs memory (e.g. 512Gi)");
  return v.value_or(0);
}

}  // namespace

void ParseDeviceModel(YamlMap& m, DeviceModel& out) {
  out.name = m.Str("name", Need::kRequired).value_or("");
  if (auto k = m.Enum("kind", kKinds, Need::kRequired)) out.kind = *ParseDeviceKind(*k);
  out.vendor = m.Str("vendor").value_or("");
  bool accelerator = out.kind != DeviceKind::kCpu;
  auto memory = m.Memory("memory", accelerator ? Need::kRequired : Need::kOptional);
  if (memory && *memory == 0 && accelerator) {
    m.ErrorAt("memory", "a gpu or npu model needs its memory, e.g. 80Gi");
  }
  out.memory = memory.value_or(0);
  out.labels = m.StrList("labels");
  // speed: a single number for every class, or a mapping per class.
  if (auto n = m.Node("speed", Need::kOptional)) {
    FieldPath p = m.path().Field("speed");
    if (n->IsScalar()) {
      auto v = ParseMilli(n->Scalar());
      if (!v.ok() || *v == 0) {
        m.ErrorAt("speed", "expected a positive relative speed such as 1.0 or 0.6, got \"" +
                               n->Scalar() + "\"");
      } else {
        out.speed.fill(*v);
      }
    } else {
      YamlMap sm(m.builder(), m.file(), *n, p, "speeds per workload class");
      for (int i = 0; i < kWorkloadClassCount; ++i) {
        auto c = static_cast<WorkloadClass>(i);
        if (auto v = sm.MilliValue(WorkloadClassName(c))) {
          if (*v == 0) {
            sm.ErrorAt(WorkloadClassName(c), "speed must be positive");
          } else {
            out.speed[static_cast<size_t>(i)] = *v;
          }
        }
      }
    }
  }
}

void ParseRegion(YamlMap& m, Region& out) {
  out.name = m.Str("name", Need::kRequired).value_or("");
  out.description = m.Str("description").value_or("");
  out.labels = m.Labels("labels");
}

void ParseLink(YamlMap& m, size_t i) {
  ParseRef(m, "from", RefKind::kRegion, Need::kRequired,
           [i](Spec& s, uint32_t id) { s.links[i].a = RegionId(id); });
  ParseRef(m, "to", RefKind::kRegion, Need::kRequired,
           [i](Spec& s, uint32_t id) { s.links[i].b = RegionId(id); });
  Spec& s = m.builder().spec;
  s.links[i].latency = m.Duration("latency", Need::kRequired).value_or(0);
  auto bw = m.Bandwidth("bandwidth", Need::kRequired);
  if (bw && *bw == 0) m.ErrorAt("bandwidth", "a link's bandwidth must be positive");
  s.links[i].bandwidth = bw.value_or(0);
}

namespace {

// One of a cluster's nodeGroups, at `p`.
void ParseNodeGroup(YamlMap& m, size_t ci, const YAML::Node& n, const FieldPath& p, size_t gi) {
  SpecBuilder& b = m.builder();
  b.spec.clusters[ci].node_groups.emplace_back();
  YamlMap gm(b, m.file(), n, p, "a node group");
  if (!gm.ok()) return;
  NodeGroup& g = b.spec.clusters[ci].node_groups[gi];
  g.name = gm.Str("name", Need::kRequired).value_or("");
  g.count = static_cast<int32_t>(gm.Int("count", 1, 200000, Need::kRequired).value_or(0));
  g.cpu = NodeCpu(gm);
  g.memory = NodeMemory(gm);
  g.labels = gm.Labels("labels");
  DeviceDecl d = ParseNodeDevices(gm, [ci, gi](Spec& s, uint32_t id) {
    s.clusters[ci].node_groups[gi].device_model = DeviceModelId(id);
  });
  NodeGroup& g2 = b.spec.clusters[ci].node_groups[gi];
  g2.devices_per_node = d.count;
  g2.devices_per_island = d.per_island;
  if (auto tn = gm.Node("topology", Need::kOptional)) {
    YamlMap tm(b, m.file(), *tn, p.Field("topology"), "a node group topology");
    if (tm.ok()) {
      g2.nodes_per_leaf = static_cast<int32_t>(tm.Int("nodesPerLeaf", 1, 100000).value_or(0));
      g2.leaves_per_spine = static_cast<int32_t>(tm.Int("leavesPerSpine", 1, 100000).value_or(0));
    }
  }
}

// One of a cluster's nodes declared one by one, at `p`.
void ParseSingleNode(YamlMap& m, size_t ci, const YAML::Node& n, const FieldPath& p, size_t ni) {
  SpecBuilder& b = m.builder();
  b.single_nodes[ci].emplace_back();
  b.single_nodes[ci][ni].path = p;
  YamlMap nm(b, m.file(), n, p, "a node");
  if (!nm.ok()) return;
  DraftNode& dn = b.single_nodes[ci][ni];
  dn.node.name = nm.Str("name", Need::kRequired).value_or("");
  dn.node.cpu = NodeCpu(nm);
  dn.node.memory = NodeMemory(nm);
  dn.node.labels = nm.Labels("labels");
  dn.node.cordoned = nm.Bool("cordoned").value_or(false);
  dn.leaf = nm.Str("leaf").value_or("");
  dn.spine = nm.Str("spine").value_or("");
  // The devices are created now; their model is filled in when the reference resolves.
  SpecBuilder* bp = &b;
  DeviceDecl d = ParseNodeDevices(nm, [bp, ci, ni](Spec&, uint32_t id) {
    for (Device& dev : bp->single_nodes[ci][ni].node.devices)
      dev.model = DeviceModelId(id);
  });
  int32_t per_island = d.per_island > 0 ? d.per_island : std::max(d.count, 1);
  for (int32_t k = 0; k < d.count; ++k) {
    b.single_nodes[ci][ni].node.devices.push_back({DeviceModelId(), k / per_island});
  }
}

}  // namespace

void ParseCluster(YamlMap& m, size_t ci) {
  SpecBuilder& b = m.builder();
  Cluster& c = b.spec.clusters[ci];
  c.name = m.Str("name", Need::kRequired).value_or("");
  ParseRef(m, "region", RefKind::kRegion, Need::kRequired,
           [ci](Spec& s, uint32_t id) { s.clusters[ci].region = RegionId(id); });
  if (auto t = m.Enum("tier", kTiers)) c.tier = *ParseClusterTier(*t);
  if (auto be = m.Enum("backend", kBackends)) c.backend = *ParseBackendKind(*be);
  c.backend_options = m.Labels("backendOptions");
  if (c.backend == BackendKind::kSlurm) {
    // What the Slurm backend reads (docs/operations.md#slurm).
    for (const auto& [key, value] : c.backend_options) {
      if (key != "slurmConf" && key != "partition" && key != "workDir") {
        m.ErrorAt("backendOptions", "unknown option \"" + key +
                                        "\" of a slurm cluster; expected slurmConf, partition, "
                                        "workDir");
      }
    }
    if (!c.backend_options.count("slurmConf")) {
      m.ErrorAt("backendOptions",
                "a slurm cluster needs slurmConf: the path of its controller's slurm.conf");
    }
  }
  c.labels = m.Labels("labels");
  c.run_as = ParseRunAs(m);
  if (c.run_as && c.backend != BackendKind::kLocal) {
    m.ErrorAt("runAs", "runAs is for local clusters, whose agents run the tasks; a " +
                           std::string(BackendKindName(c.backend)) +
                           " cluster runs them as its own system does");
  }
  if (auto n = m.Node("interconnect", Need::kOptional)) {
    YamlMap im(b, m.file(), *n, m.path().Field("interconnect"), "an interconnect");
    if (im.ok()) {
      Interconnect& ic = b.spec.clusters[ci].interconnect;
      ic.fabric = im.Str("fabric").value_or(ic.fabric);
      ic.island_bandwidth = im.Bandwidth("islandBandwidth").value_or(0);
      ic.node_bandwidth = im.Bandwidth("nodeBandwidth").value_or(0);
      ic.leaf_bandwidth = im.Bandwidth("leafBandwidth").value_or(0);
      ic.spine_bandwidth = im.Bandwidth("spineBandwidth").value_or(ic.leaf_bandwidth);
      ic.core_bandwidth = im.Bandwidth("coreBandwidth").value_or(ic.spine_bandwidth);
    }
  }
  // prices: {MODEL: per device-hour, cpu: per core-hour}
  m.Entries("prices", [&](const std::string& key, const YAML::Node& v, const FieldPath& p) {
    auto text = ScalarOf(b, m.file(), v, p, "a price per device-hour such as 2.5");
    if (!text) return;
    auto price = ParseMilli(*text);
    if (!price.ok()) {
      b.ErrorAt(p, PosOf(m.file(), v), "price: " + price.status().message());
      return;
    }
    if (key == "cpu") {
      b.spec.clusters[ci].price_per_cpu_core_hour = *price;
      return;
    }
    Milli value = *price;
    b.AddRef(RefKind::kDeviceModel, key, p, PosOf(m.file(), v), [ci, value](Spec& s, uint32_t id) {
      s.clusters[ci].price_per_device_hour[DeviceModelId(id)] = value;
    });
  });
  m.List("nodeGroups", Need::kOptional, [&](const YAML::Node& n, const FieldPath& p, size_t gi) {
    ParseNodeGroup(m, ci, n, p, gi);
  });
  m.List("nodes", Need::kOptional, [&](const YAML::Node& n, const FieldPath& p, size_t ni) {
    ParseSingleNode(m, ci, n, p, ni);
  });
}

void ParseDataset(YamlMap& m, size_t i) {
  Spec& s = m.builder().spec;
  s.datasets[i].name = m.Str("name", Need::kRequired).value_or("");
  ParseRef(m, "region", RefKind::kRegion, Need::kRequired,
           [i](Spec& sp, uint32_t id) { sp.datasets[i].region = RegionId(id); });
  s.datasets[i].size = m.Memory("size", Need::kRequired).value_or(0);
  size_t n = 0;
  ParseRefList(
      m, "residency", RefKind::kRegion,
      [i](Spec& sp, size_t k, uint32_t id) { sp.datasets[i].residency[k] = RegionId(id); }, &n);
  s.datasets[i].residency.resize(n);
  ParseRefList(
      m, "replicas", RefKind::kRegion,
      [i](Spec& sp, size_t k, uint32_t id) { sp.datasets[i].replicas[k] = RegionId(id); }, &n);
  s.datasets[i].replicas.resize(n);
}

}  // namespace tessera::config_internal
