// How fast a run goes on what it was given: the device models' speeds for the job's class,
// slowed by the communication model when a gang spans a looser level of the network. The
// simulator runs work at this speed; the service driver sizes replicas' capacity with it.
//
// Communication model (docs/simulation.md). A gang's step is compute plus communication; on a
// leaf switch the communication takes `share` of the step (training 0.30, finetune 0.20, other
// classes 0: they do not synchronise). At another level it scales with the leaf bandwidth over
// that level's bandwidth (Interconnect of the cluster). The work of a job is defined on a
// placement inside one node, so the speed factor at level L is
//     ((1 - share) + share * leaf/bw(node)) / ((1 - share) + share * leaf/bw(L)).
// A cluster that declares no bandwidths has factor 1 everywhere; single-task jobs too.
#pragma once

#include <cstdint>

#include "engine/job_record.h"
#include "model/spec.h"
#include "sched/cell_state.h"

namespace tessera {

// The speed factor (1 = as fast as inside one node) of a gang of `tasks` spanning `level`.
double CommunicationFactor(const Interconnect& ic, TopologyLevel level, WorkloadClass c,
                           int32_t tasks);

// The run's speed in milli (1000 = the nominal device): the slowest task's device speed times
// the communication factor; at least 1. A job without placements runs at 1000.
double RunSpeed(const Spec& spec, const CellState& cell, const JobRecord& job);

}  // namespace tessera
