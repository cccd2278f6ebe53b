// tessera fleet FILE... [-o table|json|yaml] and tessera fleet import.
#include "cli/app.h"
#include "cli/commands.h"

namespace tessera::cli {

void RegisterFleet(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  (void)app;
  (void)out;
  (void)err;
  (void)code;
}

}  // namespace tessera::cli
