#include "model/topology.h"

namespace tessera {

std::string_view TopologyLevelName(TopologyLevel level) {
  switch (level) {
    case TopologyLevel::kIsland:
      return "island";
    case TopologyLevel::kNode:
      return "node";
    case TopologyLevel::kLeaf:
      return "leaf";
    case TopologyLevel::kSpine:
      return "spine";
    case TopologyLevel::kCluster:
      return "cluster";
    case TopologyLevel::kRegion:
      return "region";
    case TopologyLevel::kAny:
      return "any";
  }
  return "?";
}

std::optional<TopologyLevel> ParseTopologyLevel(std::string_view s) {
  for (int i = 0; i < kTopologyLevelCount; ++i) {
    auto level = static_cast<TopologyLevel>(i);
    if (TopologyLevelName(level) == s) return level;
  }
  return std::nullopt;
}

}  // namespace tessera
