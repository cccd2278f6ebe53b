// The chart of `tessera sim fgd`: a self-contained chart.html with, per curve (allocation,
// fragmented GPUs, fragmentation rate against arrived demand), each policy's median over the
// seeds with a band from the lowest to the highest seed, FGD's published median overlaid
// where ../shared/data/fgd-expected has the workload, and a zoomed chart of the 85-130%
// region where the policies part. Drawn by Chart.js (cli/chart_js.h), inlined so the page
// works offline.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/fgd_experiment.h"

namespace tessera::cli {

// A published curve set: the median over its seeds of one policy, per curve name ("allo",
// "frag", "frag_ratio"), 131 points each.
struct PublishedCurves {
  std::string policy;  // as published, e.g. "06-FGD"
  size_t seeds = 0;
  std::map<std::string, std::vector<double>> median;
};

// Reads `policy`'s curves for `workload` from a directory in the shape of fgd-expected
// (analysis_{allo,frag,frag_ratio}_discrete.csv). NotFound when the directory or the
// workload is not there; InvalidArgument for a malformed file.
Result<PublishedCurves> ReadPublishedCurves(const std::string& dir, const std::string& workload,
                                            const std::string& policy = "06-FGD");

struct FgdChartInput {
  std::string workload;
  double tune = 1.3;
  std::string seeds;  // as given, e.g. "42-51"
  size_t seed_count = 0;
  std::vector<std::string> policies;
  const std::vector<FgdRun>* runs = nullptr;
  std::optional<PublishedCurves> published;
  std::string published_note;  // why there is no overlay, when there is none
};

Status WriteFgdChart(const std::string& path, const FgdChartInput& input);

}  // namespace tessera::cli
