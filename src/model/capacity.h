// Capacity by topology level: how many devices matching a predicate one island, node, leaf,
// spine or whole cluster holds at most. Used to reject impossible requests at validation and
// to compute the largest gang a cluster can host (the fleet view).
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "model/spec.h"

namespace tessera {

// Indexed by TopologyLevel: island, node, leaf, spine, cluster.
inline constexpr int kCapacityLevels = 5;
using LevelCapacity = std::array<int64_t, kCapacityLevels>;

using DevicePredicate = std::function<bool(const Node&, const Device&)>;

// For one cluster: the largest number of devices satisfying `ok` under one instance of each
// level. `node_ok` filters whole nodes first (e.g. enough CPU for the task).
LevelCapacity ClusterCapacity(const Spec& spec, ClusterId cluster, const DevicePredicate& ok,
                              const std::function<bool(const Node&)>& node_ok = nullptr);

}  // namespace tessera
