// Loading configuration for a command: on failure every diagnostic goes to `err` with a count,
// and the command exits with kExitInvalidInput.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "model/spec.h"

namespace tessera::cli {

std::optional<Spec> LoadOrReport(const std::vector<std::string>& files, std::ostream& err);

}  // namespace tessera::cli
