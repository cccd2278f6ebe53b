#include "model/fleet.h"

namespace tessera {

std::string_view ClusterTierName(ClusterTier t) {
  switch (t) {
    case ClusterTier::kDedicated:
      return "dedicated";
    case ClusterTier::kShared:
      return "shared";
    case ClusterTier::kElastic:
      return "elastic";
  }
  return "?";
}

std::optional<ClusterTier> ParseClusterTier(std::string_view s) {
  for (auto t : {ClusterTier::kDedicated, ClusterTier::kShared, ClusterTier::kElastic}) {
    if (ClusterTierName(t) == s) return t;
  }
  return std::nullopt;
}

std::string_view BackendKindName(BackendKind b) {
  switch (b) {
    case BackendKind::kSim:
      return "sim";
    case BackendKind::kEmulated:
      return "emulated";
    case BackendKind::kLocal:
      return "local";
    case BackendKind::kSlurm:
      return "slurm";
  }
  return "?";
}

std::optional<BackendKind> ParseBackendKind(std::string_view s) {
  for (auto b :
       {BackendKind::kSim, BackendKind::kEmulated, BackendKind::kLocal, BackendKind::kSlurm}) {
    if (BackendKindName(b) == s) return b;
  }
  return std::nullopt;
}

}  // namespace tessera
