#include "store/durable_store.h"

#include <nlohmann/json.hpp>

namespace tessera {

std::shared_future<Status> ReadyStatus(Status s) {
  std::promise<Status> done;
  done.set_value(std::move(s));
  return done.get_future().share();
}

void AddCostRow(std::vector<CostTotal>& totals, std::string_view tenant, std::string_view cluster,
                std::string_view model, Micro amount) {
  if (!totals.empty() && totals.back().tenant == tenant && totals.back().cluster == cluster &&
      totals.back().model == model) {
    totals.back().amount += amount;
  } else {
    totals.push_back({std::string(tenant), std::string(cluster), std::string(model), amount});
  }
}

std::string DecisionDetail(const DecisionParts& parts) {
  nlohmann::ordered_json detail = nlohmann::ordered_json::object();
  if (!parts.nodes.empty()) detail["nodes"] = parts.nodes;
  if (!parts.where.empty()) detail["where"] = parts.where;
  if (!parts.policy.empty()) detail["policy"] = parts.policy;
  if (!parts.placement.empty()) detail["placement"] = parts.placement;
  return detail.dump();
}

}  // namespace tessera
