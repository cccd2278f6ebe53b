// Topology levels, from the tightest to the loosest. A gang "requires" a level when all its
// tasks must share one instance of it, and "prefers" a level it will trade for nothing but
// feasibility. The network tree is region -> cluster -> spine -> leaf switch -> node ->
// NVLink/HCCS island -> device.
#pragma once

#include <optional>
#include <string_view>

namespace tessera {

enum class TopologyLevel {
  kIsland = 0,  // one NVLink / HCCS island inside a node
  kNode,
  kLeaf,   // nodes under one leaf switch
  kSpine,  // leaves under one spine
  kCluster,
  kRegion,
  kAny,  // no constraint
};
inline constexpr int kTopologyLevelCount = 7;

std::string_view TopologyLevelName(TopologyLevel level);
std::optional<TopologyLevel> ParseTopologyLevel(std::string_view s);

}  // namespace tessera
