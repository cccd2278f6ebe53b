// Where the tests' traces are. Unit and e2e tests read only the small fixtures kept in the
// repository (tests/data, cut by tests/data/cut); the data suite (tests/data_suite, ctest label
// `data`) reads the whole public traces from TESSERA_DATA (default ../shared/data beside the
// repository).
#pragma once

#include <filesystem>
#include <string>

namespace tessera::testing {

// tests/data of this checkout, without a trailing slash.
std::string FixtureDir();

// The whole public traces: $TESSERA_DATA, else ../shared/data beside the repository, without a
// trailing slash. The folder is not checked here; TESSERA_WHOLE_DATA_OR_FAIL is.
std::string WholeDataDir();

}  // namespace tessera::testing

// In a data-suite test: the whole traces' folder, or the test fails with what to set.
#define TESSERA_WHOLE_DATA_OR_FAIL(var)                       \
  const std::string var = ::tessera::testing::WholeDataDir(); \
  if (!std::filesystem::is_directory(var))                    \
  FAIL() << "data suite: no data at " << var << "; set TESSERA_DATA"
