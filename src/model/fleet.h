// The unified resource view as declared: regions, links, clusters, nodes and devices,
// datasets. Plain values; the config layer builds them, the scheduler reads them.
//
// Ids are indices into the vectors of the Fleet that holds them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ids.h"
#include "common/quantity.h"
#include "model/catalog.h"
#include "model/run_as.h"
#include "model/topology.h"

namespace tessera {

struct Region {
  std::string name;
  std::string description;
  std::map<std::string, std::string> labels;
};

// A network link between two regions; symmetric.
struct RegionLink {
  RegionId a, b;
  Millis latency = 0;  // one-way
  Mbps bandwidth = 0;
};

enum class ClusterTier { kDedicated, kShared, kElastic };
enum class BackendKind { kSim, kEmulated, kLocal, kSlurm };

std::string_view ClusterTierName(ClusterTier t);
std::optional<ClusterTier> ParseClusterTier(std::string_view s);
std::string_view BackendKindName(BackendKind b);
std::optional<BackendKind> ParseBackendKind(std::string_view s);

// Bandwidth available to one node's traffic at each level of the cluster's network tree.
// A gang spread over a level communicates at that level's bandwidth.
struct Interconnect {
  std::string fabric = "ethernet";  // infiniband | roce | ethernet | hccs ...
  Mbps island_bandwidth = 0;        // inside an NVLink/HCCS island (0: no island fabric)
  Mbps node_bandwidth = 0;          // between islands of one node (PCIe)
  Mbps leaf_bandwidth = 0;          // node NIC into its leaf switch
  Mbps spine_bandwidth = 0;         // across leaves under one spine (after oversubscription)
  Mbps core_bandwidth = 0;          // across spines
};

// A device instance, as declared. Runtime state (free share, health) lives in the scheduler.
struct Device {
  DeviceModelId model;
  int32_t island = 0;  // island index within its node
};

struct Node {
  std::string name;
  ClusterId cluster;
  Milli cpu = 0;
  MiB memory = 0;
  std::map<std::string, std::string> labels;
  std::vector<Device> devices;
  int32_t spine = 0;  // cluster-local spine index
  int32_t leaf = 0;   // cluster-local leaf index (unique across spines)
  bool cordoned = false;
  std::string group;  // the node group it was declared in, "" for single nodes
};

// The compact declaration of many identical nodes. Expanded into Fleet::nodes.
struct NodeGroup {
  std::string name;
  int32_t count = 0;
  Milli cpu = 0;
  MiB memory = 0;
  std::map<std::string, std::string> labels;
  std::optional<DeviceModelId> device_model;
  int32_t devices_per_node = 0;
  int32_t devices_per_island = 0;  // 0 = the whole node is one island
  int32_t nodes_per_leaf = 0;      // 0 = every node of the group under one leaf
  int32_t leaves_per_spine = 0;    // 0 = every leaf of the group under one spine
};

struct Cluster {
  std::string name;
  RegionId region;
  ClusterTier tier = ClusterTier::kDedicated;
  BackendKind backend = BackendKind::kSim;
  std::map<std::string, std::string> backend_options;  // e.g. slurm conf path
  Interconnect interconnect;
  // Price per device-hour in milli currency units, by device model; CPU-only nodes are
  // priced per core-hour under the key "cpu".
  std::map<DeviceModelId, Milli> price_per_device_hour;
  std::optional<Milli> price_per_cpu_core_hour;
  std::vector<NodeGroup> node_groups;
  NodeId first_node{0};  // nodes of a cluster are contiguous in Fleet::nodes
  uint32_t node_count = 0;
  std::map<std::string, std::string> labels;
  std::optional<RunAs> run_as;  // the host user of tasks whose tenant names none
};

struct Dataset {
  std::string name;
  RegionId region;  // where the primary copy lives
  MiB size = 0;
  std::vector<RegionId> residency;  // regions it may be processed in; empty = anywhere
  std::vector<RegionId> replicas;   // further regions holding a full copy
};

}  // namespace tessera
