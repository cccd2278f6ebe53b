// A run's placement as the API shows it, from the form the store keeps (Daemon::PlacementJson).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace tessera {

// The stored placement ([{"node", "cpu", "memory", "kind", "cluster", "model", "devices"}]) with
// its task kinds named: the store keeps TaskShape::kind()'s number (for co-location on restart),
// the API says "cpu", "share" or "N devices". Empty or unreadable text: [].
nlohmann::ordered_json PlacementView(std::string_view stored);

}  // namespace tessera
