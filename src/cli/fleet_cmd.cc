// tessera fleet FILE... [-o table|json|yaml]: the unified resource view of a configuration.
// tessera fleet import ...: see fleet_import_cmd.h.
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/fleet_import_cmd.h"
#include "cli/fleet_view_output.h"
#include "cli/load.h"
#include "cli/output.h"
#include "config/loader.h"
#include "sched/fleet_view.h"

namespace tessera::cli {

void RegisterFleet(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto* cmd = app.add_subcommand("fleet", "Show the unified resource view of a fleet");
  auto files = std::make_shared<std::vector<std::string>>();
  auto format = std::make_shared<std::string>("table");
  cmd->add_option("FILE_OR_DIR", *files, "YAML files or directories");
  cmd->add_option("-o,--output", *format, "Output format")
      ->check(CLI::IsMember({"table", "json", "yaml"}));

  auto* import = cmd->add_subcommand("import", "Turn a public node list (CSV) into fleet YAML");
  auto args = std::make_shared<FleetImportArgs>();
  import->add_option("--format", args->format, "Input format")
      ->required()
      ->check(CLI::IsMember({"openb", "pai2020", "spot2026"}));
  import->add_option("CSV", args->csv, "The node list CSV")->required();
  import->add_option("-f,--file", args->file, "Output YAML file (- for standard output)")
      ->capture_default_str();
  auto import_format = std::make_shared<std::string>("yaml");
  import->add_option("-o,--output", *import_format, "Output format (the fleet is YAML)")
      ->check(CLI::IsMember({"yaml"}))
      ->capture_default_str();
  import->add_option("--region", args->region, "Region name")->capture_default_str();
  import->add_option("--cluster", args->cluster, "Cluster name (default: from the format)");
  import->add_option("--tier", args->tier, "Cluster tier")
      ->check(CLI::IsMember({"dedicated", "shared", "elastic"}))
      ->capture_default_str();
  import->callback([args, &out, &err, &code] { code = RunFleetImport(*args, out, err);
});

cmd->callback([cmd, import, files, format, &out, &err, &code] {
  if (import->parsed()) return;
  if (files->empty()) {
    err << "tessera fleet: give one or more configuration files or directories\n";
    code = kExitInvalidInput;
    return;
  }
  std::optional<Spec> spec = LoadOrReport(*files, err);
  if (!spec) {
    code = kExitInvalidInput;
    return;
  }
  FleetView view = ComputeFleetView(*spec);
  switch (*ParseOutputFormat(*format)) {
    case OutputFormat::kTable:
      WriteFleetViewTable(*spec, view, out);
      break;
    case OutputFormat::kJson:
      out << FleetViewJson(*spec, view).dump(2) << "\n";
      break;
    case OutputFormat::kYaml:
      WriteYaml(FleetViewJson(*spec, view), out);
      break;
  }
  code = kExitOk;
  (void)cmd;
});
}  // namespace tessera::cli

}  // namespace tessera::cli
