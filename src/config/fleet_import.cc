#include "config/fleet_import.h"

#include <algorithm>
#include <map>

#include "config/resolve.h"

namespace tessera {
namespace {

using config_internal::IsValidName;

// Sanity bounds on a row: anything outside is a broken file, not a server. The device bound is
// the YAML schema's (devices.count).
constexpr int64_t kMaxCores = 100'000;
constexpr int64_t kMaxMemoryGi = int64_t{1} << 30;
constexpr int64_t kMaxDevicesPerNode = 1024;

// Device memory of the GPU models these traces name, from the vendors' data sheets. openb's
// V100M16/V100M32 and PAI's V100M32 are the 16 and 32 GB V100; PAI's plain V100 is the 16 GB
// part; P100 is taken as the 16 GB part (a 12 GB PCIe variant exists).
struct KnownGpu {
  std::string_view name;
  MiB memory;
};
constexpr MiB kGi = 1024;
constexpr KnownGpu kKnownGpus[] = {
    {"A10", 24 * kGi},
    {"A100-80G", 80 * kGi},
    {"A100-SXM4-80GB", 80 * kGi},
    {"A800-SXM4-80GB", 80 * kGi},
    {"H800", 80 * kGi},
    {"P100", 16 * kGi},
    {"T4", 16 * kGi},
    {"V100", 16 * kGi},
    {"V100M16", 16 * kGi},
    {"V100M32", 32 * kGi},
};

// One row, read and checked, before it becomes a Node.
struct NodeRow {
  std::string name;
  Milli cpu = 0;
  MiB memory = 0;
  std::string model;  // "" when the node has no devices
  int32_t devices = 0;
  int line = 0;
};

// Stores a successful result into `out`, or passes the error on.
template <class T, class U>
Status Take(Result<T> r, U* out) {
  if (!r.ok()) return r.status();
  *out = static_cast<U>(*r);
  return Status::Ok();
}

// A node's devices: `count` of `model`, or none when count is 0 (the model is then ignored).
Status TakeDevices(const CsvRow& r, size_t model_col, size_t count_col, NodeRow& row) {
  int64_t count = 0;
  TESSERA_RETURN_IF_ERROR(Take(r.Int(count_col, 0, kMaxDevicesPerNode), &count));
  row.devices = static_cast<int32_t>(count);
  if (count == 0) return Status::Ok();
  std::string_view model;
  TESSERA_RETURN_IF_ERROR(Take(r.Text(model_col), &model));
  if (model.empty()) {
    return r.ErrorAt(model_col, "a node with " + std::to_string(count) + " GPUs needs their model");
  }
  if (!IsValidName(model) || model == "cpu") {
    return r.ErrorAt(model_col, "invalid GPU model name \"" + std::string(model) +
                                    "\"; expected letters, digits, '.', '_' or '-' (and not "
                                    "\"cpu\")");
  }
  row.model = std::string(model);
  return Status::Ok();
}

Status ReadOpenb(const CsvRow& r, const std::vector<size_t>& c, NodeRow& row) {
  // c: sn, cpu_milli, memory_mib, gpu, model
  TESSERA_RETURN_IF_ERROR(Take(r.NonEmpty(c[0]), &row.name));
  TESSERA_RETURN_IF_ERROR(Take(r.Int(c[1], 1, kMaxCores * kMilliPerUnit), &row.cpu));
  TESSERA_RETURN_IF_ERROR(Take(r.Int(c[2], 1, kMaxMemoryGi * kGi), &row.memory));
  return TakeDevices(r, c[4], c[3], row);
}

Status ReadPai2020(const CsvRow& r, const std::vector<size_t>& c, NodeRow& row) {
  // c: machine, gpu_type, cap_cpu, cap_mem, cap_gpu
  TESSERA_RETURN_IF_ERROR(Take(r.NonEmpty(c[0]), &row.name));
  int64_t cores = 0, gib = 0;
  TESSERA_RETURN_IF_ERROR(Take(r.Int(c[2], 1, kMaxCores), &cores));
  TESSERA_RETURN_IF_ERROR(Take(r.Int(c[3], 1, kMaxMemoryGi), &gib));
  row.cpu = cores * kMilliPerUnit;
  row.memory = gib * kGi;
  std::string_view type;
  TESSERA_RETURN_IF_ERROR(Take(r.NonEmpty(c[1]), &type));
  if (type == "CPU") {  // the trace's mark of a CPU-only machine
    int64_t gpus = 0;
    TESSERA_RETURN_IF_ERROR(Take(r.Int(c[4], 0, kMaxDevicesPerNode), &gpus));
    if (gpus != 0) {
      return r.ErrorAt(
          c[4], "gpu_type CPU marks a CPU-only machine, but cap_gpu is " + std::to_string(gpus));
    }
    return Status::Ok();
  }
  return TakeDevices(r, c[1], c[4], row);
}

Status ReadSpot2026(const CsvRow& r, const std::vector<size_t>& c, NodeRow& row) {
  // c: gpu_model, gpu_capacity_num, cpu_num, node_name
  std::string_view id;
  TESSERA_RETURN_IF_ERROR(Take(r.NonEmpty(c[3]), &id));
  // The trace's node names are bare numbers; a prefix makes them names that read as nodes.
  row.name = "spot-node-" + std::string(id);
  int64_t cores = 0;
  TESSERA_RETURN_IF_ERROR(Take(r.Int(c[2], 1, kMaxCores), &cores));
  row.cpu = cores * kMilliPerUnit;
  row.memory = cores * kSpotMemoryPerCore;
  return TakeDevices(r, c[0], c[1], row);
}

struct FormatInfo {
  NodeListFormat format;
  std::string_view name;
  std::vector<std::string_view> columns;  // in the order the reader expects them
  bool header;
  Status (*read)(const CsvRow&, const std::vector<size_t>&, NodeRow&);
  std::vector<std::string> notes;  // what this format's import assumes
};

const std::vector<FormatInfo>& Formats() {
  static const std::vector<FormatInfo> kFormats = {
      {NodeListFormat::kOpenb,
       "openb",
       {"sn", "cpu_milli", "memory_mib", "gpu", "model"},
       true,
       &ReadOpenb,
       {"cpu_milli and memory_mib are taken as given; rows with gpu 0 are CPU-only nodes."}},
      {NodeListFormat::kPai2020,
       "pai2020",
       {"machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"},
       false,
       &ReadPai2020,
       {"cap_cpu is cores, cap_mem GiB; gpu_type CPU marks CPU-only machines."}},
      {NodeListFormat::kSpot2026,
       "spot2026",
       {"gpu_model", "gpu_capacity_num", "cpu_num", "node_name"},
       true,
       &ReadSpot2026,
       {"Node names are the trace's node_name prefixed with \"spot-node-\".",
        "The trace has no memory column: every node gets " + FormatMemory(kSpotMemoryPerCore) +
            " of memory per CPU core (an assumption, e.g. 128 cores -> " +
            FormatMemory(128 * kSpotMemoryPerCore) + ")."}},
  };
  return kFormats;
}

const FormatInfo& Info(NodeListFormat format) {
  for (const FormatInfo& f : Formats()) {
    if (f.format == format) return f;
  }
  CHECK(false) << "unknown node list format " << static_cast<int>(format);
  return Formats().front();
}

// pai_machine_spec.csv has no header; a copy that gained one still imports.
bool IsHeaderRow(const CsvRow& r, const std::vector<std::string_view>& columns) {
  if (r.size() != columns.size()) return false;
  for (size_t i = 0; i < columns.size(); ++i) {
    auto t = r.Text(i);
    if (!t.ok() || *t != columns[i]) return false;
  }
  return true;
}

DeviceModel CatalogEntry(const std::string& name) {
  DeviceModel m;
  m.name = name;
  m.kind = DeviceKind::kGpu;
  // Every model in these traces that is disclosed is NVIDIA's; undisclosed ones are assumed to
  // be, which only matters to backends choosing CUDA_VISIBLE_DEVICES.
  m.vendor = "nvidia";
  if (auto memory = KnownGpuMemory(name)) {
    m.memory = *memory;
  } else {
    m.memory = kUndisclosedGpuMemory;
    m.labels.push_back("undisclosed");
  }
  return m;
}

std::vector<std::string> Notes(const FormatInfo& f, const Spec& spec) {
  std::vector<std::string> notes = f.notes;
  std::string undisclosed;
  for (const DeviceModel& m : spec.device_models) {
    if (m.HasLabel("undisclosed")) undisclosed += (undisclosed.empty() ? "" : ", ") + m.name;
  }
  if (!undisclosed.empty()) {
    notes.push_back("Undisclosed GPU models (" + undisclosed +
                    ") are labelled undisclosed, with a placeholder memory of " +
                    FormatMemory(kUndisclosedGpuMemory) + ".");
  }
  notes.push_back(
      "The trace has no network topology: all nodes share one leaf switch (a flat network), "
      "and the devices of a node form one island.");
  return notes;
}

Spec BuildSpec(const std::vector<NodeRow>& rows, const FleetImportOptions& options,
               const std::string& cluster) {
  Spec spec;
  spec.priority_classes = Spec::DefaultPriorityClasses();
  std::map<std::string, DeviceModelId> models;  // sorted by name: the catalog's order
  for (const NodeRow& row : rows) {
    if (row.devices > 0) models.emplace(row.model, DeviceModelId());
  }
  for (auto& [name, id] : models) {
    id = DeviceModelId(static_cast<uint32_t>(spec.device_models.size()));
    spec.device_models.push_back(CatalogEntry(name));
  }
  spec.regions.push_back(Region{options.region, "", {}});
  Cluster c;
  c.name = cluster;
  c.region = RegionId(0);
  c.tier = options.tier;
  c.first_node = NodeId(0);
  c.node_count = static_cast<uint32_t>(rows.size());
  spec.clusters.push_back(std::move(c));
  spec.nodes.reserve(rows.size());
  for (const NodeRow& row : rows) {
    Node n;
    n.name = row.name;
    n.cluster = ClusterId(0);
    n.cpu = row.cpu;
    n.memory = row.memory;
    // A flat network: every node under one leaf switch, as the loader assumes for a node group
    // without topology and as the traces' own simulators do.
    n.leaf = 0;
    n.spine = 0;
    for (int32_t k = 0; k < row.devices; ++k)
      n.devices.push_back({models.at(row.model), 0});
    spec.nodes.push_back(std::move(n));
  }
  return spec;
}

}  // namespace

std::optional<NodeListFormat> ParseNodeListFormat(std::string_view name) {
  for (const FormatInfo& f : Formats()) {
    if (f.name == name) return f.format;
  }
  return std::nullopt;
}

std::string_view NodeListFormatName(NodeListFormat format) {
  return Info(format).name;
}

std::vector<std::string_view> NodeListFormatNames() {
  std::vector<std::string_view> names;
  for (const FormatInfo& f : Formats())
    names.push_back(f.name);
  return names;
}

CsvOptions NodeListCsvOptions(NodeListFormat format) {
  const FormatInfo& f = Info(format);
  CsvOptions o;
  o.header = f.header;
  if (!f.header) o.column_names.assign(f.columns.begin(), f.columns.end());
  return o;
}

std::optional<MiB> KnownGpuMemory(std::string_view model) {
  for (const KnownGpu& g : kKnownGpus) {
    if (g.name == model) return g.memory;
  }
  return std::nullopt;
}

Result<ImportedFleet> ImportNodeList(NodeListFormat format, const CsvTable& table,
                                     const FleetImportOptions& options) {
  const FormatInfo& f = Info(format);
  std::string cluster = options.cluster.empty() ? std::string(f.name) : options.cluster;
  const std::pair<std::string_view, std::string> names[] = {{"region", options.region},
                                                            {"cluster", cluster}};
  for (const auto& [what, name] : names) {
    if (!IsValidName(name)) {
      return InvalidArgument("invalid " + std::string(what) + " name \"" + name +
                             "\"; expected letters, digits, '.', '_' or '-', starting with a "
                             "letter or digit, at most 63 characters");
    }
  }
  TESSERA_RETURN_IF_ERROR(table.RequireColumns(f.columns));
  std::vector<size_t> columns;
  for (std::string_view name : f.columns)
    columns.push_back(*table.Column(name));

  std::vector<NodeRow> rows;
  rows.reserve(table.size());
  CsvErrors errors;
  std::map<std::string, int> first_line;  // node name -> line it was first seen on
  for (size_t i = 0; i < table.size(); ++i) {
    CsvRow r = table.row(i);
    if (i == 0 && !f.header && IsHeaderRow(r, f.columns)) continue;
    NodeRow row;
    row.line = r.line();
    Status s = r.CheckWidth();
    if (s.ok()) s = f.read(r, columns, row);
    if (s.ok() && !IsValidName(row.name)) {
      s = r.Error("invalid node name \"" + row.name +
                  "\"; expected letters, digits, '.', '_' or '-', starting with a letter or "
                  "digit, at most 63 characters");
    }
    if (s.ok()) {
      auto [it, fresh] = first_line.emplace(row.name, row.line);
      if (!fresh) {
        s = r.Error("duplicate node name \"" + row.name + "\" (first at line " +
                    std::to_string(it->second) + ")");
      }
    }
    if (!s.ok()) {
      errors.Add(s);
      continue;
    }
    rows.push_back(std::move(row));
  }
  TESSERA_RETURN_IF_ERROR(errors.ToStatus(table.name()));
  if (rows.empty()) {
    return InvalidArgument(table.name() + ": no nodes; the file has no data rows");
  }
  ImportedFleet out;
  out.spec = BuildSpec(rows, options, cluster);
  out.notes = Notes(f, out.spec);
  return out;
}

Result<ImportedFleet> ImportNodeListFile(NodeListFormat format, const std::string& path,
                                         const FleetImportOptions& options) {
  auto table = CsvTable::ReadFile(path, NodeListCsvOptions(format));
  if (!table.ok()) return table.status();
  return ImportNodeList(format, *table, options);
}

}  // namespace tessera
