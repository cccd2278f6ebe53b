// The unified resource view: totals and per region -> cluster summaries computed from a Spec
// (and, once the scheduler runs, from its live state): capacity by model, the largest gang
// each cluster can host per model and topology level, a fragmentation index, suitability for
// large training and for serving users in each region, and the distance to each dataset.
//
// Pure and deterministic: everything is ordered by declaration order or by name.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/capacity.h"
#include "model/spec.h"

namespace tessera {

// Free milli-share per device of each node, aligned with Spec::nodes[i].devices. Absent = all
// devices free (the declared fleet).
using FreeShares = std::vector<std::vector<Milli>>;

struct ModelProfile {
  DeviceModelId model;
  int64_t devices = 0;
  int64_t free_devices = 0;  // whole devices with nothing allocated
  // The most whole free devices one gang can get within one island, node, leaf, spine,
  // cluster (indexed by TopologyLevel).
  LevelCapacity largest_gang{};
  // Share of the free devices that cannot serve a full-node task of this model (they sit on
  // nodes with fewer free devices than the cluster's largest node of this model holds).
  // 0 = perfectly packed or empty, 1 = all free capacity is scattered.
  double fragmentation = 0;
  std::optional<Milli> price_per_hour;  // milli currency per device-hour
};

struct DatasetDistance {
  DatasetId dataset;
  bool allowed = true;                  // residency permits processing in this cluster's region
  bool local = false;                   // a copy is in the cluster's region
  std::optional<RegionId> from;         // the nearest copy
  std::optional<Millis> latency;        // one-way, to the nearest copy
  std::optional<Millis> transfer_time;  // size / bottleneck bandwidth; 0 when local
};

struct ClusterView {
  ClusterId id;
  int64_t nodes = 0;
  int64_t cpu_nodes = 0;  // nodes without devices
  Milli cpu = 0;
  MiB memory = 0;
  int64_t devices = 0;
  std::vector<ModelProfile> models;  // in catalog order
  Milli hourly_cost = 0;             // all devices (and priced CPU cores) for one hour
  bool suits_large_training = false;
  std::string training_note;  // why (or why not)
  std::vector<DatasetDistance> datasets;
};

struct UserRegionServing {
  RegionId user_region;
  // Regions with inference-capable devices, nearest first, with their one-way latency.
  std::vector<std::pair<RegionId, Millis>> served_by;
};

struct RegionView {
  RegionId id;
  std::vector<ClusterId> clusters;
  int64_t nodes = 0;
  int64_t devices = 0;
  std::map<DeviceModelId, int64_t> devices_by_model;
};

struct FleetTotals {
  int64_t regions = 0;
  int64_t clusters = 0;
  int64_t nodes = 0;
  int64_t devices = 0;
  Milli cpu = 0;
  MiB memory = 0;
  std::map<DeviceModelId, int64_t> devices_by_model;
  std::map<DeviceKind, int64_t> devices_by_kind;
  Milli hourly_cost = 0;
};

struct FleetView {
  FleetTotals totals;
  std::vector<RegionView> regions;
  std::vector<ClusterView> clusters;
  std::vector<UserRegionServing> inference;
  // One-way latency between regions over the links (shortest path); nullopt = unreachable.
  std::vector<std::vector<std::optional<Millis>>> latency;
};

// Thresholds for the suitability judgements, documented in docs/fleet-view.md.
struct FleetViewOptions {
  int64_t large_training_min_leaf_gang = 64;   // devices under one leaf switch
  int64_t large_training_min_island = 4;       // devices per NVLink/HCCS island (PCIe: 1)
  Mbps large_training_min_bandwidth = 100000;  // 100 Gbps per node into the leaf
  Millis inference_max_latency = 50;           // one-way, user region -> serving region
};

FleetView ComputeFleetView(const Spec& spec, const FreeShares* free = nullptr,
                           const FleetViewOptions& options = {});

// Shortest one-way latency and the bottleneck bandwidth on that path between all regions.
struct RegionPaths {
  std::vector<std::vector<std::optional<Millis>>> latency;
  std::vector<std::vector<Mbps>> bandwidth;  // 0 where unreachable; "infinite" on the diagonal
};
RegionPaths ComputeRegionPaths(const Spec& spec);

// The copy of a dataset nearest to a region (by latency) and the time to bring it there: its
// size over the path's bottleneck bandwidth, 0 when the copy is in the region. nullopt when no
// copy is reachable.
struct DatasetCopy {
  RegionId from;
  Millis latency = 0;
  Millis transfer_time = 0;
};
std::optional<DatasetCopy> NearestCopy(const RegionPaths& paths, const Dataset& d, RegionId to);

}  // namespace tessera
