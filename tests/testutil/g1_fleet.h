// The smallest fleet the tests build on: one model G1 (80Gi) in cluster "c" of region "r".
#pragma once

#include <string>

namespace tessera::testing {

// `node_groups` are the lines of the cluster's nodeGroups list, `rest` follows the cluster
// (tenants, policies).
inline std::string G1Fleet(const std::string& node_groups, const std::string& rest) {
  return R"(deviceModels:
  - {name: G1, kind: gpu, vendor: nvidia, memory: 80Gi}
regions:
  - name: r
clusters:
  - name: c
    region: r
    tier: dedicated
    nodeGroups:
)" + node_groups +
         rest;
}

}  // namespace tessera::testing
