// What a loaded or imported fleet holds, for tests of the node-list importers (the fixtures'
// totals in the unit tests, the whole traces' in the data suite).
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "model/spec.h"

namespace tessera::testing {

struct FleetTotals {
  size_t nodes = 0;
  size_t cpu_only = 0;  // nodes without devices
  size_t devices = 0;
  std::map<std::string, size_t> per_model;  // devices by model name
};

FleetTotals CountFleet(const Spec& s);

}  // namespace tessera::testing
