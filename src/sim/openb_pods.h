// The openb pod lists of Alibaba's 2023 GPU trace (`openb_pod_list_*.csv`):
// name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
// deletion_time,scheduled_time. Malformed rows are reported with their line numbers, all of
// them (up to a cap) in one error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace tessera {

struct TracePod {
  std::string name;
  Milli cpu = 0;
  MiB memory = 0;
  int32_t num_gpu = 0;
  Milli gpu_milli = 0;            // as in the file (share of one GPU when num_gpu == 1)
  std::vector<std::string> spec;  // acceptable GPU models; empty = any
  std::string qos;
  std::string phase;
  // Seconds in the file, ms here; empty in the file (e.g. a pending pod never scheduled) =
  // nullopt.
  std::optional<TimeMs> creation;
  std::optional<TimeMs> deletion;
  std::optional<TimeMs> scheduled;
};

// With `known_models`, every name in a row's gpu_spec must be one of them (the GPU models of
// the node list the pods are placed on); a name that is not is a malformed row.
Result<std::vector<TracePod>> ReadOpenbPods(const std::string& path,
                                            const std::vector<std::string>* known_models = nullptr);
Result<std::vector<TracePod>> ParseOpenbPods(
    const std::string& name, std::string_view text,
    const std::vector<std::string>* known_models = nullptr);

}  // namespace tessera
