// How fast a run goes on what it was given: the device models' speeds for the job's class,
// slowed by the communication model (sched/communication.h) when a gang spans a looser level of
// the network. The simulator runs work at this speed; the service driver sizes replicas'
// capacity with it.
#pragma once

#include <cstdint>

#include "engine/job_record.h"
#include "model/spec.h"
#include "sched/cell_state.h"
#include "sched/communication.h"

namespace tessera {

// The run's speed in milli (1000 = the nominal device): the slowest task's device speed times
// the communication factor; at least 1. A job without placements runs at 1000.
double RunSpeed(const Spec& spec, const CellState& cell, const JobRecord& job);

}  // namespace tessera
