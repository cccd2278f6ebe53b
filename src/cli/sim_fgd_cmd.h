// tessera sim fgd: the FGD experiment (docs/placement.md) for one or more policies and seeds.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::cli {

struct SimFgdArgs {
  std::string nodes;               // node list CSV (openb)
  std::string pods;                // pod list CSV (openb)
  std::string policy = "tessera";  // a name, a comma-separated list, or "all"
  std::string seeds = "42-51";
  double tune = 1.3;
  std::string out;         // output directory
  int threads = 0;         // 0 = one per core
  bool placements = true;  // write placements.jsonl
  // fgd-expected-shaped results whose FGD curve the chart overlays; "" = the fgd-expected
  // folder beside the pod list's folder (as in ../shared/data), if it is there.
  std::string published;
  std::string mix;  // "" = the pod list as it is; else sim/pod_mix.h, e.g. "gpushare=0.8"
};

// "42-51", "1,5,9" or a mix -> seeds, each at most once, 10,000 at most; otherwise the reason
// (reversed range, too many, a seed twice, not a number).
Result<std::vector<uint64_t>> ParseSeeds(const std::string& text);

int RunSimFgd(const SimFgdArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
