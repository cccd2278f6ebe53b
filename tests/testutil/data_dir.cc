#include "testutil/data_dir.h"

#include <cstdlib>

namespace tessera::testing {

std::string FixtureDir() {
  return std::string(TESSERA_SOURCE_DIR) + "/tests/data";
}

std::string WholeDataDir() {
  const char* env = std::getenv("TESSERA_DATA");
  if (env && *env) return env;
  return std::string(TESSERA_SOURCE_DIR) + "/../shared/data";
}

}  // namespace tessera::testing
