#include "common/check.h"

#include <cstdio>
#include <cstdlib>

namespace tessera::internal {

CheckFailure::CheckFailure(const char* file, int line, const char* expr) {
  stream_ << file << ":" << line << ": CHECK failed: " << expr << " ";
}

CheckFailure::~CheckFailure() {
  std::fprintf(stderr, "%s\n", stream_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace tessera::internal
