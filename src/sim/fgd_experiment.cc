#include "sim/fgd_experiment.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>

#include "config/fleet_import.h"
#include "sched/placer.h"

namespace tessera {
namespace {

// The share a pod asks of each GPU, clipped as the original's pod conversion does.
Milli EffectiveMilli(const TracePod& p) {
  if (p.num_gpu == 0) return 0;
  return std::clamp<Milli>(p.gpu_milli, 0, 1000);
}

std::string SpecKey(const TracePod& p) {
  std::string s;
  for (const std::string& m : p.spec)
    s += (s.empty() ? "" : "|") + m;
  return s;
}

}  // namespace

Result<FgdExperiment> FgdExperiment::Load(const std::string& node_csv, const std::string& pod_csv,
                                          const PodMix* mix, uint64_t mix_seed) {
  auto fleet = ImportNodeListFile(NodeListFormat::kOpenb, node_csv, {});
  if (!fleet.ok()) return fleet.status();
  std::vector<std::string> models;
  for (const DeviceModel& m : fleet->spec.device_models)
    models.push_back(m.name);
  auto pods = ReadOpenbPods(pod_csv, &models);
  if (!pods.ok()) return pods.status();
  if (mix != nullptr) {
    pods = ResamplePods(*pods, *mix, fleet->spec, mix_seed);
    if (!pods.ok()) return InvalidArgument("--mix " + pods.status().message());
  }
  return FromData(std::move(fleet->spec), std::move(*pods));
}

Result<FgdExperiment> FgdExperiment::FromData(Spec fleet, std::vector<TracePod> pods) {
  FgdExperiment e;
  e.fleet_ = std::move(fleet);
  e.pods_ = std::move(pods);
  std::stable_sort(e.pods_.begin(), e.pods_.end(),
                   [](const TracePod& a, const TracePod& b) { return a.name < b.name; });
  auto cell = CellState::FromSpec(e.fleet_);
  if (!cell.ok()) return cell.status();
  e.cell_ = std::move(*cell);
  for (const Node& n : e.fleet_.nodes)
    e.total_gpus_ += static_cast<int64_t>(n.devices.size());
  if (e.total_gpus_ == 0) return InvalidArgument("the node list has no GPUs");
  ShapeTable table;
  for (const TracePod& p : e.pods_) {
    TaskShape s = e.ShapeOf(p);
    table.Intern(s);
    e.shapes_.push_back(s);
  }
  // Typical pods: keyed by (non-zero CPU, share, GPU count, spec), most popular first, ties to
  // the larger key; taken until they cover 95% of the pods.
  using Key = std::tuple<Milli, Milli, int32_t, std::string>;
  std::map<Key, std::pair<int64_t, size_t>> counts;  // key -> (count, a pod with it)
  for (size_t i = 0; i < e.pods_.size(); ++i) {
    const TracePod& p = e.pods_[i];
    Key k{e.shapes_[i].cpu_for_score, EffectiveMilli(p), p.num_gpu == 0 ? 0 : p.num_gpu,
          p.num_gpu == 0 ? std::string() : SpecKey(p)};
    auto& c = counts[k];
    if (c.first++ == 0) c.second = i;
  }
  std::vector<std::pair<Key, std::pair<int64_t, size_t>>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second.first != b.second.first) return a.second.first > b.second.first;
    return a.first > b.first;
  });
  const double total = static_cast<double>(e.pods_.size());
  int64_t cum = 0;
  size_t take = 0;
  while (take < sorted.size() && static_cast<double>(cum) < 0.95 * total) {
    cum += sorted[take++].second.first;
  }
  std::vector<TypicalTask> typical;
  for (size_t i = 0; i < take; ++i) {
    const TaskShape& s = e.shapes_[sorted[i].second.second];
    TypicalTask t;
    t.cpu = s.cpu_for_score;
    t.milli = s.cpu_only() ? 0 : s.milli;
    t.count = s.cpu_only() ? 0 : s.count;
    t.models = s.models;
    t.weight =
        (static_cast<double>(sorted[i].second.first) / total) / (static_cast<double>(cum) / total);
    typical.push_back(t);
  }
  std::vector<std::pair<TaskShape, double>> all;
  for (const TaskShape& s : e.shapes_)
    all.push_back({s, 1.0});
  e.workload_ = TargetWorkload(std::move(typical), PinnedDemand(all));
  return e;
}

TaskShape FgdExperiment::ShapeOf(const TracePod& p) const {
  TaskShape s;
  s.cpu = p.cpu;
  s.cpu_for_score = p.cpu == 0 ? 100 : p.cpu;  // the original's "non-zero CPU"
  s.memory = p.memory;
  Milli milli = EffectiveMilli(p);
  if (milli > 0) {
    s.count = p.num_gpu;
    s.milli = milli;
    if (!p.spec.empty()) {
      s.models = 0;
      for (const std::string& m : p.spec) {
        if (auto id = fleet_.FindModel(m)) s.models |= ModelMask{1} << id->value();
      }
    }
  }
  return s;
}

std::vector<uint32_t> FgdExperiment::ArrivalOrder(Rng& rng, double tune) const {
  rng.Next();  // the original draws (and discards) one value first
  std::vector<uint32_t> order(pods_.size());
  std::iota(order.begin(), order.end(), 0);
  rng.Shuffle(order);
  auto gpu = [&](uint32_t i) { return shapes_[i].total_milli(); };
  int64_t requested = 0;
  for (uint32_t i : order)
    requested += gpu(i);
  const int64_t target = std::llround(tune * 1000) * total_gpus_ * 1000 / 1000;
  if (requested < target) {
    // Resample from the name-sorted originals, appended after the shuffled ones. The stop
    // test uses the per-GPU share (the original's quirk), so multi-GPU draws may overshoot.
    while (true) {
      uint32_t i = static_cast<uint32_t>(rng.Uniform(pods_.size()));
      if (requested + shapes_[i].milli > target) break;
      order.push_back(i);
      requested += gpu(i);
    }
  } else {
    while (requested > target && !order.empty()) {
      size_t k = static_cast<size_t>(rng.Uniform(order.size()));
      requested -= gpu(order[k]);
      order.erase(order.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  for (int i = 0; i < 10; ++i)
    rng.Next();  // the original's informer jitter draws
  return order;
}

FgdRun FgdExperiment::Run(Scorer& scorer, uint64_t seed, double tune) const {
  SeededRng rng(seed);
  FgdRun run;
  run.policy = std::string(scorer.name());
  run.seed = seed;
  std::vector<uint32_t> order = ArrivalOrder(rng, tune);

  // Node ranks: nodes sorted by name, then a random permutation (Go's rand.Perm).
  CellState cell = cell_;
  std::vector<uint32_t> by_name(cell.node_count());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::stable_sort(by_name.begin(), by_name.end(),
                   [&](uint32_t a, uint32_t b) { return cell.node_name(a) < cell.node_name(b); });
  std::vector<uint32_t> perm(by_name.size());
  for (uint32_t i = 0; i < perm.size(); ++i) {
    uint32_t j = static_cast<uint32_t>(rng.Uniform(i + 1));
    perm[i] = perm[j];
    perm[j] = i;
  }
  std::vector<uint32_t> rank(cell.node_count());
  for (uint32_t i = 0; i < by_name.size(); ++i)
    rank[by_name[i]] = perm[i];
  cell.SetRanks(rank);

  // Fragmentation per node, kept current as pods land.
  auto frag_of = [&](uint32_t node) {
    uint16_t free[64];
    auto devs = cell.devices(node);
    size_t n = std::min<size_t>(devs.size(), 64);
    for (size_t k = 0; k < n; ++k)
      free[k] = devs[k].free;
    return workload_.Fragmentation(cell.node(node).cpu_free, {free, n}, cell.node(node).models);
  };
  std::vector<double> frag(cell.node_count());
  double frag_sum = 0;
  int64_t idle = total_gpus_ * 1000;
  for (uint32_t i = 0; i < cell.node_count(); ++i)
    frag_sum += frag[i] = frag_of(i);

  Placer placer(scorer);
  const double gpus = static_cast<double>(total_gpus_);
  std::vector<double> arrive_ratio, allo, frag_pct, frag_ratio;
  arrive_ratio.reserve(order.size());
  int64_t arrived = 0, used = 0;
  run.outcomes.reserve(order.size());
  for (uint32_t pod : order) {
    const TaskShape& shape = shapes_[pod];
    arrived += static_cast<int64_t>(pods_[pod].num_gpu) * shape.milli;
    FgdPodOutcome out;
    out.pod = pod;
    PlaceResult r = placer.Place(cell, shape, &rng);
    if (r.outcome == PlaceOutcome::kPlaced) {
      Status s = cell.Commit(r.placement);
      CHECK(s.ok()) << s.ToString();
      scorer.OnCommit(cell, r.placement);
      uint32_t node = r.placement.node;
      used += shape.total_milli();
      idle -= shape.total_milli();
      frag_sum -= frag[node];
      frag_sum += frag[node] = frag_of(node);
      out.node = node;
      out.devices = r.placement.devices;
    } else {
      ++run.failed;
    }
    run.outcomes.push_back(std::move(out));
    arrive_ratio.push_back(PyRound(static_cast<double>(arrived) / gpus / 10, 0));
    allo.push_back(PyRound(static_cast<double>(used) / gpus / 10, 2));
    frag_pct.push_back(PyRound(frag_sum / 1000 / gpus * 100, 2));
    frag_ratio.push_back(idle > 0 ? frag_sum / static_cast<double>(idle) * 100 : 0);
  }
  run.allo = DiscreteCurve(arrive_ratio, allo, true);
  run.frag = DiscreteCurve(arrive_ratio, frag_pct, true);
  run.frag_ratio = DiscreteCurve(arrive_ratio, frag_ratio, false);
  return run;
}

}  // namespace tessera
