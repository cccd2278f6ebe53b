#include "cli/fleet_import_cmd.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "cli/app.h"
#include "config/fleet_import.h"
#include "config/loader.h"
#include "config/yaml_writer.h"

namespace tessera::cli {
namespace {

constexpr const char* kPrefix = "tessera fleet import: ";

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "1 region, 1 cluster, 1523 nodes (310 CPU-only), 6212 devices (A10 2, G2 4392, ...)"
std::string Summary(const Spec& s) {
  std::vector<int64_t> per_model(s.device_models.size(), 0);
  size_t cpu_only = 0, devices = 0;
  for (const Node& n : s.nodes) {
    if (n.devices.empty()) ++cpu_only;
    devices += n.devices.size();
    for (const Device& d : n.devices)
      ++per_model[d.model.value()];
  }
  std::string text = Plural(s.regions.size(), "region", "regions") + ", " +
                     Plural(s.clusters.size(), "cluster", "clusters") + ", " +
                     Plural(s.nodes.size(), "node", "nodes");
  if (cpu_only > 0) text += " (" + std::to_string(cpu_only) + " CPU-only)";
  text += ", " + Plural(devices, "device", "devices");
  std::string models;
  for (size_t i = 0; i < per_model.size(); ++i) {
    if (per_model[i] == 0) continue;
    models +=
        (models.empty() ? "" : ", ") + s.device_models[i].name + " " + std::to_string(per_model[i]);
  }
  if (!models.empty()) text += " (" + models + ")";
  return text;
}

// Writes beside the target and renames over it, so a failed write never leaves a truncated
// fleet file where a good one was.
Status WriteFileReplacing(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return Unavailable("cannot write " + path + ": " + std::strerror(errno));
    f << text;
    f.close();
    if (!f) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      return Unavailable("cannot write " + path + ": " + std::strerror(errno));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return Unavailable("cannot write " + path + ": " + ec.message());
  }
  return Status::Ok();
}

// Input the user can fix (a bad row, a missing file) is exit 2; the rest is a failure.
int ExitCodeFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      return kExitInvalidInput;
    default:
      return kExitFailure;
  }
}

}  // namespace

int RunFleetImport(const FleetImportArgs& args, std::ostream& out, std::ostream& err) {
  auto format = ParseNodeListFormat(args.format);
  if (!format) {
    std::string names;
    for (std::string_view name : NodeListFormatNames())
      names += (names.empty() ? "\"" : ", \"") + std::string(name) + "\"";
    err << kPrefix << "unknown format \"" << args.format << "\"; expected one of " << names << "\n";
    return kExitInvalidInput;
  }
  auto tier = ParseClusterTier(args.tier);
  if (!tier) {
    err << kPrefix << "unknown tier \"" << args.tier
        << "\"; expected \"dedicated\", \"shared\" or \"elastic\"\n";
    return kExitInvalidInput;
  }
  if (args.file.empty()) {
    err << kPrefix << "--file: give an output file, or - for standard output\n";
    return kExitInvalidInput;
  }
  FleetImportOptions options{args.region, args.cluster, *tier};
  auto imported = ImportNodeListFile(*format, args.csv, options);
  if (!imported.ok()) {
    err << kPrefix << imported.status().message() << "\n";
    return ExitCodeFor(imported.status());
  }
  const Spec& spec = imported->spec;

  YamlWriteOptions write;
  write.header_comment.push_back("Imported by `tessera fleet import --format " + args.format +
                                 "` from " + args.csv + ":");
  write.header_comment.push_back(Summary(spec) + ".");
  for (const std::string& note : imported->notes)
    write.header_comment.push_back(note);
  auto yaml = WriteFleetYaml(spec, write);
  if (!yaml.ok()) {
    err << kPrefix << "internal error: " << yaml.status().message() << "\n";
    return kExitFailure;
  }

  // What is written must load as the fleet that was imported; check before writing anything.
  std::string shown = args.file == "-" ? "<stdout>" : args.file;
  LoadResult reloaded = LoadSpecTexts({{shown, *yaml}});
  if (!reloaded.spec) {
    err << kPrefix << "internal error: the generated YAML does not validate:\n"
        << reloaded.diagnostics.ToString();
    return kExitFailure;
  }
  std::string summary = Summary(*reloaded.spec);
  if (summary != Summary(spec)) {
    err << kPrefix << "internal error: the generated YAML loads as " << summary
        << ", but the import holds " << Summary(spec) << "\n";
    return kExitFailure;
  }

  if (args.file == "-") {
    out << *yaml;
    err << "wrote " << shown << ": " << summary << "\n";  // stdout carries the YAML
    return kExitOk;
  }
  Status written = WriteFileReplacing(args.file, *yaml);
  if (!written.ok()) {
    err << kPrefix << written.message() << "\n";
    return kExitFailure;
  }
  out << "wrote " << args.file << ": " << summary << "\n";
  return kExitOk;
}

}  // namespace tessera::cli
