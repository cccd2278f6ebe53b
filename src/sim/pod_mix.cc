#include "sim/pod_mix.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "common/rng.h"
#include "common/text.h"

namespace tessera {
namespace {

const char* const kKinds[] = {"gpushare", "multigpu", "gpuspec", "cpu"};

bool Sharing(const TracePod& p) {
  return p.num_gpu == 1 && p.gpu_milli < 1000;
}

// `count` pods drawn with replacement from `from`, renamed so every name stays unique.
void Draw(const std::vector<const TracePod*>& from, size_t count, Rng& rng,
          std::map<std::string, int>& copies, std::vector<TracePod>& out) {
  for (size_t i = 0; i < count; ++i) {
    TracePod p = *from[static_cast<size_t>(rng.Uniform(from.size()))];
    int k = copies[p.name]++;
    if (k > 0) p.name += "~" + std::to_string(k);
    out.push_back(std::move(p));
  }
}

// Redraws the GPU pods so that `share` of them satisfy `is_kind`, keeping their count.
Status Redraw(std::vector<TracePod>& pods, double share, bool (*is_kind)(const TracePod&),
              const std::string& kind, Rng& rng) {
  std::vector<TracePod> kept;
  std::vector<const TracePod*> yes, no;
  std::vector<TracePod> gpu;
  for (TracePod& p : pods)
    (p.num_gpu > 0 ? gpu : kept).push_back(std::move(p));
  for (const TracePod& p : gpu)
    (is_kind(p) ? yes : no).push_back(&p);
  size_t want = static_cast<size_t>(std::llround(share * static_cast<double>(gpu.size())));
  if ((want > 0 && yes.empty()) || (want < gpu.size() && no.empty())) {
    return InvalidArgument(kind + "=" + std::to_string(share) +
                           ": the pod list has no pods to draw that share from");
  }
  std::map<std::string, int> copies;
  for (const TracePod& p : kept)
    copies[p.name] = 1;
  Draw(yes, want, rng, copies, kept);
  Draw(no, gpu.size() - want, rng, copies, kept);
  pods = std::move(kept);
  return Status::Ok();
}

}  // namespace

std::string PodMix::ToString() const {
  std::string s;
  for (const auto& [kind, f] : share) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", f);
    s += (s.empty() ? "" : ",") + kind + "=" + buf;
  }
  return s;
}

Result<PodMix> ParsePodMix(const std::string& text) {
  PodMix mix;
  for (const std::string& part : SplitCommas(text)) {
    size_t eq = part.find('=');
    if (eq == std::string::npos) {
      return InvalidArgument("\"" + part + "\": expected KIND=VALUE, e.g. gpushare=0.8");
    }
    std::string kind = part.substr(0, eq), value = part.substr(eq + 1);
    if (std::find(std::begin(kKinds), std::end(kKinds), kind) == std::end(kKinds)) {
      return InvalidArgument(
          "\"" + kind + "\" is not a kind of pod; expected gpushare, multigpu, gpuspec or cpu");
    }
    char* end = nullptr;
    double f = std::strtod(value.c_str(), &end);
    double max = kind == "cpu" ? 10 : 1;
    if (value.empty() || end != value.c_str() + value.size() || !(f >= 0 && f <= max)) {
      return InvalidArgument(kind + ": expected a number from 0 to " +
                             (kind == "cpu" ? "10" : "1") + ", got \"" + value + "\"");
    }
    if (!mix.share.emplace(kind, f).second) return InvalidArgument(kind + " is given twice");
  }
  return mix;
}

Result<std::vector<TracePod>> ResamplePods(const std::vector<TracePod>& pods, const PodMix& mix,
                                           const Spec& fleet, uint64_t seed) {
  SeededRng rng(seed);
  std::vector<TracePod> out = pods;
  if (auto it = mix.share.find("gpushare"); it != mix.share.end()) {
    TESSERA_RETURN_IF_ERROR(Redraw(out, it->second, &Sharing, "gpushare", rng));
  }
  if (auto it = mix.share.find("multigpu"); it != mix.share.end()) {
    TESSERA_RETURN_IF_ERROR(Redraw(
        out, it->second, [](const TracePod& p) { return p.num_gpu > 1; }, "multigpu", rng));
  }
  if (auto it = mix.share.find("gpuspec"); it != mix.share.end()) {
    // Models weighted by their GPUs in the node list.
    std::vector<std::pair<std::string, int64_t>> models;
    int64_t total = 0;
    for (size_t m = 0; m < fleet.device_models.size(); ++m) {
      int64_t n = 0;
      for (const Node& node : fleet.nodes)
        for (const Device& d : node.devices)
          n += d.model.value() == m;
      if (n > 0) models.push_back({fleet.device_models[m].name, n});
      total += n;
    }
    if (total == 0) return InvalidArgument("gpuspec: the node list has no GPUs");
    std::vector<size_t> gpu;
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].num_gpu > 0) gpu.push_back(i);
    rng.Shuffle(gpu);
    size_t want = static_cast<size_t>(std::llround(it->second * static_cast<double>(gpu.size())));
    for (size_t k = 0; k < gpu.size(); ++k) {
      TracePod& p = out[gpu[k]];
      p.spec.clear();
      if (k >= want) continue;
      int64_t pick = static_cast<int64_t>(rng.Uniform(static_cast<uint64_t>(total)));
      for (const auto& [name, n] : models) {
        if (pick < n) {
          p.spec.push_back(name);
          break;
        }
        pick -= n;
      }
    }
  }
  if (auto it = mix.share.find("cpu"); it != mix.share.end()) {
    std::vector<TracePod> kept;
    std::vector<TracePod> cpu_only;
    for (TracePod& p : out)
      (p.num_gpu == 0 ? cpu_only : kept).push_back(std::move(p));
    Milli had = 0;
    for (const TracePod& p : cpu_only)
      had += p.cpu;
    Milli want = static_cast<Milli>(std::llround(it->second * static_cast<double>(had)));
    if (want > 0 && cpu_only.empty()) {
      return InvalidArgument("cpu: the pod list has no CPU-only pods to draw from");
    }
    std::vector<const TracePod*> from;
    for (const TracePod& p : cpu_only)
      from.push_back(&p);
    std::map<std::string, int> copies;
    for (const TracePod& p : kept)
      copies[p.name] = 1;
    Milli drawn = 0;
    while (drawn < want) {
      Draw(from, 1, rng, copies, kept);
      drawn += kept.back().cpu;
    }
    out = std::move(kept);
  }
  return out;
}

}  // namespace tessera
