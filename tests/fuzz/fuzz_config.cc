// Fuzzes the configuration loader: any bytes must give either a Spec or diagnostics, never a
// crash, hang or sanitizer report; a rejected input must leave no Spec behind.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  tessera::LoadResult r = tessera::LoadSpecTexts({{"fuzz.yaml", text}});
  if (r.spec.has_value() != r.diagnostics.empty()) std::abort();
  for (const tessera::Diagnostic& d : r.diagnostics.items()) {
    if (d.message.empty()) std::abort();
  }
  return 0;
}
