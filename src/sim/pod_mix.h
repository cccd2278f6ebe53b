// Resampling a pod list into a different mix of work, the way Alibaba made the openb variants
// from the default trace: raise (or lower) the share of one kind of pod and keep the rest.
//
//   gpushare=F  F of the GPU pods share a GPU (one GPU, gpu_milli < 1000); the GPU pods are
//               redrawn with replacement from the sharing and the whole-GPU pods, their
//               count kept; CPU-only pods are kept.
//   multigpu=F  F of the GPU pods ask for several GPUs; redrawn the same way.
//   gpuspec=F   F of the GPU pods, chosen at random, are pinned to one GPU model, drawn in
//               proportion to the models' GPU counts in the node list (the published
//               gpuspec variants pin mostly to T4, G2 and P100, the commonest models).
//   cpu=F       the CPU-only pods' total CPU becomes F times what it was (cpu=2.5: 250%),
//               redrawn with replacement from the CPU-only pods; cpu=0 removes them.
//
// Several kinds combine ("gpushare=0.8,cpu=2"); they apply in the order above. Drawn copies
// get unique names ("<pod>~<k>"). The draw is seeded: a mix and a seed give the same list.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/spec.h"
#include "sim/openb_pods.h"

namespace tessera {

struct PodMix {
  std::map<std::string, double> share;  // kind -> F, kinds as above
  std::string ToString() const;         // "cpu=2,gpushare=0.8"
};

// "gpushare=0.8,cpu=2.5" -> a mix; InvalidArgument naming the bad part (unknown kind, a
// fraction outside 0..1, a cpu factor outside 0..10, a kind given twice).
Result<PodMix> ParsePodMix(const std::string& text);

// The resampled pod list. InvalidArgument when the list has no pod of a kind the mix needs
// (e.g. gpushare=0.8 on a list without sharing pods).
Result<std::vector<TracePod>> ResamplePods(const std::vector<TracePod>& pods, const PodMix& mix,
                                           const Spec& fleet, uint64_t seed);

}  // namespace tessera
