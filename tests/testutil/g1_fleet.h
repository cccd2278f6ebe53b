// The smallest fleets the tests build on: one model G1 (80Gi), or G1 and G2, in cluster "c" of
// region "r".
#pragma once

#include <string>

namespace tessera::testing {

// `node_groups` are the lines of the cluster's nodeGroups list, `rest` follows the cluster
// (tenants, policies).
// The same with the models' lines given: `models` lists deviceModels entries.
inline std::string FleetOf(const std::string& models, const std::string& node_groups,
                           const std::string& rest) {
  return "deviceModels:\n" + models + R"(regions:
  - name: r
clusters:
  - name: c
    region: r
    tier: dedicated
    nodeGroups:
)" + node_groups +
         rest;
}

inline std::string G1Fleet(const std::string& node_groups, const std::string& rest) {
  return FleetOf("  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}\n", node_groups, rest);
}

// Two models of equal memory, G1 and G2 (80Gi).
inline std::string G1G2Fleet(const std::string& node_groups, const std::string& rest) {
  return FleetOf(
      "  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}\n"
      "  - {name: G2, kind: gpu, vendor: nvidia, memory: 80Gi}\n",
      node_groups, rest);
}

}  // namespace tessera::testing
