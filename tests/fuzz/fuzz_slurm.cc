// Fuzzes what the Slurm backend reads from the controller's commands (squeue --json, sinfo):
// any text gives jobs and node states or an error, never a crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "backends/slurm/slurm_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto jobs = tessera::ParseSqueueJson(text);
  if (jobs.ok()) {
    for (const tessera::SlurmJob& j : *jobs) {
      std::optional<tessera::SlurmEnd> outcome = tessera::SlurmOutcome(j);
      if (outcome && outcome->succeeded && !outcome->detail.empty()) std::abort();
      if (j.exit_code < 0 || j.exit_code > 255) std::abort();
      std::optional<tessera::SlurmRunName> name = tessera::ParseSlurmJobName(j.name);
      if (name && (name->job <= 0 || name->run < 0)) std::abort();
    }
  }
  auto nodes = tessera::ParseSinfoNodes(text);
  if (nodes.ok()) {
    for (const auto& [node, n] : *nodes) {
      if (node.empty() || n.state.empty() || n.gpus < -1 || n.cpus < -1) std::abort();
      tessera::SlurmNodeUsable(n.state);
    }
  }
  return 0;
}
