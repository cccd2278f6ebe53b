// tessera fleet import --format openb|pai2020|spot2026 CSV [-f FILE] [-o yaml]: turns a public
// node list into Tessera fleet YAML. `-o` is the output format, as in every command; `-f` the
// output file (standard output when absent or -).
#pragma once

#include <ostream>
#include <string>

namespace tessera::cli {

struct FleetImportArgs {
  std::string format;      // openb | pai2020 | spot2026
  std::string csv;         // input path
  std::string file = "-";  // output YAML path; "-" = stdout
  std::string region = "default";
  std::string cluster;  // "" = derived from the format
  std::string tier = "dedicated";
};

// Imports the CSV, writes the fleet YAML and prints a one-line summary ("wrote FILE: 1 region,
// 1 cluster, 1213 nodes, 6212 devices (A10 2, ...)") to `out`; with file "-" the YAML goes to
// `out` and the summary to `err`. The YAML is loaded back and checked before anything is
// written, and a file is replaced only once the new one is complete.
// Returns the process exit code (see app.h): 0 written; 2 unknown format or tier, a missing
// or malformed CSV (every malformed row on `err`, file:line and column); 1 the output cannot be
// written or the generated YAML does not load back (an internal error).
int RunFleetImport(const FleetImportArgs& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
