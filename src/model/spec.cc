#include "model/spec.h"

namespace tessera {
namespace {

template <class IdT, class T, class Key>
std::optional<IdT> FindByName(const std::vector<T>& items, std::string_view name, Key key) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (key(items[i]) == name) return IdT(static_cast<typename IdT::Value>(i));
  }
  return std::nullopt;
}

}  // namespace

std::optional<DeviceModelId> Spec::FindModel(std::string_view name) const {
  return FindByName<DeviceModelId>(
      device_models, name, [](const DeviceModel& m) -> const std::string& { return m.name; });
}
std::optional<RegionId> Spec::FindRegion(std::string_view name) const {
  return FindByName<RegionId>(regions, name,
                              [](const Region& r) -> const std::string& { return r.name; });
}
std::optional<ClusterId> Spec::FindCluster(std::string_view name) const {
  return FindByName<ClusterId>(clusters, name,
                               [](const Cluster& c) -> const std::string& { return c.name; });
}
std::optional<DatasetId> Spec::FindDataset(std::string_view name) const {
  return FindByName<DatasetId>(datasets, name,
                               [](const Dataset& d) -> const std::string& { return d.name; });
}
std::optional<TenantId> Spec::FindTenant(std::string_view path) const {
  return FindByName<TenantId>(tenants, path,
                              [](const Tenant& t) -> const std::string& { return t.path; });
}

const PriorityClass* Spec::FindPriority(std::string_view name) const {
  for (const PriorityClass& p : priority_classes) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<PriorityClass> Spec::DefaultPriorityClasses() {
  return {{"critical", 1000, false, std::nullopt},
          {"high", 800, false, std::nullopt},
          {"normal", 500, false, std::nullopt},
          {"low", 200, true, std::nullopt},
          {"best-effort", 0, true, std::nullopt}};
}

const RunAs* Spec::RunAsFor(TenantId tenant, ClusterId cluster) const {
  for (std::optional<TenantId> t = tenant; t && t->value() < tenants.size();
       t = tenants[t->value()].parent) {
    if (tenants[t->value()].run_as) return &*tenants[t->value()].run_as;
  }
  if (cluster.value() < clusters.size() && clusters[cluster.value()].run_as) {
    return &*clusters[cluster.value()].run_as;
  }
  return nullptr;
}

}  // namespace tessera
