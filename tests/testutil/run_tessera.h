// Runs the tessera binary built with the tests (TESSERA_BINARY), for end-to-end tests.
#pragma once

#include <string>

namespace tessera::testing {

// Runs `tessera ARGS` through the shell; stdout (and stderr when `with_stderr`) into `out`.
// Returns the exit status.
int RunTessera(const std::string& args, std::string* out, bool with_stderr = true);

}  // namespace tessera::testing
