#include "cli/load.h"

#include "config/loader.h"

namespace tessera::cli {

std::optional<Spec> LoadOrReport(const std::vector<std::string>& files, std::ostream& err) {
  LoadResult r = LoadSpecFiles(files);
  if (!r.spec) {
    err << r.diagnostics.ToString();
    err << r.diagnostics.Sorted().size() << " error(s); nothing was loaded\n";
    for (const std::string& note : r.diagnostics.notes())
      err << "note: " << note << "\n";
  }
  return std::move(r.spec);
}

}  // namespace tessera::cli
