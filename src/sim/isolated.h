// The isolated baseline (`tessera sim run --baseline isolated`, docs/simulation.md#baselines):
// clusters as most enterprises run them today — each team's work of each class goes to one
// cluster per device kind (its GPU cluster, its NPU cluster) assigned in advance, never
// elsewhere, and nobody bursts to the cloud.
//
// Assignment, static and deterministic: for every leaf tenant (in tree order), job class
// (training, finetune, batch, eval, inference) and device kind (gpu, npu), among the
// non-elastic clusters with devices of that kind the policy rules allow for that tenant and
// class, prefer those with a model of the kind the tenant (or an ancestor) is guaranteed, then
// the one with the fewest assignments per device so far, then the first declared. Each
// (tenant, class) becomes one constrain rule (allowClusters: its homes), added to the spec's
// rules, so the same engine, rules and global layer run — each job simply has one cluster of
// the kind it asks for.
#pragma once

#include <map>
#include <string>

#include "model/spec.h"

namespace tessera {

// tenant path -> class name -> device kind ("gpu", "npu") -> cluster name.
using ClusterAssignment =
    std::map<std::string, std::map<std::string, std::map<std::string, std::string>>>;

// Adds the isolated baseline's constrain rules to `spec` and returns the assignment.
ClusterAssignment IsolateClusters(Spec& spec);

}  // namespace tessera
