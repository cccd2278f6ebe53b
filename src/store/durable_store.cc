#include "store/durable_store.h"

#include <nlohmann/json.hpp>

namespace tessera {

std::shared_future<Status> ReadyStatus(Status s) {
  std::promise<Status> done;
  done.set_value(std::move(s));
  return done.get_future().share();
}

std::string DecisionDetail(const std::vector<std::string>& nodes, const std::string& where) {
  nlohmann::ordered_json detail = nlohmann::ordered_json::object();
  if (!nodes.empty()) detail["nodes"] = nodes;
  if (!where.empty()) detail["where"] = where;
  return detail.dump();
}

}  // namespace tessera
