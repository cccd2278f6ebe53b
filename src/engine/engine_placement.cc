// The scheduling cycle's order, admission and placement (docs/architecture.md §3, steps 1-4
// and 6): the tenants' queues walked by priority and hierarchical DRF, quota and budget
// admission, the global layer's cluster choice, the gang placement per model, and EASY
// backfill around the head job's reservation.
#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_cycle.h"
#include "sched/constraints.h"
#include "sched/fair_share.h"
#include "sched/fleet_view.h"
#include "sched/policy_match.h"
#include "sched/preemption_cost.h"

namespace tessera {

namespace {

// A placement restricted to one cluster, explained over that cluster's nodes only (the others
// are out of its scope as later preferences).
Explanation InCluster(const Explanation& why) {
  ReasonCounter c;
  uint32_t total = why.feasible_nodes;
  for (const auto& [reason, nodes] : why.dropped) {
    if (reason == Reason::kLaterPreference) continue;
    c.Add(reason, nodes);
    total += nodes;
  }
  return c.Finish(total, why.feasible_nodes);
}

}  // namespace

void Engine::Rekey(TimeMs now) {
  for (auto& [tenant, queue] : queues_) {
    std::set<QueueEntry> fresh;
    for (const QueueEntry& e : queue) {
      QueueEntry k = e;
      k.key = ordering_.Key(jobs_[e.id], now);
      queue_entry_[e.id] = k;
      fresh.insert(k);
    }
    queue.swap(fresh);
  }
}

void Engine::PlacePending(CycleState& cs) {
  if (!ordering_.stable_keys()) Rekey(cs.now);
  if (ordering_.speed_aware()) {
    Milli free = 0;
    for (Milli f : free_by_model_)
      free += f;
    cs.contended = pending_demand_ > free;
  }
  // Each tenant's queue is kept in (priority, policy key, age, sequence) order; one cursor
  // per tenant walks it. A cursor moves past a job before the job is tried, since starting
  // it removes it from the queue.
  struct Cursor {
    uint32_t tenant;
    std::set<QueueEntry>::const_iterator it, end;
  };
  std::vector<Cursor> cursors;
  for (const auto& [tenant, queue] : queues_)
    if (!queue.empty()) cursors.push_back({tenant, queue.begin(), queue.end()});

  // Each tenant's shares along its path, recomputed only after usage changed.
  // Sized once: NextQueue holds references into it while it picks.
  std::vector<std::pair<uint64_t, std::vector<int64_t>>> share_cache(spec_.tenants.size(),
                                                                     {~uint64_t{0}, {}});
  auto shares_of = [&](uint32_t tenant) -> const std::vector<int64_t>& {
    auto& [version, shares] = share_cache[tenant];
    if (version != quotas_.version()) {
      version = quotas_.version();
      shares = quotas_.PathShares(TenantId(tenant));
    }
    return shares;
  };
  // A cursor's head, past the jobs preempted in this cycle (their turn comes in the next one).
  auto head = [&](size_t i) -> std::optional<QueueHead> {
    Cursor& c = cursors[i];
    while (c.it != c.end && cs.stopped.count(c.it->id))
      ++c.it;
    if (c.it == c.end) return std::nullopt;
    return QueueHead{c.it->neg_priority, c.tenant};
  };
  // The refusal this cycle of a job of the signature, if any, read from the queue's entry and
  // the job's record: most of a long queue ends here, and its compiled form stays unread.
  auto refusal = [&](const JobRecord& j, uint32_t sig, bool bursts) {
    const bool waiting = bursts && ElasticClosed(j, *compiled_[j.id.value()], cs.now);
    return cs.Refused(sig, waiting, [&] { return RuntimeLeft(j); });
  };
  auto refuse = [&](JobRecord& j, const CycleState::Refusal& r) {
    j.reason = r.reason;
    j.detail = r.detail;
    if (options_.explain) ExplainAs(j, r.job);
  };
  while (true) {
    const std::optional<size_t> next = NextQueue(cursors.size(), head, shares_of);
    if (!next) break;
    Cursor* best = &cursors[*next];
    // The entry goes when the job starts.
    const uint32_t sig = best->it->sig;
    const bool bursts = best->it->bursts;
    JobRecord& j = jobs_[(best->it++)->id];
    if (j.reason == PendingReason::kInfeasible) continue;
    // A job within its tenant's guarantee is owed its devices now: a blocked job ahead of it
    // (which may only need borrowed capacity) neither stops it nor reserves against it.
    if (cs.blocked && GuaranteeModelsOf(sig) != 0) {
      if (const CycleState::Refusal* r = refusal(j, sig, bursts)) {
        refuse(j, *r);
      } else if (TryStart(j, cs) == PendingReason::kNone) {
        ++counters_.backfilled;
      }
      continue;
    }
    if (cs.blocked && !options_.backfill) {
      j.reason = PendingReason::kReservation;
      break;
    }
    if (cs.blocked && ++cs.after_block > options_.backfill_depth) {
      j.reason = PendingReason::kBackfillDepth;
      break;
    }
    if (const CycleState::Refusal* r = refusal(j, sig, bursts);
        r && r->reason == PendingReason::kResources) {
      refuse(j, *r);
      continue;
    }
    const Compiled& c = *compiled_[j.id.value()];
    std::optional<BackfillVerdict> passing;
    if (cs.reservation) {
      const Reservation& r = *cs.reservation;
      std::optional<Millis> left;
      if (j.job.runtime) left = *j.job.runtime - j.kept_ms;
      passing = MayBackfill(r, c.mask, c.start_milli, left, cs.now);
      if (passing->pass == BackfillPass::kRefused) {
        j.reason = PendingReason::kReservation;
        // Said of most of a long queue in each cycle: the text is made once per cycle.
        if (cs.reservation_detail.empty())
          cs.reservation_detail = "would delay the reservation of " + jobs_[r.head].job.name;
        j.detail = cs.reservation_detail;
        continue;
      }
    }
    const PendingReason held = TryStart(j, cs);
    if (held == PendingReason::kNone) {
      if (passing && passing->pass == BackfillPass::kInExtra && cs.reservation)
        cs.reservation->extra -= passing->on_mask;
      if (cs.blocked) ++counters_.backfilled;
      continue;
    }
    // A job its quota or budget holds back does not block the queue: the devices it cannot use are
    // for the jobs behind it (as Slurm's limit-pending jobs hold no reservation).
    if (held == PendingReason::kInfeasible || held == PendingReason::kQuota ||
        held == PendingReason::kBudget)
      continue;
    if (!cs.blocked) {
      cs.blocked = true;
      if (options_.backfill) cs.reservation = ComputeReservation(j, cs.now);
    }
  }
}

// Comparative advantage (the idea behind Gavel's heterogeneity-aware allocations): the job's
// speed on a model over the mean speed there of the jobs in the system that accept it. A job
// twice as fast as its peers on a K80 goes there first and leaves the V100s to the jobs that
// gain most from them. Ties: the faster model, then the lower model id.
std::vector<uint16_t> Engine::ByAdvantage(const Compiled& c) const {
  std::vector<std::pair<double, uint16_t>> keyed;
  for (uint16_t m : c.by_speed) {
    const auto& [sum, count] = speed_pool_[m];
    double mean = count > 0 && sum > 0 ? static_cast<double>(sum) / static_cast<double>(count)
                                       : static_cast<double>(c.speed_of[m]);
    keyed.push_back({static_cast<double>(c.speed_of[m]) / mean, m});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return c.speed_of[a.second] > c.speed_of[b.second];
  });
  std::vector<uint16_t> order;
  for (const auto& [adv, m] : keyed)
    order.push_back(m);
  return order;
}

const GangRequest& Engine::Variant(Compiled& c, ModelMask mask, uint32_t scope,
                                   TaskShape::Guard guard) {
  if (c.mask == 0) mask = c.mask;
  const GangRequest& base = c.whole ? c.whole_gang : c.gang;
  if (mask == c.mask && scope == 0 && guard == TaskShape::kNoGuard) return base;
  auto it = c.variants.find({mask, scope, guard, c.whole});
  if (it != c.variants.end()) return it->second;
  GangRequest g = base;
  for (GangGroup& group : g.groups) {
    if (scope != 0) group.shape.scope = scope;
    if (!group.shape.cpu_only()) group.shape.models &= mask;
    // kCpuNodesOnly speaks of CPU-only tasks; a device task of the same gang keeps devices fed.
    group.shape.guard = guard == TaskShape::kCpuNodesOnly && !group.shape.cpu_only()
                            ? TaskShape::kKeepDevicesFed
                            : guard;
    shapes_.Intern(group.shape);
  }
  return c.variants.emplace(std::make_tuple(mask, scope, guard, c.whole), std::move(g))
      .first->second;
}

Milli Engine::RunSpeed(const JobRecord& j) const {
  return SpeedOn(*compiled_[j.id.value()], j.placements);
}

Milli Engine::SpeedOn(const Compiled& c, const std::vector<Placement>& placements) const {
  Milli speed = 0;
  bool any = false;
  for (const Placement& p : placements) {
    auto devices = cell_.devices(p.node);
    for (const DeviceUse& u : p.devices) {
      Milli s = c.speed_of[devices[u.index].model];
      speed = any ? std::min(speed, s) : s;
      any = true;
    }
  }
  return speed;
}

PendingReason Engine::TryStart(JobRecord& j, CycleState& cs) {
  const Compiled& c = *compiled_[j.id.value()];
  const bool waiting = ElasticClosed(j, c, cs.now);
  if (const CycleState::Refusal* r = cs.Refused(c.sig, waiting, [&] { return RuntimeLeft(j); })) {
    j.reason = r->reason;
    j.detail = r->detail;
    if (options_.explain) ExplainAs(j, r->job);
    return j.reason;
  }
  ++counters_.placements_tried;
  if (c.elastic()) {
    // All its tasks together when they fit now (they sit as a whole gang would); else its
    // start, judged afresh: what the whole job could not have is no verdict on the start.
    compiled_[j.id.value()]->whole = true;
    Admitted whole = PlaceWithQuota(j, cs);
    compiled_[j.id.value()]->whole = false;
    if (whole.placed) {
      Start(j, std::move(*whole.placed), cs.blocked ? "backfill" : "order", cs.now);
      return PendingReason::kNone;
    }
    if (j.reason == PendingReason::kInfeasible) {
      j.reason = PendingReason::kResources;
      Press(j, +1);
    }
  }
  Admitted admitted = PlaceWithQuota(j, cs);
  if (admitted.placed) {
    if (c.elastic()) Widen(j, *admitted.placed);
    Start(j, std::move(*admitted.placed), cs.blocked ? "backfill" : "order", cs.now);
    return PendingReason::kNone;
  }
  const PendingReason refused = admitted.refused;
  if (j.reason == PendingReason::kInfeasible) return j.reason;
  // A job of the same signature (shapes, gang rule, priority, tenant) that found no victims
  // this cycle means this one would not either: its queue position is no better.
  // Preemption searches that found nothing are capped per cycle (the jobs first in order had
  // theirs); the rest look again in the next cycle. A job whose own search failed backs off
  // (SearchBackoff), or waits for the victims' checkpoints its preemption was deferred to. A
  // budget's refusal is no victim's doing: stopping runs frees no money for today.
  if (refused != PendingReason::kBudget && cs.now < j.search_again_at && running_count() > 0) {
    // Still backing off: a cycle comes when it may search again, whatever cycles came between
    // (each posts a tick for the earliest such time only).
    cs.search_again_at = std::min(cs.search_again_at, SearchTick(j.search_again_at));
  } else if (refused != PendingReason::kBudget && cs.now >= j.search_again_at &&
             !cs.NoVictims(c.sig, waiting) &&
             cs.preemptions_failed < options_.preemption_attempts) {
    cs.deferred_to = kNever;
    const TimeMs protected_before = std::exchange(cs.protected_until, kNever);
    ++counters_.preemption_searches;
    if (TryPreempt(j, cs)) {
      cs.protected_until = std::min(cs.protected_until, protected_before);
      return PendingReason::kNone;
    }
    cs.no_victims[waiting ? 1 : 0].insert(c.sig);
    ++cs.preemptions_failed;
    // Victims it passed over for their age: it searches again when the first comes of age.
    const TimeMs of_age =
        std::exchange(cs.protected_until, std::min(cs.protected_until, protected_before));
    j.search_again_at = cs.deferred_to != kNever
                            ? cs.deferred_to
                            : std::min(of_age, cs.now + SearchBackoff(++j.searches_failed));
    // A cycle then, should nothing else happen before: a victim may have started meanwhile. With
    // nothing running, nothing can change but by events, which bring their own cycles. At the
    // victims' checkpoints exactly; after a backoff, at the tick it shares with others.
    if (running_count() > 0)
      cs.search_again_at =
          std::min(cs.search_again_at,
                   cs.deferred_to != kNever ? j.search_again_at : SearchTick(j.search_again_at));
  }
  j.reason = refused != PendingReason::kNone ? refused : PendingReason::kResources;
  // Budgets start afresh at midnight: look again then.
  if (refused == PendingReason::kBudget && budget_tick_ <= cs.now) {
    budget_tick_ = NextMidnight(cs.now);
    PostAt(EventKind::kTick, budget_tick_, {}, 0);
  }
  cs.refused[waiting ? 1 : 0].emplace(
      c.sig, CycleState::Refusal{j.reason, j.detail, RuntimeLeft(j), j.id.value()});
  return j.reason;
}

ModelOrder Engine::MasksToTry(const JobRecord& j, const Compiled& c, ModelMask mine,
                              const CycleState& cs) const {
  if (!ordering_.speed_aware() || c.by_speed.size() <= 1) return AgnosticMasks(j, c, mine);
  return SpeedOrder(cs.contended ? ByAdvantage(c) : c.by_speed, mine, cs.contended);
}

Engine::Admitted Engine::PlaceWithQuota(JobRecord& j, CycleState& cs, ModelMask only) {
  Compiled& c = *compiled_[j.id.value()];
  const ModelMask mine = c.mask == 0 ? 0 : c.mask & only;  // CPU-only jobs have no models
  if (c.mask != 0 && mine == 0) return {};
  if (!c.over_limit.empty()) {
    MarkInfeasible(j);
    j.detail = c.over_limit;
    return {};
  }
  ModelOrder order = MasksToTry(j, c, mine, cs);
  std::vector<ModelMask>& masks = order.masks;  // grows below: retries on fewer models
  const std::vector<const char*>& whys = order.whys;
  const bool mixed_last = order.mixed_last;
  PendingReason refused = PendingReason::kNone;
  const size_t last_resort = mixed_last ? masks.size() - 1 : masks.size();
  bool all_infeasible = true;
  std::string detail;
  // A job tried on several model sets in turn: what the placer said of each try ("on H800:
  // ... | on A800: ..."), as each weighs different clusters.
  bool placer_said = false;
  for (size_t i = 0; i < masks.size(); ++i) {
    ModelMask mask = masks[i];
    if (i == last_resort && !all_infeasible) continue;
    if (c.mask != 0 && std::has_single_bit(mask)) {
      size_t m = static_cast<size_t>(std::countr_zero(mask));
      QuotaVerdict pre = quotas_.Check(j.job.tenant, RequestPerModel(j, m));
      if (!pre.ok) {
        refused = PendingReason::kQuota;
        all_infeasible = false;
        detail = pre.why;
        placer_said = false;
        continue;
      }
    }
    GangResult r = PlaceGuarded(j, c, mask, cs, i < whys.size() ? whys[i] : nullptr);
    if (r.outcome == PlaceOutcome::kPlaced) {
      if (std::string held =
              holds_.size() ? holds_.Refuses(r.placements, c.holds, j.preemptible) : std::string();
          !held.empty()) {
        // It landed on devices a reservation holds: once more without the held models.
        for (const Placement& p : r.placements)
          cell_.Release(p);
        all_infeasible = false;
        detail = held;
        placer_said = false;
        ModelMask rest = mask & ~holds_.Models(~uint64_t{0});
        if (rest != 0 && rest != mask && masks.size() < 8) masks.push_back(rest);
        continue;
      }
      QuotaVerdict v = quotas_.Check(j.job.tenant, PerModel(r.placements));
      if (v.ok) {
        BudgetVerdict b = ledger_.Check(BudgetKeyOf(j, c), ledger_.Rate(r.placements), cs.now,
                                        EstimatedEnd(j, cs.now, SpeedOn(c, r.placements)));
        if (b.ok) {
          j.borrowing = v.borrowing;
          return {std::move(r), refused};
        }
        for (const Placement& p : r.placements)
          cell_.Release(p);
        refused = PendingReason::kBudget;
        all_infeasible = false;
        detail = b.why;
        placer_said = false;
        continue;
      }
      for (const Placement& p : r.placements)
        cell_.Release(p);
      refused = PendingReason::kQuota;
      all_infeasible = false;
      detail = v.why;
      placer_said = false;
      // Agnostic placement: retry once on the models the quota still allows.
      if (masks.size() == 1) {
        ModelMask allowed = 0;
        for (size_t m = 0; m < cell_.model_count(); ++m) {
          if (((mine >> m) & 1) && quotas_.Check(j.job.tenant, RequestPerModel(j, m)).ok)
            allowed |= ModelMask{1} << m;
        }
        if (allowed != 0 && allowed != mask) masks.push_back(allowed);
      }
      continue;
    }
    if (r.outcome != PlaceOutcome::kInfeasible) all_infeasible = false;
    if (detail.empty() || refused == PendingReason::kNone) {
      std::string said = r.why.ToString() + (r.detail.empty() ? "" : "; " + r.detail);
      if (masks.size() > 1 && c.mask != 0) {
        said = "on " + ModelNames(spec_, mask) + ": " + said;
        if (placer_said) said = detail + " | " + said;
      }
      detail = std::move(said);
      placer_said = true;
      if (options_.explain) explained_[j.id.value()] = {r.outcome, r.why, {}};
    }
  }
  if (all_infeasible) MarkInfeasible(j);
  j.detail = detail;
  return {std::nullopt, refused};
}

ModelOrder Engine::AgnosticMasks(const JobRecord& j, const Compiled& c, ModelMask mine) const {
  if (c.mask == 0 || std::popcount(mine) < 2) return {{mine}, {}, false};
  const QuotaRoom room = QuotaRoomFor(j, c, mine);
  return AgnosticOrder(mine, room.whole,
                       WithinGuaranteeOn(j.job.tenant, room.whole, c.request_milli()),
                       j.task_count == 1);
}

std::vector<Milli> Engine::PerModel(const std::vector<Placement>& placements) const {
  std::vector<Milli> per(cell_.model_count(), 0);
  for (const Placement& p : placements) {
    auto devices = cell_.devices(p.node);
    for (const DeviceUse& u : p.devices)
      per[devices[u.index].model] += u.milli;
  }
  return per;
}

std::vector<Milli> Engine::RequestPerModel(const JobRecord& j, size_t model) const {
  std::vector<Milli> per(cell_.model_count(), 0);
  // An elastic gang tried whole asks for all its tasks, else for its start.
  const Compiled& c = *compiled_[j.id.value()];
  per[model] = c.request_milli();
  return per;
}

uint32_t Engine::ClusterScope(uint32_t cluster) {
  if (cluster_scope_[cluster] == 0) {
    ScopeTable::Verdicts only(spec_.clusters.size(), Reason::kLaterPreference);
    only[cluster].reset();
    cluster_scope_[cluster] = scopes_.Intern(only);
  }
  return cluster_scope_[cluster];
}

bool Engine::BurstWaiting(const JobRecord& j, const Compiled& c, TimeMs now) const {
  return c.burst != nullptr && now - j.queued_since < std::get<BurstRule>(c.burst->body).after;
}

BudgetKey Engine::BudgetKeyOf(const JobRecord& j, const Compiled& c) const {
  return {j.job.tenant, c.burst ? static_cast<int32_t>(c.burst - spec_.policies.data()) : -1};
}

bool Engine::ElasticClosed(const JobRecord& j, const Compiled& c, TimeMs now) const {
  return c.burst != nullptr && (BurstWaiting(j, c, now) || ledger_.BurstSpent(BudgetKeyOf(j, c)));
}

std::vector<bool> Engine::BurstBlocks(const JobRecord& j, const Compiled& c, TimeMs now) const {
  // Without a burst rule elastic clusters are closed by the job's constraints.
  if (!ElasticClosed(j, c, now)) return {};
  std::vector<bool> blocked(spec_.clusters.size(), false);
  for (size_t cl = 0; cl < spec_.clusters.size(); ++cl)
    blocked[cl] = spec_.clusters[cl].tier == ClusterTier::kElastic;
  return blocked;
}

std::string Engine::BurstWhy(const JobRecord& j, const Compiled& c, TimeMs now) const {
  if (c.burst == nullptr) return "";
  const BurstRule& rule = std::get<BurstRule>(c.burst->body);
  if (!BurstWaiting(j, c, now)) {
    return "BudgetExceeded (burst rule " + c.burst->name + ": " + FormatMilli(rule.budget_per_day) +
           " " + spec_.currency + "/day committed for " + spec_.tenant(j.job.tenant).path +
           " today)";
  }
  return "BurstNotYet (queued " + FormatDuration(now - j.queued_since) + " of " +
         FormatDuration(rule.after) + ", rule " + c.burst->name + ")";
}

std::shared_ptr<const JobConstraints> Engine::ReplicaRegion(const Compiled& c) const {
  const JobConstraints& k = *c.global->constraints;
  if (k.cross_region || !c.spread_group || spread_.running(*c.spread_group) == 0) return nullptr;
  // The region where most of its siblings run (the first's, while they all are in one).
  std::vector<int32_t> by_region(spec_.regions.size(), 0);
  const std::vector<int32_t>& by_cluster = spread_.by_cluster(*c.spread_group);
  for (size_t cl = 0; cl < by_cluster.size(); ++cl)
    by_region[spec_.clusters[cl].region.value()] += by_cluster[cl];
  const size_t home =
      static_cast<size_t>(std::max_element(by_region.begin(), by_region.end()) - by_region.begin());
  auto kept = std::make_shared<JobConstraints>(k);
  for (size_t cl = 0; cl < spec_.clusters.size(); ++cl) {
    if (spec_.clusters[cl].region.value() == home || kept->verdicts[cl]) continue;
    kept->verdicts[cl] = Reason::kRegionNotAllowed;
    kept->excluded_by[cl] =
        "crossRegion: false; its service's replicas run in " + spec_.regions[home].name;
  }
  return kept;
}

GangResult Engine::PlaceGuarded(JobRecord& j, Compiled& c, ModelMask mask, CycleState& cs,
                                const char* why_mask) {
  // A CPU-only job (no device models) tries CPU-only nodes first.
  static constexpr TaskShape::Guard kCpuGuards[] = {
      TaskShape::kCpuNodesOnly, TaskShape::kKeepDevicesFed, TaskShape::kNoGuard};
  static constexpr TaskShape::Guard kDeviceGuards[] = {TaskShape::kKeepDevicesFed,
                                                       TaskShape::kNoGuard};
  const std::span<const TaskShape::Guard> guards =
      c.mask == 0 ? std::span<const TaskShape::Guard>(kCpuGuards)
                  : std::span<const TaskShape::Guard>(kDeviceGuards);
  GangResult r;
  for (size_t i = 0; i < guards.size(); ++i) {
    r = PlaceAcrossClusters(j, c, mask, cs, why_mask, guards[i]);
    if (r.outcome == PlaceOutcome::kPlaced) {
      if (i > 0) {
        if (j.where.empty())
          j.where = spec_.clusters[cell_.node(r.placements.front().node).cluster].name;
        j.where += guards[i - 1] == TaskShape::kCpuNodesOnly
                       ? "; on device nodes: no CPU-only node had room"
                       : "; took CPU or memory kept for free devices: nothing else fits";
      }
      return r;
    }
    // Relaxing helps only where the guard kept out a node that fits otherwise.
    const bool guarded = std::any_of(r.why.dropped.begin(), r.why.dropped.end(), [](const auto& d) {
      return d.first == Reason::kCpuNodesFirst || d.first == Reason::kKeepsDevicesFed;
    });
    if (!guarded) break;
  }
  return r;
}

GangResult Engine::PlaceAcrossClusters(JobRecord& j, Compiled& c, ModelMask mask, CycleState& cs,
                                       const char* why_mask, TaskShape::Guard guard) {
  if (!c.global) return PlaceSpread(c, Variant(c, mask, 0, guard), std::nullopt);
  const std::vector<bool> blocked = BurstBlocks(j, c, cs.now);
  // A replica under crossRegion: false stays in the region of its siblings.
  const GlobalRequest* request = &*c.global;
  GlobalRequest in_region;
  if (std::shared_ptr<const JobConstraints> kept = ReplicaRegion(c)) {
    in_region = *c.global;
    in_region.constraints = std::move(kept);
    request = &in_region;
  }
  static const std::vector<int32_t> kNoSiblings;
  const std::vector<int32_t>& siblings =
      c.spread_group ? spread_.by_cluster(*c.spread_group) : kNoSiblings;
  // An elastic gang tried whole asks for all its tasks.
  if (c.whole && c.whole_global) request = &*c.whole_global;
  GlobalChoice choice = ChooseClusters(spec_, summaries_, *request, mask, blocked, siblings);
  if (why_mask != nullptr) choice.why_only = why_mask;
  std::string fell_back;
  for (const ClusterScore& s : choice.candidates) {
    ModelMask models = c.mask == 0 ? mask : s.models & mask;
    GangResult r = PlaceSpread(c, Variant(c, models, ClusterScope(s.cluster), guard), s.cluster);
    if (r.outcome == PlaceOutcome::kPlaced) {
      j.where = DescribeChoice(spec_, *request, choice, s.cluster,
                               AnyBlocked(choice) ? BurstWhy(j, c, cs.now) : std::string());
      j.where += fell_back;
      return r;
    }
    // The summary promised room the nodes do not have (CPU or memory taken where the devices
    // are free, too few free devices under one switch): the next candidate.
    fell_back += "; fell back from " + spec_.clusters[s.cluster].name + " (" +
                 InCluster(r.why).ToString() + (r.detail.empty() ? "" : ", " + r.detail) + ")";
  }
  // No candidate held the gang: the placer over the job's whole scope says why (and places it,
  // should every summary have undersold its cluster). Elastic clusters closed to it now stay
  // out; a job that could burst later is not infeasible.
  bool elastic_closed = false;
  ScopeTable::Verdicts verdicts = request->constraints->verdicts;
  for (size_t cl = 0; cl < blocked.size(); ++cl) {
    if (!blocked[cl] || verdicts[cl]) continue;
    verdicts[cl] = Reason::kLaterPreference;
    elastic_closed = true;
  }
  GangResult r = PlaceSpread(c, Variant(c, mask, scopes_.Intern(verdicts), guard), std::nullopt);
  if (r.outcome == PlaceOutcome::kPlaced) {
    j.where = spec_.clusters[cell_.node(r.placements.front().node).cluster].name +
              " (no candidate by the summaries; placed over the job's scope)" + fell_back;
    return r;
  }
  // Closed for now (elastic clusters before the burst wait, the other regions while the
  // siblings run there): pending, not infeasible.
  if (r.outcome == PlaceOutcome::kInfeasible && (elastic_closed || request != &*c.global))
    r.outcome = PlaceOutcome::kPending;
  r.detail += (r.detail.empty() ? "" : "; ") + std::string("clusters: ") +
              DescribePassed(spec_, *request, choice,
                             AnyBlocked(choice) ? BurstWhy(j, c, cs.now) : std::string()) +
              fell_back;
  return r;
}

GangResult Engine::PlaceSpread(const Compiled& c, const GangRequest& gang,
                               std::optional<uint32_t> cluster) {
  if (!c.spread_group || spread_.running(*c.spread_group) == 0)
    return PlaceGang(cell_, PlacerFor(c), gang, &rng_);
  GangRequest spread = gang;
  spread.prefer_within = spread_.Tiers(*c.spread_group, cluster);
  return PlaceGang(cell_, PlacerFor(c), spread, &rng_);
}

Placer& Engine::PlacerFor(const Compiled& c) {
  if (c.placement.empty()) return placer_;
  auto it = rule_placers_.find(c.placement);
  return it == rule_placers_.end() ? placer_ : *it->second;
}

std::optional<DeadlineOutlook> Engine::Outlook(JobId id, TimeMs now) const {
  const JobRecord& j = jobs_[id.value()];
  if (!j.job.deadline) return std::nullopt;
  const TimeMs deadline = *j.job.deadline;
  switch (j.state) {
    case JobState::kSucceeded:
      return DeadlineOutlook{deadline,
                             *j.finished <= deadline ? DeadlineState::kMet : DeadlineState::kMissed,
                             j.last_start, *j.finished};
    case JobState::kFailed:
      return DeadlineOutlook{deadline, DeadlineState::kMissed, j.last_start,
                             j.finished.value_or(now)};
    case JobState::kCancelled:
      return DeadlineOutlook{deadline, DeadlineState::kUnknown, kNever, kNever};
    case JobState::kPlaced:
    case JobState::kRunning: {
      DeadlineOutlook o{deadline, DeadlineState::kUnknown, j.last_start, j.estimated_end};
      if (o.end != kNever)
        o.state = o.end > deadline ? DeadlineState::kAtRisk : DeadlineState::kOnTrack;
      return o;
    }
    case JobState::kPending:
    case JobState::kAdmitted:
      break;
  }
  // Waiting: it could start when enough devices of its models free up (a CPU-only job: now).
  TimeMs start = kNever;
  if (j.reason != PendingReason::kInfeasible) {
    const std::optional<Reservation> r = ComputeReservation(j, now);
    start = r ? r->shadow : now;
  }
  return ForecastDeadline(deadline, start, RuntimeLeft(j), now);
}

Milli Engine::UsableOnMask(std::span<const Placement> placements, ModelMask mask) const {
  Milli sum = 0;
  for (const Placement& p : placements) {
    if (!Usable(p.node)) continue;
    auto devices = cell_.devices(p.node);
    for (const DeviceUse& u : p.devices)
      if ((mask >> devices[u.index].model) & 1) sum += u.milli;
  }
  return sum;
}

Milli Engine::FreeOnMask(ModelMask mask) const {
  Milli free = 0;
  for (size_t m = 0; m < free_by_model_.size(); ++m)
    if ((mask >> m) & 1) free += free_by_model_[m];
  return free;
}

std::optional<Reservation> Engine::ComputeReservation(const JobRecord& head, TimeMs now,
                                                      Milli adjust, TimeMs horizon) const {
  const ModelMask mask = compiled_[head.id.value()]->mask;
  const Milli free = adjust + FreeOnMask(mask);
  auto frees = [&](uint32_t id) {  // the devices of the head's models the job's end gives back
    return UsableOnMask(jobs_[id].placements, mask);
  };
  return ReserveForHead(head.id.value(), mask, compiled_[head.id.value()]->start_milli, free, now,
                        ends_, frees, horizon);
}

}  // namespace tessera
