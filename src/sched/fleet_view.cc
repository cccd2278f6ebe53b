#include "sched/fleet_view.h"

#include <algorithm>
#include <limits>

namespace tessera {
namespace {

constexpr Mbps kLocalBandwidth = std::numeric_limits<Mbps>::max();

bool IsFree(const FreeShares* free, size_t node, size_t device) {
  return free == nullptr || (*free)[node][device] == 1000;
}

ModelProfile ProfileModel(const Spec& s, const Cluster& c, ClusterId cid, DeviceModelId m,
                          const FreeShares* free) {
  ModelProfile p;
  p.model = m;
  int64_t largest_node = 0;
  for (uint32_t k = 0; k < c.node_count; ++k) {
    size_t ni = c.first_node.value() + k;
    const Node& n = s.nodes[ni];
    int64_t here = 0;
    for (size_t d = 0; d < n.devices.size(); ++d) {
      if (n.devices[d].model != m) continue;
      ++here;
      ++p.devices;
      if (IsFree(free, ni, d)) ++p.free_devices;
    }
    largest_node = std::max(largest_node, here);
  }
  p.largest_gang = ClusterCapacity(s, cid, [&](const Node& n, const Device& d) {
    if (d.model != m || n.cordoned) return false;
    if (!free) return true;
    size_t ni = static_cast<size_t>(&n - s.nodes.data());
    size_t di = static_cast<size_t>(&d - n.devices.data());
    return IsFree(free, ni, di);
  });
  // Fragmentation: free devices stranded on nodes that cannot host a full-node task.
  if (p.free_devices > 0) {
    int64_t usable = 0;
    for (uint32_t k = 0; k < c.node_count; ++k) {
      size_t ni = c.first_node.value() + k;
      const Node& n = s.nodes[ni];
      int64_t free_here = 0;
      for (size_t d = 0; d < n.devices.size(); ++d) {
        if (n.devices[d].model == m && IsFree(free, ni, d)) ++free_here;
      }
      if (free_here == largest_node) usable += free_here;
    }
    p.fragmentation = 1.0 - static_cast<double>(usable) / static_cast<double>(p.free_devices);
  }
  auto price = c.price_per_device_hour.find(m);
  if (price != c.price_per_device_hour.end()) p.price_per_hour = price->second;
  return p;
}

}  // namespace

RegionPaths ComputeRegionPaths(const Spec& s) {
  size_t n = s.regions.size();
  RegionPaths p;
  p.latency.assign(n, std::vector<std::optional<Millis>>(n));
  p.bandwidth.assign(n, std::vector<Mbps>(n, 0));
  for (size_t i = 0; i < n; ++i) {
    p.latency[i][i] = 0;
    p.bandwidth[i][i] = kLocalBandwidth;
  }
  for (const RegionLink& l : s.links) {
    if (!l.a.valid() || !l.b.valid() || l.a == l.b) continue;
    size_t a = l.a.value(), b = l.b.value();
    if (!p.latency[a][b] || l.latency < *p.latency[a][b]) {
      p.latency[a][b] = p.latency[b][a] = l.latency;
      p.bandwidth[a][b] = p.bandwidth[b][a] = l.bandwidth;
    }
  }
  // Floyd-Warshall on latency; the bandwidth follows the chosen path's bottleneck.
  for (size_t k = 0; k < n; ++k) {
    for (size_t i = 0; i < n; ++i) {
      if (!p.latency[i][k]) continue;
      for (size_t j = 0; j < n; ++j) {
        if (!p.latency[k][j]) continue;
        Millis via = *p.latency[i][k] + *p.latency[k][j];
        if (!p.latency[i][j] || via < *p.latency[i][j]) {
          p.latency[i][j] = via;
          p.bandwidth[i][j] = std::min(p.bandwidth[i][k], p.bandwidth[k][j]);
        }
      }
    }
  }
  return p;
}

std::optional<DatasetCopy> NearestCopy(const RegionPaths& paths, const Dataset& d, RegionId to) {
  if (!to.valid() || !d.region.valid()) return std::nullopt;
  std::optional<DatasetCopy> best;
  std::vector<RegionId> copies = {d.region};
  copies.insert(copies.end(), d.replicas.begin(), d.replicas.end());
  for (RegionId from : copies) {
    if (!from.valid()) continue;
    const auto& lat = paths.latency[from.value()][to.value()];
    if (!lat || (best && *lat >= best->latency)) continue;
    Mbps b = paths.bandwidth[from.value()][to.value()];
    // size in MiB -> megabits: x 8 x 1.048576; ms = megabits / Mbps x 1000.
    Millis transfer = from == to ? 0
                                 : static_cast<Millis>(static_cast<double>(d.size) * 8.388608 /
                                                       static_cast<double>(b) * 1000.0);
    best = DatasetCopy{from, *lat, transfer};
  }
  return best;
}

namespace {

// Whether the cluster suits large training (a big gang under one leaf switch on a fast
// fabric), and why, into `cv`.
void JudgeLargeTraining(const Spec& s, const Cluster& c, const FleetViewOptions& options,
                        ClusterView& cv) {
  const ModelProfile* best = nullptr;
  for (const ModelProfile& p : cv.models) {
    if (s.model(p.model).kind == DeviceKind::kCpu) continue;
    if (p.largest_gang[0] < options.large_training_min_island) continue;
    if (!best || p.largest_gang[2] > best->largest_gang[2]) best = &p;
  }
  Mbps bw = c.interconnect.leaf_bandwidth;
  if (!best) {
    cv.training_note = "no accelerators with islands of " +
                       std::to_string(options.large_training_min_island) + " or more";
  } else if (best->largest_gang[2] < options.large_training_min_leaf_gang) {
    cv.training_note = "at most " + std::to_string(best->largest_gang[2]) + " " +
                       s.model(best->model).name + " under one leaf switch";
  } else if (bw < options.large_training_min_bandwidth) {
    cv.training_note = "leaf fabric " + (bw ? FormatBandwidth(bw) : std::string("undeclared")) +
                       " is below " + FormatBandwidth(options.large_training_min_bandwidth);
  } else {
    cv.suits_large_training = true;
    cv.training_note = std::to_string(best->largest_gang[2]) + " " + s.model(best->model).name +
                       " under one leaf switch on " + FormatBandwidth(bw) + " " +
                       c.interconnect.fabric;
  }
}

// The cluster's distance to each dataset's nearest copy.
std::vector<DatasetDistance> DatasetDistances(const Spec& s, const Cluster& c,
                                              const RegionPaths& paths) {
  std::vector<DatasetDistance> out;
  for (size_t di = 0; di < s.datasets.size(); ++di) {
    const Dataset& d = s.datasets[di];
    DatasetDistance dd;
    dd.dataset = DatasetId(static_cast<uint32_t>(di));
    if (!c.region.valid() || !d.region.valid()) continue;
    dd.allowed = d.residency.empty() ||
                 std::find(d.residency.begin(), d.residency.end(), c.region) != d.residency.end();
    if (std::optional<DatasetCopy> near = NearestCopy(paths, d, c.region)) {
      dd.from = near->from;
      dd.latency = near->latency;
      dd.local = near->from == c.region;
      dd.transfer_time = near->transfer_time;
    }
    out.push_back(dd);
  }
  return out;
}

// Inference: for each region where users are, the regions with accelerators close enough.
std::vector<UserRegionServing> ServingRegions(const Spec& s, const FleetView& v,
                                              const RegionPaths& paths,
                                              const FleetViewOptions& options) {
  std::vector<UserRegionServing> out;
  for (size_t u = 0; u < s.regions.size(); ++u) {
    UserRegionServing us;
    us.user_region = RegionId(static_cast<uint32_t>(u));
    for (size_t r = 0; r < s.regions.size(); ++r) {
      bool has_accel = false;
      for (const auto& [m, n] : v.regions[r].devices_by_model) {
        has_accel |= n > 0 && s.model(m).kind != DeviceKind::kCpu;
      }
      const auto& lat = paths.latency[u][r];
      if (has_accel && lat && *lat <= options.inference_max_latency) {
        us.served_by.emplace_back(RegionId(static_cast<uint32_t>(r)), *lat);
      }
    }
    std::stable_sort(us.served_by.begin(), us.served_by.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    out.push_back(std::move(us));
  }
  return out;
}

}  // namespace

FleetView ComputeFleetView(const Spec& s, const FreeShares* free, const FleetViewOptions& options) {
  FleetView v;
  RegionPaths paths = ComputeRegionPaths(s);
  v.latency = paths.latency;
  v.totals.regions = static_cast<int64_t>(s.regions.size());
  v.totals.clusters = static_cast<int64_t>(s.clusters.size());
  for (size_t r = 0; r < s.regions.size(); ++r) {
    v.regions.push_back(RegionView{RegionId(static_cast<uint32_t>(r)), {}, 0, 0, {}});
  }
  for (size_t ci = 0; ci < s.clusters.size(); ++ci) {
    const Cluster& c = s.clusters[ci];
    ClusterId cid(static_cast<uint32_t>(ci));
    ClusterView cv;
    cv.id = cid;
    std::map<DeviceModelId, int64_t> present;
    for (uint32_t k = 0; k < c.node_count; ++k) {
      const Node& n = s.nodes[c.first_node.value() + k];
      ++cv.nodes;
      cv.cpu += n.cpu;
      cv.memory += n.memory;
      cv.devices += static_cast<int64_t>(n.devices.size());
      if (n.devices.empty()) ++cv.cpu_nodes;
      for (const Device& d : n.devices)
        ++present[d.model];
    }
    for (const auto& [m, count] : present) {
      ModelProfile p = ProfileModel(s, c, cid, m, free);
      if (p.price_per_hour) cv.hourly_cost += *p.price_per_hour * p.devices;
      cv.models.push_back(p);
    }
    if (c.price_per_cpu_core_hour) {
      // Cores of CPU-only nodes are priced per core-hour.
      for (uint32_t k = 0; k < c.node_count; ++k) {
        const Node& n = s.nodes[c.first_node.value() + k];
        if (n.devices.empty()) cv.hourly_cost += *c.price_per_cpu_core_hour * n.cpu / 1000;
      }
    }
    JudgeLargeTraining(s, c, options, cv);
    cv.datasets = DatasetDistances(s, c, paths);
    // Roll up.
    FleetTotals& t = v.totals;
    t.nodes += cv.nodes;
    t.devices += cv.devices;
    t.cpu += cv.cpu;
    t.memory += cv.memory;
    t.hourly_cost += cv.hourly_cost;
    for (const ModelProfile& p : cv.models) {
      t.devices_by_model[p.model] += p.devices;
      t.devices_by_kind[s.model(p.model).kind] += p.devices;
    }
    if (c.region.valid()) {
      RegionView& rv = v.regions[c.region.value()];
      rv.clusters.push_back(cid);
      rv.nodes += cv.nodes;
      rv.devices += cv.devices;
      for (const ModelProfile& p : cv.models)
        rv.devices_by_model[p.model] += p.devices;
    }
    v.clusters.push_back(std::move(cv));
  }
  v.inference = ServingRegions(s, v, paths, options);
  return v;
}

}  // namespace tessera
