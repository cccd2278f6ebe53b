#include "sched/global.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <tuple>

#include "sched/communication.h"

namespace tessera {
namespace {

constexpr double kHourMs = 3600.0 * 1000.0;

// "H800/A100" ("CPU only" for none): appended to `out`.
void AppendModelNames(std::string& out, const Spec& spec, ModelMask mask) {
  const size_t start = out.size();
  for (ModelMask m = mask; m != 0; m &= m - 1) {
    size_t i = static_cast<size_t>(std::countr_zero(m));
    if (i >= spec.device_models.size()) break;
    if (out.size() > start) out += '/';
    out += spec.device_models[i].name;
  }
  if (out.size() == start) out += "CPU only";
}

// `v` with two decimals ("0.00", never "-0.00"), appended to `out`.
void AppendFixed(std::string& out, double v) {
  if (std::fabs(v) < 0.005) v = 0;
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 2);
  if (ec != std::errc()) end = buf + std::snprintf(buf, sizeof buf, "%.2f", v);
  out.append(buf, end);
}

// ", model step 2 of 3" for a job with several preference steps (nothing for one).
void AppendStep(std::string& out, const GlobalChoice& choice, const ClusterScore& s) {
  if (choice.steps < 2) return;
  out += ", model step ";
  out += std::to_string(s.step + 1);
  out += " of ";
  out += std::to_string(choice.steps);
}

// The explanations are built by appending to one string: a start's text is made on the
// engine's thread at every start, and its temporaries were most of its cost.
void AppendPassed(std::string& out, const Spec& spec, const GlobalRequest& request,
                  const GlobalChoice& choice, const std::string& blocked_why) {
  bool first = true;
  for (const Passed& p : choice.passed) {
    const Cluster& cluster = spec.clusters[p.cluster];
    if (!first) out += ", ";
    first = false;
    out += cluster.name;
    out += ": ";
    switch (p.code) {
      case PassCode::kRule:
        out += ReasonCode(*request.constraints->verdicts[p.cluster]);
        out += " (";
        out += request.constraints->excluded_by[p.cluster];
        out += ')';
        break;
      case PassCode::kTier:
        out += "TierNotAllowed (";
        out += ClusterTierName(cluster.tier);
        out += ')';
        break;
      case PassCode::kBlocked:
        out += blocked_why;
        break;
      case PassCode::kUnavailable:
        out += "Unavailable (no schedulable node)";
        break;
      case PassCode::kCpu:
        out += "InsufficientCpu (no node with ";
        out += FormatMilli(p.need);
        out += " free CPU)";
        break;
      case PassCode::kNoModel:
        out += "ModelNotAllowed (none of the job's device models)";
        break;
      case PassCode::kOtherModels:
        // A job of several models tries them apart (the fastest first): this cluster's are
        // weighed in another try, not refused.
        out += "OtherModels (its ";
        AppendModelNames(out, spec, p.models);
        out += " is not in this try of ";
        AppendModelNames(out, spec, choice.only);
        if (!choice.why_only.empty()) {
          out += ": ";
          out += choice.why_only;
        }
        out += ')';
        break;
      case PassCode::kTooSmall:
        out += "TooSmall (";
        out += FormatMilli(p.have);
        out += ' ';
        AppendModelNames(out, spec, p.models);
        out += " in all, the job needs ";
        out += FormatMilli(p.need);
        out += ')';
        break;
      case PassCode::kBusy:
        out += "Busy (";
        out += FormatMilli(p.have);
        out += ' ';
        AppendModelNames(out, spec, p.models);
        out += " free of ";
        out += FormatMilli(p.need);
        out += " needed";
        if (p.queued > 0) {
          out += "; ";
          out += FormatMilli(p.queued);
          out += " more wanted by other pending jobs";
        }
        out += ')';
        break;
      case PassCode::kFragmented:
      case PassCode::kNoNode:
        out += "Fragmented (no node with ";
        out += FormatMilli(p.need);
        out += " free ";
        AppendModelNames(out, spec, p.models);
        out += ')';
        break;
      case PassCode::kNoLeaf:
        out += "Fragmented (no leaf switch with ";
        out += FormatMilli(p.need);
        out += " free ";
        AppendModelNames(out, spec, p.models);
        out += "; at most ";
        out += FormatMilli(p.have);
        out += ')';
        break;
    }
  }
}

}  // namespace

GlobalRequest MakeGlobalRequest(const Spec& spec, const RegionPaths& paths, const Job& job,
                                std::shared_ptr<const JobConstraints> constraints,
                                ModelMask accepted, bool cpu_only, const WeightsRule* weights) {
  GlobalRequest r;
  r.constraints = std::move(constraints);
  if (!cpu_only) r.model_steps = ModelPreference(spec, job, accepted);
  r.job_class = job.job_class;
  for (const TaskGroup& g : job.task_groups) {
    r.tasks += g.count;
    Milli each = g.request.devices.TotalMilli();
    r.devices += static_cast<Milli>(g.count) * each;
    r.largest_task = std::max(r.largest_task, each);
    r.largest_task_cpu = std::max(r.largest_task_cpu, g.request.cpu);
  }
  r.require =
      job.gang.require < TopologyLevel::kCluster ? job.gang.require : TopologyLevel::kCluster;
  r.transfer.assign(spec.clusters.size(), 0);
  for (size_t c = 0; c < spec.clusters.size(); ++c) {
    for (DatasetId d : job.datasets) {
      if (!d.valid() || d.value() >= spec.datasets.size()) continue;
      std::optional<DatasetCopy> near =
          NearestCopy(paths, spec.datasets[d.value()], spec.clusters[c].region);
      // An unreachable dataset counts as a day away: possible, but last.
      r.transfer[c] += near ? near->transfer_time : 24 * 3600 * 1000;
    }
  }
  if (weights != nullptr) {
    const WeightsRule& w = *weights;
    r.w_speed = static_cast<double>(w.speed) / 1000.0;
    r.w_cost = static_cast<double>(w.cost) / 1000.0;
    r.w_locality = static_cast<double>(w.locality) / 1000.0;
    r.w_balance = static_cast<double>(w.balance) / 1000.0;
    r.w_spread = static_cast<double>(w.spread) / 1000.0;
  }
  return r;
}

namespace {

// Why cluster `c` is passed over before its models are looked at; nothing when it is not.
std::optional<Passed> ClusterGate(const Spec& spec, const ClusterSummaries& summaries,
                                  const GlobalRequest& request, const std::vector<bool>& blocked,
                                  uint32_t c) {
  const JobConstraints& k = *request.constraints;
  auto pass = [&](PassCode code, Milli have = 0, Milli need = 0) {
    return Passed{c, code, 0, have, need};
  };
  if (!k.allows(ClusterId(c))) return pass(PassCode::kRule);
  if (std::find(k.tier_order.begin(), k.tier_order.end(), spec.clusters[c].tier) ==
      k.tier_order.end()) {
    return pass(PassCode::kTier);
  }
  if (c < blocked.size() && blocked[c]) return pass(PassCode::kBlocked);
  if (summaries.Health(c) == 0) return pass(PassCode::kUnavailable);
  if (summaries.LargestNodeCpu(c) < request.largest_task_cpu) {
    return pass(PassCode::kCpu, summaries.LargestNodeCpu(c), request.largest_task_cpu);
  }
  return std::nullopt;
}

// What a cluster has of a step's models now: in all, free, on its largest free node (and
// leaf), and their cheapest price.
struct StepRoom {
  Milli capacity = 0, free = 0, largest = 0, largest_leaf = 0;
  Milli cheapest = -1;
};

StepRoom RoomFor(const ClusterSummaries& summaries, uint32_t c, ModelMask models) {
  StepRoom room;
  room.capacity = summaries.Capacity(c, models);
  room.free = summaries.Free(c, models);
  for (ModelMask m = models; m != 0; m &= m - 1) {
    uint16_t model = static_cast<uint16_t>(std::countr_zero(m));
    room.largest = std::max(room.largest, summaries.LargestNodeFree(c, model));
    room.largest_leaf = std::max(room.largest_leaf, summaries.LargestLeafFree(c, model));
    Milli price = summaries.Price(c, model);
    if (room.cheapest < 0 || price < room.cheapest) room.cheapest = price;
  }
  return room;
}

// The level a gang would span in a cluster with `room`, by its summary: one node when a node
// has its devices free, one leaf switch when a leaf has, else a spine.
TopologyLevel Spans(const GlobalRequest& request, const StepRoom& room) {
  if (request.devices <= room.largest) return TopologyLevel::kNode;
  if (request.devices <= room.largest_leaf) return TopologyLevel::kLeaf;
  return TopologyLevel::kSpine;
}

// Why the step's `models` on cluster `c` cannot take the job now; nothing when they can.
std::optional<Passed> StepRefusal(const ClusterSummaries& summaries, const GlobalRequest& request,
                                  uint32_t c, ModelMask models, const StepRoom& room) {
  if (room.capacity < request.devices) {
    return Passed{c, PassCode::kTooSmall, models, room.capacity, request.devices};
  }
  if (room.free < request.devices) {
    const Milli own = request.pressure_share * std::popcount(models);
    return Passed{
        c,         PassCode::kBusy, models,
        room.free, request.devices, std::max<Milli>(0, summaries.Pressure(c, models) - own)};
  }
  if (room.largest < request.largest_task) {
    return Passed{c, PassCode::kFragmented, models, room.largest, request.largest_task};
  }
  if (request.require <= TopologyLevel::kNode && room.largest < request.devices) {
    return Passed{c, PassCode::kNoNode, models, room.largest, request.devices};
  }
  if (request.require == TopologyLevel::kLeaf && room.largest_leaf < request.devices) {
    return Passed{c, PassCode::kNoLeaf, models, room.largest_leaf, request.devices};
  }
  return std::nullopt;
}

// The cluster's score for the job without its models: tier, data locality and spread.
ClusterScore BaseScore(const Spec& spec, const GlobalRequest& request, uint32_t c,
                       const std::vector<int32_t>& siblings, int32_t replicas, bool spread) {
  const JobConstraints& k = *request.constraints;
  ClusterScore base;
  base.cluster = c;
  base.tier_rank = static_cast<size_t>(
      std::find(k.tier_order.begin(), k.tier_order.end(), spec.clusters[c].tier) -
      k.tier_order.begin());
  base.locality = -request.w_locality * static_cast<double>(request.transfer[c]) /
                  (static_cast<double>(request.transfer[c]) + kHourMs);
  if (spread) {
    base.spread =
        -request.w_spread * static_cast<double>(siblings[c]) / static_cast<double>(replicas);
  }
  return base;
}

}  // namespace

GlobalChoice ChooseClusters(const Spec& spec, const ClusterSummaries& summaries,
                            const GlobalRequest& request, ModelMask only,
                            const std::vector<bool>& blocked,
                            const std::vector<int32_t>& siblings) {
  GlobalChoice out;
  ModelMask job_models = 0;  // every model of every preference step
  for (const auto& step : request.model_steps)
    job_models |= step.second;
  out.only = only & job_models;
  out.steps = request.model_steps.size();
  int32_t replicas = 0;
  for (int32_t n : siblings)
    replicas += n;
  out.spread = replicas > 0 && request.w_spread > 0;
  for (uint32_t c = 0; c < summaries.size(); ++c) {
    if (std::optional<Passed> gate = ClusterGate(spec, summaries, request, blocked, c)) {
      out.passed.push_back(*gate);
      continue;
    }
    const ClusterScore base = BaseScore(spec, request, c, siblings, replicas, out.spread);
    if (request.model_steps.empty()) {  // CPU-only: CPU prices, room on CPU-only nodes
      ClusterScore s = base;
      s.cost = summaries.max_cpu_price() > 0
                   ? -request.w_cost * static_cast<double>(summaries.CpuPrice(c)) /
                         static_cast<double>(summaries.max_cpu_price())
                   : 0.0;
      const Milli capacity = summaries.CpuNodeCapacity(c);
      s.balance = capacity > 0 ? request.w_balance * static_cast<double>(summaries.CpuNodeFree(c)) /
                                     static_cast<double>(capacity)
                               : 0.0;
      s.score = s.cost + s.balance + base.locality + base.spread;
      out.candidates.push_back(s);
      continue;
    }
    std::optional<Passed> first_why;
    size_t before = out.candidates.size();
    for (size_t step = 0; step < request.model_steps.size(); ++step) {
      const auto& [speed, step_models] = request.model_steps[step];
      ModelMask models = step_models & only & summaries.models(c);
      if (models == 0) continue;
      const StepRoom room = RoomFor(summaries, c, models);
      if (std::optional<Passed> why = StepRefusal(summaries, request, c, models, room)) {
        if (!first_why) first_why = why;
        continue;
      }
      ClusterScore s = base;
      s.models = models;
      s.step = step;
      s.speed = request.w_speed * static_cast<double>(speed) / 1000.0 *
                CommunicationFactor(spec.clusters[c].interconnect, Spans(request, room),
                                    request.job_class, request.tasks);
      s.cost = summaries.max_price() > 0 ? -request.w_cost * static_cast<double>(room.cheapest) /
                                               static_cast<double>(summaries.max_price())
                                         : 0.0;
      s.balance =
          request.w_balance * static_cast<double>(room.free) / static_cast<double>(room.capacity);
      s.score = s.speed + s.cost + s.locality + s.balance + s.spread;
      out.candidates.push_back(s);
    }
    if (out.candidates.size() != before) continue;
    if (first_why) {
      out.passed.push_back(*first_why);
    } else if (ModelMask elsewhere = job_models & summaries.models(c); elsewhere != 0) {
      out.passed.push_back({c, PassCode::kOtherModels, elsewhere, 0, 0});
    } else {
      out.passed.push_back({c, PassCode::kNoModel, 0, 0, 0});
    }
  }
  std::sort(out.candidates.begin(), out.candidates.end(),
            [](const ClusterScore& a, const ClusterScore& b) {
              return std::make_tuple(a.tier_rank, a.step, -a.score, a.cluster) <
                     std::make_tuple(b.tier_rank, b.step, -b.score, b.cluster);
            });
  return out;
}

std::string ModelNames(const Spec& spec, ModelMask mask) {
  std::string out;
  AppendModelNames(out, spec, mask);
  return out;
}

std::string DescribePassed(const Spec& spec, const GlobalRequest& request,
                           const GlobalChoice& choice, const std::string& blocked_why) {
  std::string out;
  AppendPassed(out, spec, request, choice, blocked_why);
  return out;
}

bool AnyBlocked(const GlobalChoice& choice) {
  return std::any_of(choice.passed.begin(), choice.passed.end(),
                     [](const Passed& p) { return p.code == PassCode::kBlocked; });
}

std::string DescribeChoice(const Spec& spec, const GlobalRequest& request,
                           const GlobalChoice& choice, uint32_t chosen,
                           const std::string& blocked_why) {
  std::string out;
  out.reserve(256 + 64 * (choice.candidates.size() + choice.passed.size()));
  out += spec.clusters[chosen].name;
  const ClusterScore* picked = nullptr;
  for (const ClusterScore& s : choice.candidates) {
    if (s.cluster != chosen) continue;
    picked = &s;
    out += " (";
    out += ClusterTierName(spec.clusters[chosen].tier);
    out += ", ";
    AppendModelNames(out, spec, s.models);
    AppendStep(out, choice, s);
    out += ", score ";
    AppendFixed(out, s.score);
    out += " = speed ";
    AppendFixed(out, s.speed);
    out += " cost ";
    AppendFixed(out, s.cost);
    out += " locality ";
    AppendFixed(out, s.locality);
    out += " balance ";
    AppendFixed(out, s.balance);
    if (choice.spread) {
      out += " spread ";
      AppendFixed(out, s.spread);
    }
    out += ')';
    break;
  }
  // The candidates are ordered by tier, then model step, then score: one of another tier or
  // step says which, so that a higher score placed after the chosen one reads right.
  bool first = true;
  for (const ClusterScore& s : choice.candidates) {
    if (s.cluster == chosen) continue;
    out += first ? "; other candidates: " : ", ";
    first = false;
    out += spec.clusters[s.cluster].name;
    out += ' ';
    AppendFixed(out, s.score);
    if (picked == nullptr) continue;
    if (s.tier_rank != picked->tier_rank) {
      out += " (";
      out += ClusterTierName(spec.clusters[s.cluster].tier);
      out += s.tier_rank > picked->tier_rank ? ", a later tier)" : ", an earlier tier)";
    } else if (s.step != picked->step) {
      out += " (";
      AppendModelNames(out, spec, s.models);
      AppendStep(out, choice, s);
      out += ')';
    }
  }
  if (!choice.passed.empty()) {
    out += "; passed over: ";
    AppendPassed(out, spec, request, choice, blocked_why);
  }
  return out;
}

}  // namespace tessera
