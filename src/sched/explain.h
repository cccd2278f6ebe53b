// Why a task does not fit: ordered reason codes with node counts, as in
// "0/1213 nodes fit: 1002 insufficient free GPU, 150 GPU model not allowed, 61 insufficient
// CPU".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

// The first filter that dropped a node. Order = the order of the filter chain.
enum class Reason : uint8_t {
  // Policy: where the job may run at all (sched/scope.h). Never changes while the job waits.
  kRegionNotAllowed,   // a constrain rule denies the node's region
  kClusterNotAllowed,  // a constrain rule denies the node's cluster
  kTierNotAllowed,     // the rules' tier order leaves out the cluster's tier
  kDataResidency,      // a dataset the job reads may not be processed in the node's region
  kLaterPreference,    // allowed, but a preferred cluster or model is tried first
  // Resources.
  kUnschedulable,    // cordoned or unhealthy
  kModelNotAllowed,  // no device of an acceptable model
  kDeviceMemory,     // acceptable devices, but with too little memory
  kInsufficientCpu,
  kInsufficientMemory,
  kInsufficientDevices,  // not enough free devices / free share of an acceptable model
  kCpuNodesFirst,        // CPU-only work tries nodes without devices first
  kKeepsDevicesFed,      // it would leave the node's free devices too little CPU or memory
  kTopology,             // a gang's topology domain is too small
};
inline constexpr int kReasonCount = 14;

// Whether the reason is the job's policy scope (lasting) rather than the node's state.
bool IsPolicyReason(Reason r);

std::string_view ReasonCode(Reason r);  // "InsufficientDevices"
std::string_view ReasonText(Reason r);  // "insufficient free devices"

struct Explanation {
  uint32_t total_nodes = 0;
  uint32_t feasible_nodes = 0;
  // Nodes dropped per reason, most frequent first (ties in filter order); zero counts omitted.
  std::vector<std::pair<Reason, uint32_t>> dropped;

  std::string ToString() const;  // "0/1213 nodes fit: 1002 insufficient free devices, ..."
};

// Accumulates counts per reason, then orders them.
class ReasonCounter {
 public:
  void Add(Reason r, uint32_t nodes) { counts_[static_cast<size_t>(r)] += nodes; }
  Explanation Finish(uint32_t total, uint32_t feasible) const;

 private:
  uint32_t counts_[kReasonCount] = {};
};

}  // namespace tessera
