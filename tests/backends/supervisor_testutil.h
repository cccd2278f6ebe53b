// What the supervisor's tests share.
#pragma once

#include <filesystem>

#include "backends/local/supervisor.h"

namespace tessera::testing {

// Tasks under DIR, 64 bytes of log tail; run as root when the test is (CI): they name no user.
SupervisorOptions OptionsIn(const std::filesystem::path& dir);

}  // namespace tessera::testing
