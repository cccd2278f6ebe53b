// Rendering of the unified resource view (sched/fleet_view.h) as JSON (the documented shape,
// docs/fleet-view.md) and as tables for people.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "model/spec.h"
#include "sched/fleet_view.h"

namespace tessera::cli {

nlohmann::ordered_json FleetViewJson(const Spec& spec, const FleetView& view);
void WriteFleetViewTable(const Spec& spec, const FleetView& view, std::ostream& out);

}  // namespace tessera::cli
