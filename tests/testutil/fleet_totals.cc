#include "testutil/fleet_totals.h"

namespace tessera::testing {

FleetTotals CountFleet(const Spec& s) {
  FleetTotals t;
  t.nodes = s.nodes.size();
  for (const Node& n : s.nodes) {
    if (n.devices.empty()) ++t.cpu_only;
    t.devices += n.devices.size();
    for (const Device& d : n.devices)
      ++t.per_model[s.model(d.model).name];
  }
  return t;
}

}  // namespace tessera::testing
