// Preemption (docs/architecture.md §3, step 5): who may be a victim (sched/victims.h decides;
// the engine supplies quotas, holds and the ordering), whether any set of them could make room,
// and the search that releases candidates on the cell, cheapest first, to find the fewest.
#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_cycle.h"
#include "sched/constraints.h"
#include "sched/fleet_view.h"
#include "sched/policy_match.h"
#include "sched/preemption_cost.h"
#include "sched/room_bound.h"

namespace tessera {

namespace {

// Whether the preemption cost model bills `cand`'s stop to `preemptor` in full, its wait again
// included: a stop of a lower class. A shrink loses nothing (the run goes on); a victim of the
// preemptor's own class is an ordering's displacement, billed only its waste and only beside
// others (BillOf).
bool Billed(const VictimCandidate& cand, const JobRecord& preemptor) {
  return cand.shrink_to == 0 && cand.priority < preemptor.priority;
}

}  // namespace

const PreemptionRule* Engine::PreemptionRuleOf(const JobRecord& j) const {
  std::vector<const PolicyRule*> rules = MatchingRules(spec_, RuleKind::kPreemption, j.job);
  return rules.empty() ? nullptr : &std::get<PreemptionRule>(rules.front()->body);
}

bool Engine::MayPreempt(const JobRecord& preemptor, const JobRecord& victim, ModelMask reclaim,
                        TimeMs now, uint64_t holds) const {
  if (!victim.running() || victim.id == preemptor.id) return false;
  // Held devices come back from whoever borrowed them (preemptibly, by the rule's terms), of no
  // higher class.
  if (holds != 0) {
    return victim.priority <= preemptor.priority && victim.preemptible &&
           holds_.Borrows(victim.placements, compiled_[victim.id.value()]->holds, holds);
  }
  bool reclaimed = false;
  if (reclaim != 0) {
    // Only capacity the victim's tenant borrowed of a reclaimed model: the tenant holds more
    // of it than its guarantee (the preemptor's own tenant never reclaims from itself). Of any
    // class, as Kueue's reclaimWithinCohort: Any: what was borrowed was lent preemptibly.
    if (victim.job.tenant == preemptor.job.tenant) return false;
    for (const Placement& p : victim.placements) {
      auto devices = cell_.devices(p.node);
      for (const DeviceUse& u : p.devices) {
        uint16_t m = devices[u.index].model;
        if (((reclaim >> m) & 1) && quotas_.Borrowing(victim.job.tenant, m)) reclaimed = true;
      }
    }
    if (!reclaimed) return false;
  } else {
    if (victim.priority > preemptor.priority) return false;  // never a higher class
    // Nor, across tenants, a run within its own tenant's guarantee: another tenant takes only
    // what was borrowed, by reclaim (as Kueue preempts across ClusterQueues by default). Else a
    // tenant's reclaimed borrowers of a higher class would take the devices back at once.
    if (victim.job.tenant != preemptor.job.tenant && !victim.borrowing && UsesGuardedModels(victim))
      return false;
    bool lower = victim.priority < preemptor.priority;
    bool displaced =
        !lower && ordering_.preemptive() && ordering_.Displaces(preemptor, victim, now);
    if (!lower && !displaced) return false;
  }
  // The first matching preemption rule narrows who may be preempted (a reclaim of borrowed
  // capacity ignores it, and `preemptible: false`: borrowed capacity is lent preemptibly).
  if (!RuleAdmitsVictim(spec_, cell_, PreemptionRuleOf(preemptor),
                        {victim.job, victim.priority, victim.preemptible, victim.placements},
                        reclaimed))
    return false;
  // Freeing it must help: it holds devices of a model the preemptor accepts (in a reclaim,
  // of a reclaimed model).
  const ModelMask mask =
      compiled_[preemptor.id.value()]->mask & (reclaim ? reclaim : ~ModelMask{0});
  return FreesModels(cell_, victim.placements, mask);
}

bool Engine::UsesGuardedModels(const JobRecord& j) const {
  for (const Placement& p : j.placements) {
    auto devices = cell_.devices(p.node);
    for (const DeviceUse& u : p.devices)
      if (quotas_.Guarded(devices[u.index].model)) return true;
  }
  return false;
}

ModelMask Engine::GuaranteeModels(const JobRecord& j) const {
  const Compiled& c = *compiled_[j.id.value()];
  // Tried whole, an elastic gang asks for more than its signature's start.
  return c.whole ? WithinGuaranteeOn(j.job.tenant, c.reachable, c.request_milli())
                 : GuaranteeModelsOf(c.sig);
}

ModelMask Engine::GuaranteeModelsOf(uint32_t sig) const {
  SignatureFacts& s = signatures_[sig];
  if (s.quota_version != quotas_.version()) {
    s.within = WithinGuaranteeOn(s.tenant, s.mask, s.start_milli);
    s.quota_version = quotas_.version();
  }
  return s.within;
}

ModelMask Engine::WithinGuaranteeOn(TenantId tenant, ModelMask mask, Milli request) const {
  ModelMask within = 0;
  for (ModelMask m = mask; m != 0; m &= m - 1) {
    const auto model = static_cast<size_t>(std::countr_zero(m));
    if (model < cell_.model_count() && quotas_.Guarded(model) &&
        quotas_.WithinGuarantee(tenant, model, request))
      within |= ModelMask{1} << model;
  }
  return within;
}

bool Engine::TryPreempt(JobRecord& j, CycleState& cs) {
  if (PreemptFor(j, cs, 0)) return true;
  // A job owed its guarantee reclaims once it has queued scheduler.reclaimAfter: until then the
  // borrowers' own ends may give the room back (YARN's minSharePreemptionTimeout). It looks
  // again when that time comes.
  if (const ModelMask reclaim = GuaranteeModels(j); reclaim != 0) {
    const TimeMs due = j.queued_since + spec_.scheduler.reclaim_after;
    if (cs.now < due) {
      cs.protected_until = std::min(cs.protected_until, due);
    } else if (PreemptFor(j, cs, reclaim)) {
      return true;
    }
  }
  const uint64_t holds = holds_.Reclaimable(compiled_[j.id.value()]->holds);
  return holds != 0 && PreemptFor(j, cs, 0, holds);
}

bool Engine::Frees(const JobRecord& v, const Compiled& c, ModelMask mask, bool waiting) const {
  for (const Placement& p : v.placements) {
    const NodeState& node = cell_.node(p.node);
    if (c.global && (c.global->constraints->verdicts[node.cluster] ||
                     (waiting && spec_.clusters[node.cluster].tier == ClusterTier::kElastic)))
      continue;
    if (c.mask == 0) return true;  // a CPU-only job needs only the node's CPU and memory
    // Its devices, or the CPU and memory beside devices of the mask.
    if ((node.models & mask) != 0) return true;
  }
  return false;
}

QuotaRoom Engine::QuotaRoomFor(const JobRecord& j, const Compiled& c, ModelMask mask) const {
  if (c.mask == 0) return {0, true};  // CPU-only: no device quota
  Milli smallest = std::numeric_limits<Milli>::max();
  for (const GangGroup& g : c.gang.groups)
    if (!g.shape.cpu_only()) smallest = std::min(smallest, g.shape.total_milli());
  return tessera::QuotaRoomFor(quotas_, j.job.tenant, mask, c.start_milli, smallest);
}

bool Engine::RoomInScope(const JobRecord& j, const Compiled& c, ModelMask mask, TimeMs now,
                         const std::vector<Milli>* freed) const {
  if (c.mask == 0) return true;  // CPU-only: no device count to check
  const size_t models = cell_.model_count();
  auto released = [&](size_t cl) {
    Milli sum = 0;
    for (size_t m = 0; freed && m < models; ++m)
      if ((mask >> m) & 1) sum += (*freed)[cl * models + m];
    return sum;
  };
  if (!c.global) {
    Milli free = FreeOnMask(mask);
    for (size_t cl = 0; freed && cl < spec_.clusters.size(); ++cl)
      free += released(cl);
    return free >= c.start_milli;
  }
  // A gang stays within one cluster: one cluster it may use must hold its devices.
  const bool waiting = ElasticClosed(j, c, now);
  for (size_t cl = 0; cl < spec_.clusters.size(); ++cl) {
    if (c.global->constraints->verdicts[cl]) continue;
    if (waiting && spec_.clusters[cl].tier == ClusterTier::kElastic) continue;
    if (summaries_.Free(static_cast<uint32_t>(cl), mask) + released(cl) >= c.start_milli)
      return true;
  }
  return false;
}

std::optional<ModelMask> Engine::CouldMakeRoom(const JobRecord& j, const Compiled& c,
                                               ModelMask mask, const std::vector<uint32_t>& victims,
                                               TimeMs now) {
  // What the victims hold, by tenant and model (for the quota) and by cluster and model (for
  // the free counts).
  const size_t models = cell_.model_count();
  std::vector<Milli> freed(std::max<size_t>(spec_.clusters.size(), 1) * models, 0);
  std::map<uint32_t, std::vector<Milli>> by_tenant;
  for (uint32_t id : victims) {
    const JobRecord& v = jobs_[id];
    std::vector<Milli>& usage = by_tenant[v.job.tenant.value()];
    usage.resize(models, 0);
    for (const Placement& p : v.placements) {
      const size_t cl = spec_.clusters.empty() ? 0 : cell_.node(p.node).cluster;
      auto devices = cell_.devices(p.node);
      for (const DeviceUse& u : p.devices) {
        freed[cl * models + devices[u.index].model] += u.milli;
        usage[devices[u.index].model] += u.milli;
      }
    }
  }
  // The quota with every victim's usage refunded, then charged back.
  for (const auto& [tenant, usage] : by_tenant)
    quotas_.Refund(TenantId(tenant), usage);
  const QuotaRoom room = QuotaRoomFor(j, c, mask);
  const ModelMask usable = UsableModels(j, c, mask);
  for (const auto& [tenant, usage] : by_tenant)
    quotas_.Charge(TenantId(tenant), usage);
  if (!room.split || !RoomInScope(j, c, room.whole != 0 ? room.whole : mask, now, &freed))
    return std::nullopt;
  return usable;
}

ModelMask Engine::UsableModels(const JobRecord& j, const Compiled& c, ModelMask mask) const {
  Milli smallest = std::numeric_limits<Milli>::max();
  for (const GangGroup& g : (c.whole ? c.whole_gang : c.gang).groups)
    if (!g.shape.cpu_only()) smallest = std::min(smallest, g.shape.total_milli());
  ModelMask usable = 0;
  for (ModelMask m = mask; m != 0; m &= m - 1) {
    const auto model = static_cast<size_t>(std::countr_zero(m));
    if (quotas_.Headroom(j.job.tenant, model) >= smallest) usable |= ModelMask{1} << model;
  }
  return usable;
}

std::optional<size_t> Engine::LeastSufficientByCount(const JobRecord& j, const Compiled& c,
                                                     ModelMask mask,
                                                     const std::vector<VictimCandidate>& candidates,
                                                     TimeMs now) const {
  std::vector<bool> allowed;
  if (c.global) {
    const bool waiting = ElasticClosed(j, c, now);
    for (size_t cl = 0; cl < spec_.clusters.size(); ++cl)
      allowed.push_back(!c.global->constraints->verdicts[cl] &&
                        !(waiting && spec_.clusters[cl].tier == ClusterTier::kElastic));
  }
  RoomBound bound(cell_, c.whole ? c.whole_gang : c.gang, mask, std::move(allowed),
                  c.global.has_value());
  // Released as the search would: a run's shrink gives up its tasks after its minimum, its stop
  // whatever it still holds.
  std::unordered_map<uint32_t, size_t> from;  // by job: released from this task on
  for (size_t k = 0; k < candidates.size(); ++k) {
    const JobRecord& v = jobs_[candidates[k].id];
    auto [it, fresh] = from.try_emplace(candidates[k].id, v.placements.size());
    for (size_t i = static_cast<size_t>(candidates[k].shrink_to); i < it->second; ++i)
      bound.Release(v.placements[i]);
    it->second = std::min(it->second, static_cast<size_t>(candidates[k].shrink_to));
    if (bound.Fits()) return k + 1;
  }
  return std::nullopt;
}

Millis Engine::WaitAvoided(const JobRecord& j, const Compiled& c, TimeMs now, bool capped) const {
  std::optional<Millis> cap =
      capped ? typical_waits_.Of(j.priority, c.mask == 0 ? 0 : c.start_milli) : std::nullopt;
  if (cap) cap = std::max(*cap, now - j.queued_since);
  // The running jobs' ends are walked up to the cap only: past it, the cap is the wait.
  const TimeMs horizon = cap && *cap < kUnknownWait ? now + *cap : kNever;
  const std::optional<Reservation> r = ComputeReservation(j, now, 0, horizon);
  const TimeMs shadow = r ? r->shadow : now;
  const Millis until = shadow != kNever ? shadow - now : kUnknownWait;
  return cap ? std::min(until, *cap) : until;
}

bool Engine::MightPay(const JobRecord& j, const Compiled& c, ModelMask mask,
                      const std::vector<VictimCandidate>& candidates, Millis wait,
                      TimeMs now) const {
  // Billed are the stops of a lower class; a shrink or a displacement within the class comes
  // free, and makes room first.
  Milli missing = c.start_milli - FreeOnMask(mask);
  int32_t lowest = std::numeric_limits<int32_t>::max();
  std::vector<Milli> frees;  // of the billed ones
  std::vector<double> lost, times;
  for (const VictimCandidate& cand : candidates) {
    const JobRecord& v = jobs_[cand.id];
    const Milli f = UsableOnMask(
        std::span<const Placement>(v.placements)
            .subspan(std::min(v.placements.size(), static_cast<size_t>(cand.shrink_to))),
        mask);
    if (!Billed(cand, j)) {
      missing -= f;
      continue;
    }
    lowest = std::min(lowest, cand.priority);
    frees.push_back(f);
    PreemptionBill one;
    one.Add(StopOf(v, now));
    lost.push_back(one.lost);
    times.push_back(one.requeues);
  }
  if (frees.empty()) return true;
  // The fewest billed victims whose devices could make up the rest, largest first; at least
  // one (a set without any costs nothing, but this asks whether billed ones may be in it).
  std::sort(frees.begin(), frees.end(), std::greater<>());
  size_t fewest = 0;
  for (; fewest < frees.size() && missing > 0; ++fewest)
    missing -= frees[fewest];
  fewest = std::max<size_t>(fewest, 1);
  // Any such set loses at least the `fewest` smallest losses and waits again at least the
  // `fewest` smallest times.
  PreemptionBill least;
  std::partial_sort(lost.begin(), lost.begin() + static_cast<std::ptrdiff_t>(fewest), lost.end());
  std::partial_sort(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(fewest),
                    times.end());
  for (size_t k = 0; k < fewest; ++k) {
    least.lost += lost[k];
    least.requeues += times[k];
  }
  return PreemptionPays(wait, least, j.priority - lowest);
}

StopCostInput Engine::StopOf(const JobRecord& v, TimeMs now) const {
  return {LostSinceCheckpoint(v.progress_start(), now, v.job.checkpoint_interval),
          spec_.scheduler.restart_cost, v.preemptions};
}

TimeMs Engine::PreemptionTime(const JobRecord& j, const GangResult& placed, bool must_pay,
                              const std::function<Millis(int32_t)>& wait_for,
                              const std::vector<VictimCandidate>& candidates,
                              const std::vector<size_t>& chosen, TimeMs now) const {
  if (chosen.empty()) return now;
  if (must_pay) {
    int32_t gap = 0;
    const PreemptionBill bill = BillOf(j, candidates, chosen, now, gap);
    if (bill.stops > 0 && !PreemptionPays(wait_for(gap), bill, gap)) return kNever;
  }
  // A shrink loses nothing (the run goes on).
  std::vector<VictimProgress> progress;
  for (size_t i : chosen) {
    if (candidates[i].shrink_to > 0) continue;
    const JobRecord& v = jobs_[candidates[i].id];
    progress.push_back({v.run_milli, StopOf(v, now).since_checkpoint, v.job.checkpoint_interval});
  }
  return now + WaitForCheckpoints(MilliOf(placed.placements), progress);
}

PreemptionBill Engine::BillOf(const JobRecord& j, const std::vector<VictimCandidate>& candidates,
                              const std::vector<size_t>& which, TimeMs now, int32_t& gap) const {
  PreemptionBill bill, displaced;
  std::optional<int32_t> highest;  // of the victims of a lower class
  for (size_t i : which) {
    if (candidates[i].shrink_to > 0) continue;
    const JobRecord& v = jobs_[candidates[i].id];
    if (Billed(candidates[i], j)) {
      bill.Add(StopOf(v, now));
      highest = std::max(highest.value_or(v.priority), v.priority);
    } else {
      displaced.AddWaste(StopOf(v, now));
    }
  }
  if (DisplacementBilled(displaced)) {
    bill.lost += displaced.lost;
    bill.stops += displaced.stops;
  }
  gap = highest ? j.priority - *highest : 0;
  return bill;
}

std::vector<VictimCandidate> Engine::VictimCandidates(const JobRecord& j, const Compiled& c,
                                                      ModelMask mask, ModelMask reclaim,
                                                      uint64_t holds, TimeMs now,
                                                      TimeMs& protected_until) const {
  std::vector<VictimCandidate> candidates;
  const bool waiting = ElasticClosed(j, c, now);
  auto consider = [&](uint32_t id) {
    const JobRecord& v = jobs_[id];
    // The class, tenant and ordering tests first: most runs fail them, before any walk of
    // their placements.
    if (!MayPreempt(j, v, reclaim, now, holds) || !Frees(v, c, mask, waiting)) return;
    // A run younger than its protection is not stopped; it may still shrink (it loses nothing
    // and goes on).
    const TimeMs of_age = v.last_start + ProtectedFor(v.min_run, v.preemptions);
    if (now < of_age) {
      protected_until = std::min(protected_until, of_age);
    } else {
      candidates.push_back({v.priority, StopCostPerDevice(StopOf(v, now), v.run_milli), v.key, id});
    }
    // An elastic run beyond its minimum may give up its other tasks first, losing nothing.
    const Compiled& vc = *compiled_[id];
    const size_t least = static_cast<size_t>(vc.start_tasks);
    if (vc.elastic() && v.placements.size() > least &&
        FreesModels(cell_, std::span<const Placement>(v.placements).subspan(least), mask))
      candidates.push_back({v.priority, 0, v.key, id, vc.start_tasks});
  };
  if (reclaim == 0) {
    // A rule with victimsPreemptibleOnly: false opens every running job of a lower class.
    const PreemptionRule* rule = PreemptionRuleOf(j);
    const bool any = holds == 0 && rule && rule->allow && !rule->victims_preemptible_only;
    const JobSets& victims = any ? running_by_priority_ : preemptible_by_priority_;
    for (const auto& [priority, klass] : priority_sets_) {
      if (priority > j.priority ||
          (priority == j.priority && !ordering_.preemptive() && holds == 0))
        break;
      for (uint32_t id : victims.members(klass))
        consider(id);
    }
    return candidates;
  }
  for (uint32_t t = 0; t < running_by_tenant_.set_count(); ++t) {
    if (t == j.job.tenant.value() || running_by_tenant_.members(t).empty()) continue;
    bool borrows = false;
    for (ModelMask m = reclaim; m != 0 && !borrows; m &= m - 1)
      borrows = quotas_.Borrowing(TenantId(static_cast<uint32_t>(t)),
                                  static_cast<size_t>(std::countr_zero(m)));
    if (!borrows) continue;
    for (uint32_t id : running_by_tenant_.members(t))
      consider(id);
  }
  return candidates;
}

bool Engine::PreemptFor(JobRecord& j, CycleState& cs, ModelMask reclaim, uint64_t holds) {
  const Compiled& c = *compiled_[j.id.value()];
  ModelMask only = holds ? holds_.Models(holds) : reclaim ? reclaim : kAnyAccelerator;
  ModelMask mask = c.mask & only;
  // Only the running jobs that can be victims at all: preemptible ones of a lower class (or
  // of the same class under a preemptive ordering); in a reclaim, the jobs of tenants that
  // borrow a reclaimed model; for held devices, preemptible jobs of no higher class.
  // A preemption by class must pay; a reclaim or a hold is owed. For the first, how long it
  // would wait without preempting: the gain, and what each victim waits again.
  const bool must_pay = reclaim == 0 && holds == 0;
  const Millis wait = must_pay ? WaitAvoided(j, c, cs.now) : 0;
  // Once its victims are known, a displacement within the class (no victim of a lower class:
  // gap 0) gains the wait to the shadow, uncapped: how long jobs like it waited is how long they
  // waited under the ordering's displacements, and capping a displacement's gain by it fed on
  // itself (docs/queueing.md).
  std::optional<Millis> shadow;  // asked for once at most
  auto wait_for = [&](int32_t gap) {
    if (gap > 0) return wait;
    if (!shadow) shadow = WaitAvoided(j, c, cs.now, /*capped=*/false);
    return *shadow;
  };
  std::vector<VictimCandidate> candidates =
      VictimCandidates(j, c, mask, reclaim, holds, cs.now, cs.protected_until);
  if (candidates.empty()) return false;
  // Stops of a lower class that could not pay even as the fewest the room allows (at least one)
  // are no candidates: the search goes on with the free ones (shrinks, the ordering's
  // displacements), if any.
  if (must_pay && !MightPay(j, c, mask, candidates, wait, cs.now)) {
    std::erase_if(candidates, [&](const VictimCandidate& cand) { return Billed(cand, j); });
    if (candidates.empty()) {
      ++counters_.preemptions_declined;
      return false;
    }
  }
  RankVictims(candidates, static_cast<size_t>(options_.preemption_candidates));
  // Most hopeless preemptions end here, before any victim is released: not even all of them
  // together would let the quota admit the job or give a cluster it may use its devices.
  std::vector<uint32_t> all;
  all.reserve(candidates.size());
  bool shrinks = false;
  for (const VictimCandidate& cand : candidates) {
    all.push_back(cand.id);
    shrinks = shrinks || cand.shrink_to > 0;
  }
  if (shrinks) {  // a shrink and a stop of one job: the job once
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
  }
  const std::optional<ModelMask> usable = CouldMakeRoom(j, c, mask, all, cs.now);
  if (!usable) return false;
  // A model whose quota would not admit one of its tasks even with every candidate stopped is
  // no use to it: the search frees and places on the others only (else the placer prefers
  // such a model and the quota refuses the placement, whatever the victims).
  if (c.mask != 0 && *usable != mask) {
    if (*usable == 0) return false;
    mask = *usable;
    only &= mask;
    std::erase_if(candidates, [&](const VictimCandidate& cand) {
      return !FreesModels(cell_,
                          std::span<const Placement>(jobs_[cand.id].placements)
                              .subspan(static_cast<size_t>(cand.shrink_to)),
                          mask);
    });
    if (candidates.empty()) return false;
  }
  // Nor, node by node, the room to hold its tasks: the fewest candidates that could.
  const std::optional<size_t> least = LeastSufficientByCount(j, c, mask, candidates, cs.now);
  if (!least) return false;
  // And a preemption by class whose least prefix by count already does not pay ends before
  // any trial: the search's victims are that prefix or a longer one (placing may spare one of
  // them, rarely): it stops no fewer runs, the highest of no lower a class. Counted with the
  // capped wait, whose walk of the running jobs' ends stops at the cap: with a displacement's
  // shadow here too, the 100,000-job las run with tenants took longer and preempted more (0.26
  // per job against 0.20).
  if (must_pay) {
    std::vector<size_t> prefix(*least);
    std::iota(prefix.begin(), prefix.end(), size_t{0});
    int32_t gap = 0;
    const PreemptionBill bill = BillOf(j, candidates, prefix, cs.now, gap);
    if (bill.stops > 0 && !PreemptionPays(wait, bill, gap)) {
      ++counters_.preemptions_declined;
      return false;
    }
  }

  // Candidates [0, held) are released; saved[i] is candidate i's placements.
  std::vector<std::vector<Placement>> saved;
  size_t held = 0;
  // Trial releases free only what a placement consults (devices, free counts, summaries,
  // quota); the victims finally chosen are then forgotten as running.
  // A shrink releases the run's tasks after its minimum; a stop releases what the run holds
  // then (after its shrink, the minimum).
  auto hold = [&](size_t k) {  // release or restore until exactly the first k are released
    for (; held < k; ++held) {
      JobRecord& v = jobs_[candidates[held].id];
      if (saved.size() <= held) saved.push_back(v.placements);
      ReleaseFrom(v, static_cast<size_t>(candidates[held].shrink_to));
    }
    while (held > k) {
      --held;
      RetakeFrom(jobs_[candidates[held].id], saved[held],
                 static_cast<size_t>(candidates[held].shrink_to));
    }
  };
  // The shortest cheapest-first prefix of the candidates whose release lets the job start:
  // a placement with the released victims' room, when the counts allow one at all.
  std::optional<GangResult> placed;
  auto places = [&](size_t k) {
    if (placed) {
      for (const Placement& p : placed->placements)
        cell_.Release(p);
      placed.reset();
    }
    hold(k);
    const QuotaRoom room = QuotaRoomFor(j, c, mask);
    if (room.split && RoomInScope(j, c, room.whole != 0 ? room.whole : mask, cs.now)) {
      placed = PlaceWithQuota(j, cs, only).placed;
    }
    return placed.has_value();
  };
  if (!ShortestSufficientPrefix(candidates.size(), *least, places)) {
    hold(0);
    return false;
  }
  saved.resize(held);
  candidates.resize(held);
  const std::vector<size_t> chosen = KeepNeededVictims(j, c, *placed, candidates, saved);
  // A priority class's preemption must pay for itself; a quota's reclaim or a reservation's hold
  // is owed, whatever it costs.
  if (const TimeMs when =
          PreemptionTime(j, *placed, must_pay, wait_for, candidates, chosen, cs.now);
      when != cs.now) {
    // Back as it was: the preemptor's placement released, the victims retaken in the reverse
    // order of their release (a run's stop before its shrink).
    for (const Placement& p : placed->placements)
      cell_.Release(p);
    for (size_t i : chosen)
      RetakeFrom(jobs_[candidates[i].id], saved[i], static_cast<size_t>(candidates[i].shrink_to));
    if (when == kNever) {
      ++counters_.preemptions_declined;
    } else {  // at the victims' next checkpoints
      ++counters_.preemptions_deferred;
      cs.deferred_to = std::min(cs.deferred_to, when);
    }
    return false;
  }
  // A rule's grace period: each victim checkpoints on the signal and exits within it, losing
  // nothing; the preemptor's processes start when it is over. Without a rule, or reclaiming,
  // victims stop at once and lose the work since their last checkpoint.
  const PreemptionRule* rule = PreemptionRuleOf(j);
  const Millis grace = rule && must_pay ? rule->grace_period : 0;
  // By job: stopped whole (with every task it had), or shrunk to its minimum.
  std::map<uint32_t, std::pair<std::optional<size_t>, std::optional<size_t>>> by_job;
  for (size_t i : chosen)
    (candidates[i].shrink_to > 0 ? by_job[candidates[i].id].second
                                 : by_job[candidates[i].id].first) = i;
  for (auto& [id, which] : by_job) {
    JobRecord& v = jobs_[id];
    std::string cause = holds                     ? "reservation-reclaim"
                        : reclaim                 ? "quota-reclaim"
                        : v.priority < j.priority ? "priority"
                                                  : std::string(ordering_.name());
    const auto& [stop, shrink] = which;
    if (stop) {
      // Shrunk first in the search, its saved placements are all it had.
      StopVictim(v, j, cause, grace, std::move(saved[shrink ? *shrink : *stop]), cs);
    } else {
      ShrinkVictim(v, j, cause, grace, std::move(saved[*shrink]), cs);
    }
  }
  if (c.elastic()) Widen(j, *placed);
  Start(j, std::move(*placed), "preempted " + std::to_string(by_job.size()) + " job(s)", cs.now,
        by_job.empty() ? 0 : grace);
  return true;
}

std::vector<size_t> Engine::KeepNeededVictims(const JobRecord& j, const Compiled& c,
                                              const GangResult& placed,
                                              const std::vector<VictimCandidate>& released,
                                              const std::vector<std::vector<Placement>>& saved) {
  // One whose nodes the placement does not touch goes back, unless putting it back would
  // break the preemptor's quota admission or a reservation's hold (a non-preemptible borrower
  // reclaimed elsewhere counts against the hold again). Latest first: a run's stop comes
  // back before its shrink, and a run that stays stopped stays shrunk.
  std::set<uint32_t> used;
  for (const Placement& p : placed.placements)
    used.insert(p.node);
  std::set<uint32_t> stopped;
  std::vector<size_t> victims;
  for (size_t i = released.size(); i-- > 0;) {
    const VictimCandidate& cand = released[i];
    const size_t from = static_cast<size_t>(cand.shrink_to);
    bool touches = from > 0 && stopped.count(cand.id);
    for (size_t k = from; k < saved[i].size() && !touches; ++k)
      touches = used.count(saved[i][k].node) > 0;
    if (!touches) {
      JobRecord& v = jobs_[cand.id];
      RetakeFrom(v, saved[i], from);
      if (quotas_.Check(j.job.tenant, PerModel(placed.placements)).ok &&
          (holds_.size() == 0 || holds_.Refuses(placed.placements, c.holds, j.preemptible).empty()))
        continue;
      ReleaseFrom(v, from);
    }
    victims.push_back(i);
    if (from == 0) stopped.insert(cand.id);
  }
  return victims;
}

void Engine::StopVictim(JobRecord& v, const JobRecord& by, const std::string& cause, Millis grace,
                        std::vector<Placement> placements, CycleState& cs) {
  // Its devices are released already; finish the stop.
  v.stop_grace = grace;
  OrderStop(v, cs.now);
  v.stop_grace = 0;
  v.placements = std::move(placements);
  ForgetRun(v);
  StopRun(v, cs.now, /*lose_since_checkpoint=*/grace == 0);
  v.state = JobState::kPending;
  v.reason = PendingReason::kPreempted;
  v.detail = "preempted by " + by.job.name;
  ++v.restarts;
  ++v.preemptions;
  Enqueue(v, cs.now);
  cs.stopped.insert(v.id.value());
  Record(v);
  LogDecision(DecisionKind::kPreempt, v,
              "preempted-by:" + by.job.name + " " + cause +
                  (grace > 0 ? " grace " + FormatDuration(grace) : ""),
              cs.now);
  ++counters_.preemptions;
}

}  // namespace tessera
