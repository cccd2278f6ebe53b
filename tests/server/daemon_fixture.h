// What the daemon's in-process tests share: a small emulated fleet and a job body for it.
#pragma once

#include <string>

namespace tessera::testing {

// One emulated cluster "emu" of two nodes (emu-gpu-0000, emu-gpu-0001) with two L4 each, and
// a tenant "lab" without quotas.
inline const char* const kDaemonFleet = R"(deviceModels:
  - {name: L4, kind: gpu, vendor: nvidia, memory: 24Gi}
regions:
  - name: lab
clusters:
  - name: emu
    region: lab
    tier: dedicated
    backend: emulated
    nodeGroups:
      - {name: gpu, count: 2, cpu: 8, memory: 32Gi, devices: {model: L4, count: 2}}
tenants:
  - name: lab
)";

// A batch job of tenant lab, one CPU task declared to run an hour (the emulated backend's
// timer: it stays running through a test).
inline std::string DaemonJobBody(const std::string& name) {
  return R"({"name":")" + name +
         R"(","class":"batch","tenant":"lab","runtime":"1h",)"
         R"("taskGroups":[{"name":"w","count":1,"cpu":1,"memory":"1Gi"}]})";
}

}  // namespace tessera::testing
