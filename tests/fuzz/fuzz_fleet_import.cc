// Fuzzes the CSV reader and the node-list importers: the first byte picks the format, the
// rest is the CSV. Any input must give a fleet or an error, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/fleet_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto format = static_cast<tessera::NodeListFormat>(data[0] % 3);
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  auto table = tessera::CsvTable::Parse("fuzz.csv", text, tessera::NodeListCsvOptions(format));
  if (!table.ok()) {
    if (table.status().message().empty()) std::abort();
    return 0;
  }
  auto fleet = tessera::ImportNodeList(format, *table, {});
  if (!fleet.ok() && fleet.status().message().empty()) std::abort();
  return 0;
}
