#include "testutil/spec_fixture.h"

#include <cstdio>
#include <cstdlib>

namespace tessera::testing {

const char* const kBaseFleet = R"(currency: USD
deviceModels:
  - {name: H800, kind: gpu, vendor: nvidia, memory: 80Gi, labels: [cuda12, fp8]}
  - {name: Ascend910B, kind: npu, vendor: huawei, memory: 64Gi, labels: [cann8]}
regions:
  - name: north
  - name: east
links:
  - {from: north, to: east, latency: 20ms, bandwidth: 100Gbps}
clusters:
  - name: train
    region: north
    tier: dedicated
    interconnect: {fabric: infiniband, leafBandwidth: 400Gbps}
    prices: {H800: 2.5}
    nodeGroups:
      - name: h800
        count: 8
        cpu: 192
        memory: 2Ti
        devices: {model: H800, count: 8, perIsland: 8}
        topology: {nodesPerLeaf: 4}
  - name: npu
    region: east
    tier: shared
    nodeGroups:
      - name: a2
        count: 4
        cpu: 192
        memory: 1Ti
        devices: {model: Ascend910B, count: 8, perIsland: 8}
    nodes:
      - {name: cpu-1, cpu: 64, memory: 256Gi}
      - {name: cpu-2, cpu: 64, memory: 256Gi}
tenants:
  - name: acme
    quotas:
      H800: {guaranteed: 48, limit: 64}
    children:
      - name: research
        quotas:
          H800: {guaranteed: 32, limit: 64}
        children:
          - name: llm
      - name: prod
        quotas:
          H800: {guaranteed: 16, limit: 32}
datasets:
  - {name: corpus, region: north, size: 10Ti}
  - {name: eu-logs, region: east, size: 1Ti, residency: [east]}
)";

LoadResult LoadWithBase(const std::string& text) {
  return LoadSpecTexts({{"base.yaml", kBaseFleet}, {"case.yaml", text}});
}

Spec BaseSpec() {
  LoadResult r = LoadWithBase("");
  if (!r.spec) {
    // The fixture itself is broken: no test that uses it means anything.
    std::fprintf(stderr, "kBaseFleet does not load:\n%s\n", r.diagnostics.ToString().c_str());
    std::abort();
  }
  return *r.spec;
}

}  // namespace tessera::testing
