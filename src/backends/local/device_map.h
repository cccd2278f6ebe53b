// An agent started with `--devices 4,5,6,7` answers for those host GPUs only: the node's
// devices 0..3 (as the fleet declares them and the scheduler assigns them) are host GPUs 4..7.
// Assignments are translated to host indices before a task starts; the host's GPUs are
// reported under the node's indices.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "backends/local/inventory.h"
#include "common/status.h"

namespace tessera {

// "4,5,6,7" as indices (distinct, non-negative); errors say which entry is wrong.
Result<std::vector<int>> ParseDeviceList(std::string_view text);

// The device variables of a task's environment (CUDA_/ASCEND_RT_/HIP_/TESSERA_VISIBLE_DEVICES)
// with the node's indices replaced by the host's; an index beyond the list stays as it is.
void MapToHost(const std::vector<int>& host, std::map<std::string, std::string>& env);

// The host's GPUs that are the node's, each with its node index.
std::vector<GpuSample> NodeGpus(const std::vector<int>& host, const std::vector<GpuSample>& gpus);

}  // namespace tessera
