// report.html of `tessera sim run`: one self-contained page comparing the policies of a run
// side by side — summary table, JCT and queueing distributions (bars and CDFs), mean JCT per
// class, allocation and pending jobs over time, a per-tenant table — with charts drawn by
// Chart.js (cli/chart_js.h), inlined so that the page works offline.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::cli {

struct PolicyRun {
  std::string policy;
  nlohmann::ordered_json metrics;
  std::string timeseries_csv;
};

Result<std::string> RenderSimReport(const std::string& title, const std::vector<PolicyRun>& runs);

}  // namespace tessera::cli
