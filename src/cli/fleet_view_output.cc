#include "cli/fleet_view_output.h"

#include <fmt/format.h>

#include "cli/output.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

double Units(Milli v) {
  return static_cast<double>(v) / 1000.0;
}

json ByModel(const Spec& s, const std::map<DeviceModelId, int64_t>& m) {
  json j = json::object();
  for (const auto& [model, n] : m)
    j[s.model(model).name] = n;
  return j;
}

std::string ModelsCell(const Spec& s, const std::map<DeviceModelId, int64_t>& m) {
  std::string out;
  for (const auto& [model, n] : m) {
    if (!out.empty()) out += " ";
    out += s.model(model).name + "x" + std::to_string(n);
  }
  return out.empty() ? "-" : out;
}

std::string Money(Milli v) {
  return fmt::format("{:.2f}", Units(v));
}

}  // namespace

json FleetViewJson(const Spec& s, const FleetView& v) {
  json doc;
  const FleetTotals& t = v.totals;
  json kinds = json::object();
  for (const auto& [kind, n] : t.devices_by_kind)
    kinds[std::string(DeviceKindName(kind))] = n;
  doc["totals"] = {{"regions", t.regions},
                   {"clusters", t.clusters},
                   {"nodes", t.nodes},
                   {"devices", t.devices},
                   {"devicesByModel", ByModel(s, t.devices_by_model)},
                   {"devicesByKind", kinds},
                   {"cpu", Units(t.cpu)},
                   {"memoryMiB", t.memory},
                   {"hourlyCost", Units(t.hourly_cost)},
                   {"currency", s.currency}};
  json regions = json::array();
  for (const RegionView& r : v.regions) {
    json names = json::array();
    for (ClusterId c : r.clusters)
      names.push_back(s.cluster(c).name);
    regions.push_back({{"name", s.region(r.id).name},
                       {"clusters", names},
                       {"nodes", r.nodes},
                       {"devices", r.devices},
                       {"devicesByModel", ByModel(s, r.devices_by_model)}});
  }
  doc["regions"] = regions;
  json clusters = json::array();
  for (const ClusterView& c : v.clusters) {
    const Cluster& cl = s.cluster(c.id);
    json models = json::array();
    std::map<DeviceModelId, int64_t> by_model;
    for (const ModelProfile& p : c.models) {
      by_model[p.model] = p.devices;
      json gang = json::object();
      for (int l = 0; l < kCapacityLevels; ++l) {
        gang[std::string(TopologyLevelName(static_cast<TopologyLevel>(l)))] =
            p.largest_gang[static_cast<size_t>(l)];
      }
      json m = {{"model", s.model(p.model).name},
                {"kind", std::string(DeviceKindName(s.model(p.model).kind))},
                {"devices", p.devices},
                {"freeDevices", p.free_devices},
                {"largestGang", gang},
                {"fragmentation", p.fragmentation}};
      m["pricePerHour"] = p.price_per_hour ? json(Units(*p.price_per_hour)) : json(nullptr);
      models.push_back(m);
    }
    json datasets = json::array();
    for (const DatasetDistance& d : c.datasets) {
      json dj = {{"dataset", s.datasets[d.dataset.value()].name},
                 {"allowed", d.allowed},
                 {"local", d.local}};
      dj["from"] = d.from ? json(s.region(*d.from).name) : json(nullptr);
      dj["latencyMs"] = d.latency ? json(*d.latency) : json(nullptr);
      dj["transferSeconds"] =
          d.transfer_time ? json(static_cast<double>(*d.transfer_time) / 1000.0) : json(nullptr);
      datasets.push_back(dj);
    }
    clusters.push_back(
        {{"name", cl.name},
         {"region", cl.region.valid() ? s.region(cl.region).name : ""},
         {"tier", std::string(ClusterTierName(cl.tier))},
         {"backend", std::string(BackendKindName(cl.backend))},
         {"fabric", cl.interconnect.fabric},
         {"nodes", c.nodes},
         {"cpuOnlyNodes", c.cpu_nodes},
         {"cpu", Units(c.cpu)},
         {"memoryMiB", c.memory},
         {"devices", c.devices},
         {"devicesByModel", ByModel(s, by_model)},
         {"models", models},
         {"hourlyCost", Units(c.hourly_cost)},
         {"largeTraining", {{"suitable", c.suits_large_training}, {"note", c.training_note}}},
         {"datasets", datasets}});
  }
  doc["clusters"] = clusters;
  json inference = json::array();
  for (const UserRegionServing& u : v.inference) {
    json served = json::array();
    for (const auto& [r, lat] : u.served_by) {
      served.push_back({{"region", s.region(r).name}, {"latencyMs", lat}});
    }
    inference.push_back({{"userRegion", s.region(u.user_region).name}, {"servedBy", served}});
  }
  doc["inference"] = inference;
  json latency = json::object();
  for (size_t a = 0; a < v.latency.size(); ++a) {
    json row = json::object();
    for (size_t b = 0; b < v.latency[a].size(); ++b) {
      row[s.regions[b].name] = v.latency[a][b] ? json(*v.latency[a][b]) : json(nullptr);
    }
    latency[s.regions[a].name] = row;
  }
  doc["latencyMs"] = latency;
  return doc;
}

void WriteFleetViewTable(const Spec& s, const FleetView& v, std::ostream& out) {
  const FleetTotals& t = v.totals;
  out << fmt::format("Fleet: {} regions, {} clusters, {} nodes, {} devices, {} CPU cores, {}\n",
                     t.regions, t.clusters, t.nodes, t.devices, FormatMilli(t.cpu),
                     FormatMemory(t.memory));
  out << "Devices: " << ModelsCell(s, t.devices_by_model) << "\n";
  out << fmt::format("Cost of the whole fleet: {} {}/hour\n\n", Money(t.hourly_cost), s.currency);

  for (const RegionView& r : v.regions) {
    out << fmt::format("Region {}: {} clusters, {} nodes, {} devices\n", s.region(r.id).name,
                       r.clusters.size(), r.nodes, r.devices);
    if (r.clusters.empty()) {
      out << "\n";
      continue;
    }
    Table table(
        {"CLUSTER", "TIER", "BACKEND", "NODES", "CPU-ONLY", "DEVICES", "BY MODEL", "COST/H"});
    for (ClusterId cid : r.clusters) {
      const ClusterView& c = v.clusters[cid.value()];
      const Cluster& cl = s.cluster(cid);
      std::map<DeviceModelId, int64_t> by_model;
      for (const ModelProfile& p : c.models)
        by_model[p.model] = p.devices;
      table.Add({cl.name, std::string(ClusterTierName(cl.tier)),
                 std::string(BackendKindName(cl.backend)), std::to_string(c.nodes),
                 std::to_string(c.cpu_nodes), std::to_string(c.devices), ModelsCell(s, by_model),
                 Money(c.hourly_cost)});
    }
    table.Write(out, "  ");
    out << "\n";
  }

  out << "Largest gang per cluster and model (whole free devices within one ...):\n";
  Table gangs({"CLUSTER", "MODEL", "DEVICES", "ISLAND", "NODE", "LEAF", "SPINE", "CLUSTER", "FRAG",
               "PRICE/H"});
  for (const ClusterView& c : v.clusters) {
    for (const ModelProfile& p : c.models) {
      gangs.Add({s.cluster(c.id).name, s.model(p.model).name, std::to_string(p.devices),
                 std::to_string(p.largest_gang[0]), std::to_string(p.largest_gang[1]),
                 std::to_string(p.largest_gang[2]), std::to_string(p.largest_gang[3]),
                 std::to_string(p.largest_gang[4]), fmt::format("{:.2f}", p.fragmentation),
                 p.price_per_hour ? Money(*p.price_per_hour) : "-"});
    }
  }
  gangs.Write(out, "  ");
  out << "\nLarge training:\n";
  for (const ClusterView& c : v.clusters) {
    out << fmt::format("  {:<24} {}  {}\n", s.cluster(c.id).name,
                       c.suits_large_training ? "suitable    " : "not suitable", c.training_note);
  }
  out << "\nInference: regions that can serve users of each region (one-way latency):\n";
  for (const UserRegionServing& u : v.inference) {
    std::string served;
    for (const auto& [r, lat] : u.served_by) {
      served += (served.empty() ? "" : ", ") + s.region(r).name + " " + std::to_string(lat) + "ms";
    }
    out << fmt::format("  {:<24} {}\n", s.region(u.user_region).name,
                       served.empty() ? "(none within reach)" : served);
  }
  if (!s.datasets.empty()) {
    out << "\nDatasets: distance from each cluster to the nearest copy:\n";
    Table ds({"CLUSTER", "DATASET", "ALLOWED", "FROM", "LATENCY", "TRANSFER"});
    for (const ClusterView& c : v.clusters) {
      for (const DatasetDistance& d : c.datasets) {
        ds.Add({s.cluster(c.id).name, s.datasets[d.dataset.value()].name,
                d.allowed ? "yes" : "no (residency)", d.from ? s.region(*d.from).name : "-",
                d.latency ? std::to_string(*d.latency) + "ms" : "unreachable",
                d.transfer_time
                    ? (d.local ? "local" : FormatDuration(*d.transfer_time / 1000 * 1000))
                    : "-"});
      }
    }
    ds.Write(out, "  ");
  }
}

}  // namespace tessera::cli
