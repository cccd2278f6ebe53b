// Fuzzes the simulator's workload importers on a fixed small fleet: the first byte picks the
// format (gavel, jsonl, sia, pai2020, philly), the rest is the file. Any input must give a workload
// or an error with a message, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/loader.h"
#include "sim/workload.h"

namespace {

const char* const kFleet = R"(deviceModels:
  - {name: V100, kind: gpu, vendor: nvidia, memory: 16Gi}
  - {name: K80, kind: gpu, vendor: nvidia, memory: 12Gi}
regions:
  - name: r
clusters:
  - name: c
    region: r
    tier: dedicated
    nodeGroups:
      - {name: v, count: 2, cpu: 32, memory: 64Gi, devices: {model: V100, count: 4}}
      - {name: k, count: 2, cpu: 32, memory: 64Gi, devices: {model: K80, count: 4}}
tenants:
  - name: t
)";

const char* const kThroughputs =
    "job_type,scale_factor,v100_steps_per_s,p100_steps_per_s,k80_steps_per_s\n"
    "\"ResNet-18 (batch size 32)\",1,10.0,6.0,2.0\n"
    "\"ResNet-18 (batch size 32)\",2,18.0,11.0,0.0\n";

const tessera::Spec& Fleet() {
  static const tessera::Spec spec = [] {
    tessera::LoadResult r = tessera::LoadSpecTexts({{"fleet.yaml", kFleet}});
    if (!r.spec) std::abort();
    return *r.spec;
  }();
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const tessera::Spec& spec = Fleet();
  tessera::ImportOptions options;
  tessera::Result<tessera::Workload> w = [&]() -> tessera::Result<tessera::Workload> {
    switch (data[0] % 5) {
      case 0:
        return tessera::ParseGavelTrace(spec, "fuzz.trace", text, kThroughputs, options);
      case 1:
        return tessera::ParseJsonlJobs(spec, "fuzz.jsonl", text, options);
      case 2:
        return tessera::ParseSiaWorkload(spec, "fuzz.csv", text, options);
      case 3:
        return tessera::ParsePaiTasks(spec, "fuzz.csv", text, options);
      default:
        return tessera::ParsePhillyJobs(spec, "fuzz.csv", text, options);
    }
  }();
  if (!w.ok() && w.status().message().empty()) std::abort();
  return 0;
}
