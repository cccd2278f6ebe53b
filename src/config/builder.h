// Internal to config: the state of one load — the Spec being built, the diagnostics, where
// each field came from, and the references by name that are resolved once every file is read.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "model/spec.h"

namespace tessera::config_internal {

// A field path both as the user sees it in one file (`clusters[0].name`) and as it is in the
// merged Spec, where the lists of several files are concatenated (`clusters[3].name`).
struct FieldPath {
  std::string local;
  std::string merged;

  FieldPath Field(std::string_view key) const;
  FieldPath Index(size_t local_index, size_t merged_index) const;
  FieldPath Index(size_t index) const { return Index(index, index); }
};

struct SourceEntry {
  SourcePos pos;
  std::string local_path;
};

enum class RefKind { kDeviceModel, kRegion, kCluster, kDataset, kTenant };

// A name to resolve into an id once all files are loaded.
struct PendingRef {
  RefKind kind;
  std::string name;
  FieldPath path;
  SourcePos pos;
  std::function<void(Spec&, uint32_t)> assign;
};

// A single node, declared outside node groups, before its device models are resolved.
struct DraftNode {
  Node node;
  std::string leaf;   // leaf switch name, "" = a leaf of its own
  std::string spine;  // spine name, "" = a spine of its own
  FieldPath path;
};

class SpecBuilder {
 public:
  Spec spec;
  // Set when parsing one job against a loaded configuration (an API submission): names
  // resolve against it and requests are checked against its fleet; `spec` holds the job only.
  const Spec* context = nullptr;
  // The configuration references resolve against and requests are checked against.
  const Spec& fleet() const { return context != nullptr ? *context : spec; }
  Diagnostics diags;
  std::vector<std::vector<DraftNode>> single_nodes;  // per cluster index
  std::vector<PendingRef> refs;
  bool priority_classes_declared = false;
  bool currency_declared = false;
  bool scheduler_declared = false;
  // A file that could not be read as YAML at all: its names are unknown, so resolving
  // references would only report every use of them as dangling.
  bool unreadable_file = false;
  // An error was reported in the fleet itself (device models, clusters, nodes): checks that
  // compare the configuration with the fleet's capacity (CapacityCheck) would report
  // consequences of it, not mistakes of their own; their errors are only counted.
  bool fleet_incomplete = false;
  size_t suppressed = 0;
  std::vector<FieldPath> tenant_paths;  // by TenantId: where each tenant was declared
  std::vector<std::string> node_paths;  // by NodeId: merged path of its group or node entry

  void Record(const FieldPath& path, const SourcePos& pos);
  // Where a merged path was declared; falls back to its nearest recorded ancestor.
  SourceEntry Locate(const std::string& merged_path) const;
  // Reports an error at a merged path (semantic validation), shown with the local path.
  void ErrorAt(const std::string& merged_path, std::string message);
  void ErrorAt(const FieldPath& path, const SourcePos& pos, std::string message);

  // Runs a check against the fleet's capacity: its errors are reported, or, while the fleet
  // itself has errors, counted in `suppressed` as their consequences.
  template <typename Check>
  void CapacityCheck(Check&& check) {
    if (!fleet_incomplete) {
      check();
      return;
    }
    Diagnostics reported = std::move(diags);
    diags = Diagnostics();
    check();
    suppressed += diags.size();
    diags = std::move(reported);
  }

  void AddRef(RefKind kind, std::string name, FieldPath path, SourcePos pos,
              std::function<void(Spec&, uint32_t)> assign);

 private:
  std::map<std::string, SourceEntry> sources_;
};

}  // namespace tessera::config_internal
