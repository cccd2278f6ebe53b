// tessera validate FILE... [-o text|json]: loads and checks the configuration, reports every
// error. `-o json` gives editors and CI one document on standard output, either way.
#include <nlohmann/json.hpp>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "config/loader.h"
#include "config/yaml_json.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

json Counts(const Spec& s) {
  int64_t devices = 0;
  for (const Node& n : s.nodes)
    devices += static_cast<int64_t>(n.devices.size());
  return {{"regions", s.regions.size()}, {"clusters", s.clusters.size()},
          {"nodes", s.nodes.size()},     {"devices", devices},
          {"tenants", s.tenants.size()}, {"policyRules", s.policies.size()},
          {"jobs", s.jobs.size()},       {"services", s.services.size()}};
}

int RunValidateJson(const std::vector<std::string>& files, std::ostream& out) {
  LoadResult r = LoadSpecFiles(files);
  json doc = {{"ok", r.spec.has_value()}};
  if (r.spec) {
    doc["counts"] = Counts(*r.spec);
  } else {
    doc["errors"] = DiagnosticsJson(r.diagnostics);
    doc["notes"] = r.diagnostics.notes();
  }
  out << doc.dump(2) << "\n";
  return r.spec ? kExitOk : kExitInvalidInput;
}

}  // namespace

void RegisterValidate(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto* cmd = app.add_subcommand("validate", "Check configuration files (or directories)");
  auto files = std::make_shared<std::vector<std::string>>();
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("FILE_OR_DIR", *files, "YAML files or directories")->required();
  cmd->add_option("-o,--output", *format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([files, format, &out, &err, &code] {
    if (*format == "json") {
      code = RunValidateJson(*files, out);
      return;
    }
    std::optional<Spec> spec = LoadOrReport(*files, err);
    if (!spec) {
      code = kExitInvalidInput;
      return;
    }
    json c = Counts(*spec);
    out << "ok: " << c["regions"] << " regions, " << c["clusters"] << " clusters, " << c["nodes"]
        << " nodes, " << c["devices"] << " devices, " << c["tenants"] << " tenants, "
        << c["policyRules"] << " policy rules, " << c["jobs"] << " jobs, " << c["services"]
        << " services\n";
    code = kExitOk;
  });
}

}  // namespace tessera::cli
