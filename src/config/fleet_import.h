// Importing the public node lists of GPU cluster traces as a Tessera fleet, so the simulator
// can replay a trace on the cluster it was recorded on:
//
//   openb     Alibaba GPU trace 2023 (`openb_node_list_*.csv`): sn,cpu_milli,memory_mib,gpu,model
//   pai2020   Alibaba PAI trace 2020 (`pai_machine_spec.csv`, no header):
//             machine,gpu_type,cap_cpu,cap_mem (GiB),cap_gpu; gpu_type CPU = CPU-only
//   spot2026  Alibaba spot GPU trace 2026 (`node_info_df.csv`):
//             gpu_model,gpu_capacity_num,cpu_num,node_name; no memory column
//
// The result is one region, one cluster and one single node per row, keeping the trace's node
// names (prefixed where they are bare numbers), plus a device catalog with one model per GPU
// model seen. What the trace does not say (device memory of undisclosed models, node memory in
// spot2026, the network topology) is filled with documented defaults, listed in
// ImportedFleet::notes so the written YAML can say so.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "config/csv.h"
#include "model/spec.h"

namespace tessera {

enum class NodeListFormat { kOpenb, kPai2020, kSpot2026 };

std::optional<NodeListFormat> ParseNodeListFormat(std::string_view name);
std::string_view NodeListFormatName(NodeListFormat format);
// Every format name, in a stable order, for help texts and "expected one of" messages.
std::vector<std::string_view> NodeListFormatNames();

// How a format's file is read (pai2020 has no header row).
CsvOptions NodeListCsvOptions(NodeListFormat format);

struct FleetImportOptions {
  std::string region = "default";
  std::string cluster;  // "" = the format's name
  ClusterTier tier = ClusterTier::kDedicated;
};

struct ImportedFleet {
  // Device models (sorted by name), one region, one cluster, the nodes in file order; priority
  // classes are the defaults, as a loaded Spec without any would have.
  Spec spec;
  // The assumptions the import made, one sentence each, for the YAML's header comment.
  std::vector<std::string> notes;
};

// InvalidArgument when a row is malformed; the message lists every malformed row (up to a cap,
// then a count of the rest), each as file:line and column.
Result<ImportedFleet> ImportNodeList(NodeListFormat format, const CsvTable& table,
                                     const FleetImportOptions& options);
// The same, reading the file first (NotFound if it cannot be opened).
Result<ImportedFleet> ImportNodeListFile(NodeListFormat format, const std::string& path,
                                         const FleetImportOptions& options);

// The device memory the import assigns to a GPU model name: from a table of known models, else
// nullopt (the model is undisclosed and gets kUndisclosedGpuMemory).
std::optional<MiB> KnownGpuMemory(std::string_view model);
// Placeholder memory of an undisclosed GPU model: the smallest of the known models in these
// traces, so a job stating a minimum device memory never lands on a device that may lack it.
inline constexpr MiB kUndisclosedGpuMemory = 16 * 1024;
// spot2026 has no memory column; its nodes get this much memory per CPU core: a round figure
// typical of GPU servers (an 8-GPU server with 128 cores and 1Ti). An assumption, not trace data.
inline constexpr MiB kSpotMemoryPerCore = 8 * 1024;

}  // namespace tessera
