// The daemon's views (views.h) and job rows as the API's JSON shows them (docs/api.md).
#pragma once

#include <nlohmann/json.hpp>

#include "server/views.h"
#include "store/rows.h"

namespace tessera {

// A job row; `with_spec` adds the submission as it was sent.
nlohmann::ordered_json ToJson(const StoredJob& job, bool with_spec);
nlohmann::ordered_json ToJson(const ClusterSummary& cluster);
nlohmann::ordered_json ToJson(const NodeView& node);
nlohmann::ordered_json ToJson(const TenantView& tenant);
nlohmann::ordered_json ToJson(const ServiceView& service);
nlohmann::ordered_json ToJson(const JobExplanation& explanation);
// A decision log line; `job` named on the fleet-wide log, not on a job's own.
nlohmann::ordered_json ToJson(const StoredDecision& decision, const JobRef* job);
nlohmann::ordered_json ToJson(const DecisionPage& page);
nlohmann::ordered_json ToJson(const SpendingReport& report);
nlohmann::ordered_json ToJson(const ReloadReport& report);
nlohmann::ordered_json ToJson(const TaskLogView& log);

// [ToJson(x) for x in items].
template <typename T>
nlohmann::ordered_json ToJsonArray(const std::vector<T>& items) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const T& x : items)
    out.push_back(ToJson(x));
  return out;
}

}  // namespace tessera
