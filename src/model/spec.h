// Spec: everything a platform team declares — the fleet, tenants, policies, jobs and
// services — as loaded from one or more YAML files. Immutable once loaded; ids index the
// vectors below.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/catalog.h"
#include "model/fleet.h"
#include "model/job.h"
#include "model/policy.h"
#include "model/scheduler.h"
#include "model/tenant.h"

namespace tessera {

struct Spec {
  std::string currency = "USD";
  std::vector<DeviceModel> device_models;
  std::vector<Region> regions;
  std::vector<RegionLink> links;
  std::vector<Cluster> clusters;
  std::vector<Node> nodes;
  std::vector<Dataset> datasets;
  std::vector<Tenant> tenants;
  std::vector<PriorityClass> priority_classes;
  std::vector<PolicyRule> policies;
  SchedulerSettings scheduler;
  std::vector<Job> jobs;
  std::vector<Service> services;

  const DeviceModel& model(DeviceModelId id) const { return device_models[id.value()]; }
  const Region& region(RegionId id) const { return regions[id.value()]; }
  const Cluster& cluster(ClusterId id) const { return clusters[id.value()]; }
  const Node& node(NodeId id) const { return nodes[id.value()]; }
  const Tenant& tenant(TenantId id) const { return tenants[id.value()]; }

  std::optional<DeviceModelId> FindModel(std::string_view name) const;
  std::optional<RegionId> FindRegion(std::string_view name) const;
  std::optional<ClusterId> FindCluster(std::string_view name) const;
  std::optional<DatasetId> FindDataset(std::string_view name) const;
  std::optional<TenantId> FindTenant(std::string_view path) const;
  const PriorityClass* FindPriority(std::string_view name) const;
  // The host user a task of the tenant runs as on the cluster: the tenant's runAs, else its
  // nearest ancestor's, else the cluster's; null when none names one.
  const RunAs* RunAsFor(TenantId tenant, ClusterId cluster) const;

  // The priority classes that exist when a spec declares none.
  static std::vector<PriorityClass> DefaultPriorityClasses();
};

}  // namespace tessera
