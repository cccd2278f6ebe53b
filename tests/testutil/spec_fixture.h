// A small valid fleet shared by the config tests, and helpers to load texts against it.
#pragma once

#include <string>
#include <vector>

#include "config/loader.h"

namespace tessera::testing {

// Two regions, two clusters (8 x 8 H800 on two leaves; 4 x 8 Ascend910B; 2 CPU nodes),
// a tenant tree acme/{research/llm, prod}, no jobs.
extern const char* const kBaseFleet;

// Loads kBaseFleet as "base.yaml" followed by `text` as "case.yaml".
LoadResult LoadWithBase(const std::string& text);

// kBaseFleet alone, as a Spec (it always loads: if it did not, the process aborts).
Spec BaseSpec();

}  // namespace tessera::testing
