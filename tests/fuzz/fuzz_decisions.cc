// Fuzzes the reading of two decision logs (`tessera sim compare`): the input, split at its
// first NUL byte (or at its middle), is the two logs. Any input must give a comparison or an
// error naming a log and a line, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sim/compare.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  size_t cut = all.find('\0');
  if (cut == std::string_view::npos) cut = size / 2;
  const std::string_view base = all.substr(0, cut);
  const std::string_view other = all.substr(cut < size ? cut + 1 : size);
  tessera::Result<nlohmann::ordered_json> doc =
      tessera::CompareDecisionLogs({"base", base}, {"other", other});
  if (!doc.ok() && doc.status().message().empty()) std::abort();
  return 0;
}
