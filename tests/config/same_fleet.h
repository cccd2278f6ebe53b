// Comparing the resource sections of two Specs, for round-trip tests (YAML written, then
// loaded again). The model types have no operator==; this names the first difference instead,
// so a failure on a 4,000-node fleet is one readable line.
#pragma once

#include <gtest/gtest.h>

#include "model/spec.h"

namespace tessera::testing {

// Equal catalogs, regions, links, clusters (with groups), nodes and datasets; tenants, policies
// and workloads are not compared.
::testing::AssertionResult SameFleet(const Spec& a, const Spec& b);

}  // namespace tessera::testing
