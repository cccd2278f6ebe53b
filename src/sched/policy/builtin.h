// Factories of the built-in placement policies; RegisterBuiltinScorers (scorer.h) puts them
// in a registry under their names. Each policy's file opens with its rationale.
#pragma once

#include <memory>

#include "sched/fragmentation.h"
#include "sched/scorer.h"

namespace tessera::policy {

std::unique_ptr<Scorer> MakeRandom();
std::unique_ptr<Scorer> MakeFirstFit();
std::unique_ptr<Scorer> MakeBestFit();
std::unique_ptr<Scorer> MakeDotProduct();
std::unique_ptr<Scorer> MakeGpuPacking();
std::unique_ptr<Scorer> MakeGpuClustering();
std::unique_ptr<Scorer> MakeFgd(const TargetWorkload& workload);
std::unique_ptr<Scorer> MakeTessera(const TargetWorkload* workload);

// Copies the node's free shares into `out` (at most 64 devices) and returns the count.
size_t FreeShares(const CellState& cell, uint32_t node, uint16_t* out);

}  // namespace tessera::policy
