// The chart of `tessera sim fgd`: a self-contained chart.html with the median curves per
// policy (allocation, fragmented GPUs, fragmentation rate against arrived demand), drawn by
// Chart.js from Debian's libjs-chart.js, inlined so the page works offline.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "sim/fgd_experiment.h"

namespace tessera::cli {

// Where Chart.js is read from: $TESSERA_CHARTJS, else Debian's path.
std::string ChartJsPath();

Status WriteFgdChart(const std::string& path, const std::string& workload,
                     const std::vector<std::string>& policies, const std::vector<FgdRun>& runs);

}  // namespace tessera::cli
