// tessera validate FILE...: loads and checks the configuration, reports every error.
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/load.h"

namespace tessera::cli {

void RegisterValidate(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto* cmd = app.add_subcommand("validate", "Check configuration files (or directories)");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("files", *files, "YAML files or directories")->required();
  cmd->callback([files, &out, &err, &code] {
    std::optional<Spec> spec = LoadOrReport(*files, err);
    if (!spec) {
      code = kExitInvalidInput;
      return;
    }
    const Spec& s = *spec;
    int64_t devices = 0;
    for (const Node& n : s.nodes)
      devices += static_cast<int64_t>(n.devices.size());
    out << "ok: " << s.regions.size() << " regions, " << s.clusters.size() << " clusters, "
        << s.nodes.size() << " nodes, " << devices << " devices, " << s.tenants.size()
        << " tenants, " << s.policies.size() << " policy rules, " << s.jobs.size() << " jobs, "
        << s.services.size() << " services\n";
    code = kExitOk;
  });
}

}  // namespace tessera::cli
