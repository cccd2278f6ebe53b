// A fleet of two device models for the heterogeneity tests: one cluster `cluster` on
// `backend`, its node CLUSTER-slow-0000 with one K80 and CLUSTER-fast-0000 with one V100, a
// tenant "lab", under the hetero policy.
#pragma once

#include <string>

namespace tessera::testing {

inline std::string TwoSpeedFleet(const std::string& cluster, const std::string& backend) {
  return R"(deviceModels:
  - {name: K80, kind: gpu, vendor: nvidia, memory: 12Gi}
  - {name: V100, kind: gpu, vendor: nvidia, memory: 32Gi}
regions:
  - name: lab
clusters:
  - name: )" +
         cluster + R"(
    region: lab
    tier: dedicated
    backend: )" +
         backend + R"(
    nodeGroups:
      - {name: slow, count: 1, cpu: 8, memory: 32Gi, devices: {model: K80, count: 1}}
      - {name: fast, count: 1, cpu: 8, memory: 32Gi, devices: {model: V100, count: 1}}
tenants:
  - name: lab
scheduler: {ordering: hetero}
)";
}

}  // namespace tessera::testing
