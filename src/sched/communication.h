// The communication model (docs/simulation.md): a gang's step is compute plus communication;
// inside one leaf switch the communication takes `share` of the step (training 0.30, finetune
// 0.20, other classes 0: they do not synchronise). At another level it scales with the leaf
// bandwidth over that level's bandwidth (the cluster's Interconnect). The work of a job is
// defined on a placement inside one node, so the speed factor at level L is
//     ((1 - share) + share * leaf/bw(node)) / ((1 - share) + share * leaf/bw(L)).
// A cluster that declares no bandwidths has factor 1 everywhere; single-task jobs too. The
// simulator runs work at this speed (engine/run_speed.h); the global layer weighs it between
// clusters (sched/global.h).
#pragma once

#include <cstdint>

#include "model/fleet.h"
#include "model/job.h"
#include "model/topology.h"

namespace tessera {

// The speed factor (1 = as fast as inside one node) of a gang of `tasks` spanning `level`.
double CommunicationFactor(const Interconnect& ic, TopologyLevel level, WorkloadClass c,
                           int32_t tasks);

}  // namespace tessera
