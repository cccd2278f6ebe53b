#include "sched/explain.h"

#include <algorithm>

namespace tessera {

bool IsPolicyReason(Reason r) {
  return r <= Reason::kLaterPreference;
}

std::string_view ReasonCode(Reason r) {
  switch (r) {
    case Reason::kRegionNotAllowed:
      return "RegionNotAllowed";
    case Reason::kClusterNotAllowed:
      return "ClusterNotAllowed";
    case Reason::kTierNotAllowed:
      return "TierNotAllowed";
    case Reason::kDataResidency:
      return "DataResidency";
    case Reason::kLaterPreference:
      return "LaterPreference";
    case Reason::kUnschedulable:
      return "Unschedulable";
    case Reason::kModelNotAllowed:
      return "ModelNotAllowed";
    case Reason::kDeviceMemory:
      return "InsufficientDeviceMemory";
    case Reason::kInsufficientCpu:
      return "InsufficientCpu";
    case Reason::kInsufficientMemory:
      return "InsufficientMemory";
    case Reason::kInsufficientDevices:
      return "InsufficientDevices";
    case Reason::kCpuNodesFirst:
      return "CpuNodesFirst";
    case Reason::kKeepsDevicesFed:
      return "KeepsDevicesFed";
    case Reason::kTopology:
      return "TopologyTooSmall";
  }
  return "?";
}

std::string_view ReasonText(Reason r) {
  switch (r) {
    case Reason::kRegionNotAllowed:
      return "region not allowed by policy";
    case Reason::kClusterNotAllowed:
      return "cluster not allowed by policy";
    case Reason::kTierNotAllowed:
      return "cluster tier not allowed by policy";
    case Reason::kDataResidency:
      return "outside the datasets' residency";
    case Reason::kLaterPreference:
      return "tried after a preferred cluster";
    case Reason::kUnschedulable:
      return "cordoned or unhealthy";
    case Reason::kModelNotAllowed:
      return "device model not allowed";
    case Reason::kDeviceMemory:
      return "device memory too small";
    case Reason::kInsufficientCpu:
      return "insufficient CPU";
    case Reason::kInsufficientMemory:
      return "insufficient memory";
    case Reason::kInsufficientDevices:
      return "insufficient free devices";
    case Reason::kCpuNodesFirst:
      return "device nodes, tried after CPU-only nodes";
    case Reason::kKeepsDevicesFed:
      return "CPU and memory kept for free devices";
    case Reason::kTopology:
      return "topology domain too small";
  }
  return "?";
}

Explanation ReasonCounter::Finish(uint32_t total, uint32_t feasible) const {
  Explanation e;
  e.total_nodes = total;
  e.feasible_nodes = feasible;
  for (int i = 0; i < kReasonCount; ++i) {
    if (counts_[i] > 0) e.dropped.emplace_back(static_cast<Reason>(i), counts_[i]);
  }
  std::stable_sort(e.dropped.begin(), e.dropped.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return e;
}

std::string Explanation::ToString() const {
  std::string s = std::to_string(feasible_nodes) + "/" + std::to_string(total_nodes) + " nodes fit";
  for (size_t i = 0; i < dropped.size(); ++i) {
    s += i == 0 ? ": " : ", ";
    s += std::to_string(dropped[i].second) + " " + std::string(ReasonText(dropped[i].first));
  }
  return s;
}

}  // namespace tessera
