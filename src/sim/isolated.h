// The isolated baseline (`tessera sim run --baseline isolated`, docs/simulation.md#baselines):
// clusters as most enterprises run them today — each team's work of each class goes to one
// cluster assigned in advance, never elsewhere, and nobody bursts to the cloud.
//
// Assignment, static and deterministic: for every leaf tenant (in tree order) and job class
// (training, finetune, batch, eval, inference), among the non-elastic clusters the policy rules
// allow for that tenant and class, prefer those with a device model the tenant (or an ancestor)
// is guaranteed, then the one with the fewest assignments per device so far, then the first
// declared. The assignment becomes one constrain rule per pair (allowClusters: [home]), added to
// the spec's rules, so the same engine, rules and global layer run — each job simply has one
// cluster.
#pragma once

#include <map>
#include <string>

#include "model/spec.h"

namespace tessera {

// tenant path -> class name -> cluster name.
using ClusterAssignment = std::map<std::string, std::map<std::string, std::string>>;

// Adds the isolated baseline's constrain rules to `spec` and returns the assignment.
ClusterAssignment IsolateClusters(Spec& spec);

}  // namespace tessera
