#include <sstream>
#include <string>

#include "config/same_fleet.h"

namespace tessera::testing {
namespace {

// Records the first difference; later comparisons are skipped once one is found.
class Diff {
 public:
  template <class T>
  void Field(const std::string& where, const T& a, const T& b) {
    if (!first_.empty() || a == b) return;
    std::ostringstream s;
    s << where << " differs";
    if constexpr (requires(std::ostream & o, const T& v) { o << v; }) {
      s << ": " << a << " vs " << b;
    }
    first_ = s.str();
  }
  template <class Tag>
  void Field(const std::string& where, Id<Tag> a, Id<Tag> b) {
    Field(where, a.value(), b.value());
  }
  template <class T>
  bool Sizes(const std::string& where, const std::vector<T>& a, const std::vector<T>& b) {
    Field(where + ".size()", a.size(), b.size());
    return first_.empty();
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

std::string At(const std::string& list, size_t i) {
  return list + "[" + std::to_string(i) + "]";
}

void CompareInterconnect(Diff& d, const std::string& p, const Interconnect& a,
                         const Interconnect& b) {
  d.Field(p + ".fabric", a.fabric, b.fabric);
  d.Field(p + ".island_bandwidth", a.island_bandwidth, b.island_bandwidth);
  d.Field(p + ".node_bandwidth", a.node_bandwidth, b.node_bandwidth);
  d.Field(p + ".leaf_bandwidth", a.leaf_bandwidth, b.leaf_bandwidth);
  d.Field(p + ".spine_bandwidth", a.spine_bandwidth, b.spine_bandwidth);
  d.Field(p + ".core_bandwidth", a.core_bandwidth, b.core_bandwidth);
}

void CompareCluster(Diff& d, const std::string& p, const Cluster& a, const Cluster& b) {
  d.Field(p + ".name", a.name, b.name);
  d.Field(p + ".region", a.region, b.region);
  d.Field(p + ".tier", static_cast<int>(a.tier), static_cast<int>(b.tier));
  d.Field(p + ".backend", static_cast<int>(a.backend), static_cast<int>(b.backend));
  d.Field(p + ".backend_options", a.backend_options, b.backend_options);
  CompareInterconnect(d, p + ".interconnect", a.interconnect, b.interconnect);
  d.Field(p + ".price_per_device_hour", a.price_per_device_hour, b.price_per_device_hour);
  d.Field(p + ".price_per_cpu_core_hour", a.price_per_cpu_core_hour, b.price_per_cpu_core_hour);
  d.Field(p + ".first_node", a.first_node, b.first_node);
  d.Field(p + ".node_count", a.node_count, b.node_count);
  d.Field(p + ".labels", a.labels, b.labels);
  if (!d.Sizes(p + ".node_groups", a.node_groups, b.node_groups)) return;
  for (size_t i = 0; i < a.node_groups.size(); ++i) {
    const NodeGroup& x = a.node_groups[i];
    const NodeGroup& y = b.node_groups[i];
    std::string g = At(p + ".node_groups", i);
    d.Field(g + ".name", x.name, y.name);
    d.Field(g + ".count", x.count, y.count);
    d.Field(g + ".cpu", x.cpu, y.cpu);
    d.Field(g + ".memory", x.memory, y.memory);
    d.Field(g + ".labels", x.labels, y.labels);
    d.Field(g + ".device_model", x.device_model.has_value(), y.device_model.has_value());
    if (x.device_model && y.device_model)
      d.Field(g + ".device_model", *x.device_model, *y.device_model);
    d.Field(g + ".devices_per_node", x.devices_per_node, y.devices_per_node);
    d.Field(g + ".devices_per_island", x.devices_per_island, y.devices_per_island);
    d.Field(g + ".nodes_per_leaf", x.nodes_per_leaf, y.nodes_per_leaf);
    d.Field(g + ".leaves_per_spine", x.leaves_per_spine, y.leaves_per_spine);
  }
}

void CompareNode(Diff& d, const std::string& p, const Node& a, const Node& b) {
  d.Field(p + ".name", a.name, b.name);
  d.Field(p + ".cluster", a.cluster, b.cluster);
  d.Field(p + ".cpu", a.cpu, b.cpu);
  d.Field(p + ".memory", a.memory, b.memory);
  d.Field(p + ".labels", a.labels, b.labels);
  d.Field(p + ".spine", a.spine, b.spine);
  d.Field(p + ".leaf", a.leaf, b.leaf);
  d.Field(p + ".cordoned", a.cordoned, b.cordoned);
  d.Field(p + ".group", a.group, b.group);
  if (!d.Sizes(p + ".devices", a.devices, b.devices)) return;
  for (size_t k = 0; k < a.devices.size(); ++k) {
    d.Field(At(p + ".devices", k) + ".model", a.devices[k].model, b.devices[k].model);
    d.Field(At(p + ".devices", k) + ".island", a.devices[k].island, b.devices[k].island);
  }
}

}  // namespace

::testing::AssertionResult SameFleet(const Spec& a, const Spec& b) {
  Diff d;
  d.Field("currency", a.currency, b.currency);
  if (d.Sizes("device_models", a.device_models, b.device_models)) {
    for (size_t i = 0; i < a.device_models.size(); ++i) {
      const DeviceModel& x = a.device_models[i];
      const DeviceModel& y = b.device_models[i];
      std::string p = At("device_models", i);
      d.Field(p + ".name", x.name, y.name);
      d.Field(p + ".kind", static_cast<int>(x.kind), static_cast<int>(y.kind));
      d.Field(p + ".vendor", x.vendor, y.vendor);
      d.Field(p + ".memory", x.memory, y.memory);
      d.Field(p + ".labels", x.labels, y.labels);
      d.Field(p + ".speed", x.speed, y.speed);
    }
  }
  if (d.Sizes("regions", a.regions, b.regions)) {
    for (size_t i = 0; i < a.regions.size(); ++i) {
      d.Field(At("regions", i) + ".name", a.regions[i].name, b.regions[i].name);
      d.Field(At("regions", i) + ".description", a.regions[i].description,
              b.regions[i].description);
      d.Field(At("regions", i) + ".labels", a.regions[i].labels, b.regions[i].labels);
    }
  }
  if (d.Sizes("links", a.links, b.links)) {
    for (size_t i = 0; i < a.links.size(); ++i) {
      d.Field(At("links", i) + ".a", a.links[i].a, b.links[i].a);
      d.Field(At("links", i) + ".b", a.links[i].b, b.links[i].b);
      d.Field(At("links", i) + ".latency", a.links[i].latency, b.links[i].latency);
      d.Field(At("links", i) + ".bandwidth", a.links[i].bandwidth, b.links[i].bandwidth);
    }
  }
  if (d.Sizes("clusters", a.clusters, b.clusters)) {
    for (size_t i = 0; i < a.clusters.size(); ++i)
      CompareCluster(d, At("clusters", i), a.clusters[i], b.clusters[i]);
  }
  if (d.Sizes("nodes", a.nodes, b.nodes)) {
    for (size_t i = 0; i < a.nodes.size(); ++i)
      CompareNode(d, At("nodes", i) + " (" + a.nodes[i].name + ")", a.nodes[i], b.nodes[i]);
  }
  if (d.Sizes("datasets", a.datasets, b.datasets)) {
    for (size_t i = 0; i < a.datasets.size(); ++i) {
      const Dataset& x = a.datasets[i];
      const Dataset& y = b.datasets[i];
      std::string p = At("datasets", i);
      d.Field(p + ".name", x.name, y.name);
      d.Field(p + ".region", x.region, y.region);
      d.Field(p + ".size", x.size, y.size);
      d.Field(p + ".residency", x.residency, y.residency);
      d.Field(p + ".replicas", x.replicas, y.replicas);
    }
  }
  if (d.first().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << d.first();
}

}  // namespace tessera::testing
