// Internal to config: after every file is parsed, resolve names into ids, expand node groups
// into nodes, and check what only the whole configuration can show (semantic validation).
#pragma once

#include "config/builder.h"

namespace tessera::config_internal {

void ResolveAndValidate(SpecBuilder& b);
// Resolves the builder's pending references against `b.fleet()`.
void ResolveRefs(SpecBuilder& b);

// Semantic checks (validate.cc). Assumes references are resolved where they could be: ids
// that failed to resolve are invalid and must be skipped.
void ValidateSpec(SpecBuilder& b);
void ValidateNames(SpecBuilder& b);
void ValidateFleet(SpecBuilder& b);
void ValidateTenants(SpecBuilder& b);
void ValidatePolicies(SpecBuilder& b);
void ValidateWorkloads(SpecBuilder& b);

// Names of things are used in paths, URLs and file names: letters, digits, '.', '_', '-',
// starting with a letter or digit, at most 63 characters.
bool IsValidName(std::string_view name);

}  // namespace tessera::config_internal
