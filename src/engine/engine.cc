#include "engine/engine.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <limits>
#include <map>

#include "sched/constraints.h"
#include "sched/fleet_view.h"
#include "sched/policy_match.h"

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

// A job compiled once (sched/compile_job.h), with what the engine keeps beside it: its
// per-model variants (hetero placement) and its standing in the speed pool.
struct Engine::Compiled : CompiledJob {
  explicit Compiled(CompiledJob c) : CompiledJob(std::move(c)) {}
  bool in_speed_pool = false;  // counted in the engine's speed_pool_
  Milli run_speed = 0;         // of the current run
  std::map<std::pair<ModelMask, uint32_t>, GangRequest> variants;  // by (models, scope)
};

struct Engine::CycleState {
  TimeMs now = 0;
  bool blocked = false;  // a job could not start this cycle
  int32_t after_block = 0;
  // Pending jobs ask for more devices than are free: heterogeneity-aware placement then
  // gives each job the model where it is relatively best, not merely the fastest.
  bool contended = false;
  std::optional<Reservation> reservation;
  // Signatures refused this cycle (no room, or the quota), with the reason and detail: a job of
  // the same shapes, scope, gang rule, priority and tenant is refused too, since within a
  // cycle free capacity only shrinks and usage only grows (victims' release aside). Index 1
  // holds jobs whose elastic clusters are closed now (they see fewer clusters: their refusal
  // says nothing of a job that may burst), index 0 the others.
  struct Refusal {
    PendingReason reason = PendingReason::kNone;
    std::string detail;
    Millis left = -1;  // the refused job's runtime still to run; -1: no estimate
  };
  std::map<std::vector<uint32_t>, Refusal> refused[2];
  std::set<uint32_t> stopped;                     // jobs preempted in this cycle
  int32_t preemptions_failed = 0;                 // searches for victims that found none
  std::set<std::vector<uint32_t>> no_victims[2];  // as `refused`: preemption found no room

  // The refusal that applies to a job of this signature that has `left` to run: its own
  // kind's, or (while elastic clusters are closed to it) a bursting job's. A budget refusal
  // speaks only for jobs that would run at least as long (and so cost as much each day).
  const Refusal* Refused(const std::vector<uint32_t>& signature, bool closed, Millis left) const {
    for (int i = closed ? 1 : 0; i >= 0; --i) {
      auto it = refused[i].find(signature);
      if (it == refused[i].end()) continue;
      const Refusal& r = it->second;
      if (r.reason == PendingReason::kBudget && !(r.left < 0 ? left < 0 : left >= r.left))
        return nullptr;
      return &r;
    }
    return nullptr;
  }
  bool NoVictims(const std::vector<uint32_t>& signature, bool closed) const {
    return no_victims[closed ? 1 : 0].count(signature) ||
           (closed && no_victims[0].count(signature));
  }
};

Engine::Engine(const Spec& spec, CellState cell, Scorer& scorer, const OrderingPolicy& ordering,
               Store& store, Backend& backend, const Clock& clock, Rng& rng, EngineOptions options)
    : spec_(spec),
      cell_(std::move(cell)),
      filters_(MakeScopedFilters(scopes_)),
      placer_(scorer, filters_),
      summaries_(spec, cell_),
      ordering_(ordering),
      store_(store),
      backend_(backend),
      clock_(clock),
      rng_(rng),
      options_(options),
      quotas_(spec),
      ledger_(spec, cell_),
      holds_(spec, cell_),
      spread_(cell_, spec.clusters.size()) {
  node_up_.assign(cell_.node_count(), true);
  free_by_model_.assign(cell_.model_count(), 0);
  allocated_by_model_.assign(cell_.model_count(), 0);
  model_present_.assign(cell_.model_count(), false);
  speed_pool_.assign(cell_.model_count(), {0, 0});
  for (uint32_t n = 0; n < cell_.node_count(); ++n) {
    for (const DeviceSlot& d : cell_.devices(n))
      model_present_[d.model] = true;
    node_up_[n] = cell_.node(n).schedulable;
    cordoned_.push_back(false);
    if (!node_up_[n]) continue;
    for (const DeviceSlot& d : cell_.devices(n)) {
      free_by_model_[d.model] += d.free;
      healthy_milli_ += kMilliPerUnit;
    }
  }
  if (options_.tick <= 0) options_.tick = ordering_.quantum();
  size_t with_nodes = 0;  // as declared: nodes may register later (AddNode)
  for (const Cluster& c : spec.clusters)
    with_nodes += c.node_count > 0;
  multi_cluster_ = with_nodes > 1;
  if (multi_cluster_) paths_ = ComputeRegionPaths(spec);
  cluster_scope_.assign(spec.clusters.size(), 0);
}

Engine::~Engine() = default;

void Engine::Reserve(size_t jobs) {
  jobs_.reserve(jobs_.size() + jobs);
  queue_entry_.reserve(queue_entry_.size() + jobs);
  compiled_.reserve(compiled_.size() + jobs);
}

JobId Engine::Submit(Job job, TimeMs at) {
  CHECK(job.tenant.valid() && job.tenant.value() < spec_.tenants.size())
      << "job " << job.name << " has no tenant of the spec";
  JobId id(static_cast<JobId::Value>(jobs_.size()));
  JobRecord& j = jobs_.emplace_back();
  queue_entry_.emplace_back();
  j.id = id;
  j.key = next_key_++;
  j.submitted = at;
  j.arrival_order = at;
  const PriorityClass* pc = spec_.FindPriority(job.priority);
  j.priority = pc ? pc->value : 0;
  j.preemptible = job.preemptible.value_or(pc ? pc->preemptible : true);
  JobStanding standing;
  standing.priority = j.priority;
  standing.holds = holds_.OwnedBy(job);
  standing.service_group = spread_.GroupOf(job);
  standing.limit = [&](size_t model) { return quotas_.Limit(job.tenant, model); };
  CompileTables tables{spec_,
                       model_present_,
                       shapes_,
                       scopes_,
                       constraints_,
                       multi_cluster_ ? &summaries_ : nullptr,
                       multi_cluster_ ? &paths_ : nullptr};
  auto c = std::make_unique<Compiled>(CompileJob(job, id, standing, tables));
  j.task_count = c->task_count;
  j.device_milli = c->device_milli;
  if (c->burst)
    ledger_.Register({job.tenant, static_cast<int32_t>(c->burst - spec_.policies.data())});
  j.job = std::move(job);
  compiled_.push_back(std::move(c));
  ++active_;
  Record(j);
  PostAt(EventKind::kSubmit, at, id, 0);
  return id;
}

void Engine::PostAt(EventKind kind, TimeMs at, JobId job, uint32_t node) {
  Event e;
  e.time = at;
  e.kind = kind;
  e.job = job;
  e.node = node;
  events_.Push(e);
}

void Engine::Cancel(JobId job, TimeMs at) {
  PostAt(EventKind::kCancel, at, job, 0);
}

Status Engine::Adopt(JobId id, std::vector<Placement> placements, TimeMs first_start, Millis kept) {
  if (id.value() >= jobs_.size()) return InvalidArgument("unknown job");
  JobRecord& j = jobs_[id.value()];
  if (j.state != JobState::kPending || j.reason != PendingReason::kNew) {
    return FailedPrecondition("only a job just submitted can be adopted");
  }
  if (placements.size() != static_cast<size_t>(j.task_count)) {
    return InvalidArgument(std::to_string(placements.size()) + " placements for " +
                           std::to_string(j.task_count) + " tasks");
  }
  CellState::Proposal proposal(cell_);
  for (size_t i = 0; i < placements.size(); ++i) {
    Placement& p = placements[i];
    if (p.node >= cell_.node_count()) return InvalidArgument("placement on an unknown node");
    if (!node_up_[p.node]) return FailedPrecondition(cell_.node_name(p.node) + " is down");
    p.task = {id, static_cast<int32_t>(i)};
    p.node_version = cell_.node(p.node).version;
    if (Status s = proposal.Add(p); !s.ok()) return s;  // the proposal undoes what it added
  }
  proposal.Keep();
  const TimeMs now = clock_.Now();
  Enqueue(j, now);  // as its submission would; Start takes it out again
  JoinSpeedPool(j, +1);
  j.first_start = first_start;
  j.kept_ms = kept;
  GangResult placed;
  placed.outcome = PlaceOutcome::kPlaced;
  placed.placements = std::move(placements);
  placed.level = TopologyLevel::kAny;
  Start(j, std::move(placed), "adopted", now);
  return Status::Ok();
}

void Engine::NodeLost(uint32_t node, TimeMs at) {
  PostAt(EventKind::kNodeLost, at, {}, node);
}

void Engine::NodeRecovered(uint32_t node, TimeMs at) {
  PostAt(EventKind::kNodeRecovered, at, {}, node);
}

void Engine::Cordon(uint32_t node, TimeMs at) {
  PostAt(EventKind::kCordon, at, {}, node);
}

void Engine::Drain(uint32_t node, TimeMs at) {
  PostAt(EventKind::kDrain, at, {}, node);
}

void Engine::Uncordon(uint32_t node, TimeMs at) {
  PostAt(EventKind::kUncordon, at, {}, node);
}

size_t Engine::RequeueAllOn(uint32_t node, TimeMs now, PendingReason why,
                            const std::string& prefix) {
  std::vector<uint32_t> victims;
  for (const TaskRef& t : cell_.tasks_on(node))
    victims.push_back(t.job.value());
  std::sort(victims.begin(), victims.end());
  victims.erase(std::unique(victims.begin(), victims.end()), victims.end());
  for (uint32_t v : victims) {
    Requeue(jobs_[v], now, why, DecisionKind::kRequeue, prefix + cell_.node_name(node));
    ++counters_.requeues;
  }
  return victims.size();
}

void Engine::Withhold(uint32_t node, bool withhold) {
  int sign = withhold ? -1 : +1;
  for (const DeviceSlot& d : cell_.devices(node))
    free_by_model_[d.model] += sign * d.free;
  cell_.SetSchedulable(node, !withhold);
  if (multi_cluster_) summaries_.Touch(node);
}

void Engine::Reconsider() {
  for (const auto& [tenant, queue] : queues_) {
    for (const QueueEntry& q : queue) {
      JobRecord& j = jobs_[q.id];
      if (j.reason != PendingReason::kInfeasible) continue;
      j.reason = PendingReason::kResources;
      Press(j, +1);
    }
  }
}

void Engine::ReportUtilization(JobId job, uint64_t generation, Milli utilization, TimeMs at) {
  Event e;
  e.time = at;
  e.kind = EventKind::kUtilization;
  e.job = job;
  e.generation = generation;
  e.value = utilization;
  events_.Push(e);
}

Result<uint32_t> Engine::AddNode(NodeId id) {
  Result<uint32_t> added = cell_.AddNode(spec_, id);
  if (!added.ok()) return added;
  uint32_t n = *added;
  node_up_.push_back(cell_.node(n).schedulable);
  cordoned_.push_back(false);
  if (multi_cluster_) summaries_.Touch(n);
  if (node_up_[n]) {
    for (const DeviceSlot& d : cell_.devices(n)) {
      model_present_[d.model] = true;
      free_by_model_[d.model] += d.free;
      healthy_milli_ += kMilliPerUnit;
    }
  }
  dirty_ = true;
  return n;
}

std::optional<TimeMs> Engine::NextEventTime() const {
  if (events_.empty()) return std::nullopt;
  return events_.top().time;
}

void Engine::RunDue() {
  TimeMs now = clock_.Now();
  while (!events_.empty() && events_.top().time <= now)
    Handle(events_.Pop());
  if (dirty_) {
    dirty_ = false;
    Cycle();
  }
  ScheduleTick(now);
}

void Engine::ScheduleTick(TimeMs now) {
  if (options_.tick <= 0 || tick_at_ || pending_count_ == 0 || running_count() == 0) return;
  tick_at_ = now + options_.tick;
  PostAt(EventKind::kTick, *tick_at_, {}, 0);
}

void Engine::Handle(const Event& e) {
  TimeMs now = clock_.Now();
  switch (e.kind) {
    case EventKind::kSubmit: {
      JobRecord& j = jobs_[e.job.value()];
      // Cancelled before it arrived, or adopted as running.
      if (j.state != JobState::kPending) return;
      Enqueue(j, now);
      JoinSpeedPool(j, +1);
      dirty_ = true;
      return;
    }
    case EventKind::kFinish:
    case EventKind::kFail: {
      JobRecord& j = jobs_[e.job.value()];
      if (!j.running() || j.generation != e.generation) return;  // an older run's report
      bool ok = e.kind == EventKind::kFinish;
      Finish(j, now, ok ? JobState::kSucceeded : JobState::kFailed,
             ok ? DecisionKind::kFinish : DecisionKind::kFail, ok ? "completed" : "task failed");
      dirty_ = true;
      return;
    }
    case EventKind::kCancel: {
      JobRecord& j = jobs_[e.job.value()];
      if (IsTerminal(j.state)) return;
      if (j.state == JobState::kPending) Dequeue(j);
      Finish(j, now, JobState::kCancelled, DecisionKind::kCancel, "cancelled by the user");
      dirty_ = true;
      return;
    }
    case EventKind::kNodeLost: {
      if (e.node >= node_up_.size() || !node_up_[e.node]) return;
      RequeueAllOn(e.node, now, PendingReason::kNodeLost, "node-lost:");
      if (!cordoned_[e.node]) Withhold(e.node, true);
      healthy_milli_ -= kMilliPerUnit * static_cast<Milli>(cell_.devices(e.node).size());
      node_up_[e.node] = false;
      dirty_ = true;
      return;
    }
    case EventKind::kNodeRecovered: {
      if (e.node >= node_up_.size() || node_up_[e.node]) return;
      node_up_[e.node] = true;
      healthy_milli_ += kMilliPerUnit * static_cast<Milli>(cell_.devices(e.node).size());
      if (!cordoned_[e.node]) {
        Withhold(e.node, false);
        Reconsider();  // jobs judged infeasible without this node
      }
      dirty_ = true;
      return;
    }
    case EventKind::kCordon:
    case EventKind::kDrain: {
      if (e.node >= node_up_.size()) return;
      if (!cordoned_[e.node]) {
        if (node_up_[e.node]) Withhold(e.node, true);
        cordoned_[e.node] = true;
        dirty_ = true;
      }
      if (e.kind == EventKind::kDrain &&
          RequeueAllOn(e.node, now, PendingReason::kPreempted, "drained:") > 0) {
        dirty_ = true;
      }
      return;
    }
    case EventKind::kUncordon: {
      if (e.node >= node_up_.size() || !cordoned_[e.node]) return;
      cordoned_[e.node] = false;
      if (node_up_[e.node]) {
        Withhold(e.node, false);
        Reconsider();
      }
      dirty_ = true;
      return;
    }
    case EventKind::kTick:
      tick_at_.reset();
      dirty_ = true;
      return;
    case EventKind::kUtilization: {
      JobRecord& j = jobs_[e.job.value()];
      if (!j.running() || j.generation != e.generation) return;
      const PolicyRule* rule = compiled_[e.job.value()]->idle;
      if (!rule) return;
      const auto& r = std::get<IdleReclaimRule>(rule->body);
      if (e.value >= r.utilization_below) {
        j.idle_since.reset();
        j.idle_noticed = false;
        idle_.erase(e.job.value());
        return;
      }
      if (j.idle_since) return;  // idle already; the clock runs from the first report
      j.idle_since = now;
      idle_.insert(e.job.value());
      PostAt(EventKind::kTick, now + r.after, {}, 0);
      return;
    }
  }
}

// ---- the scheduling cycle ----

void Engine::Cycle() {
  ++counters_.cycles;
  CycleState cs;
  cs.now = clock_.Now();
  ledger_.Roll(cs.now);
  if (!idle_.empty()) ReclaimIdle(cs.now);
  if (pending_count_ > 0) PlacePending(cs);
  if (ordering_.speed_aware() && !cs.blocked) MigrateToFasterModels(cs);
}

void Engine::Enqueue(JobRecord& j, TimeMs now) {
  j.queued_since = now;
  // A job that may burst is looked at again when its wait reaches the rule's threshold.
  if (const PolicyRule* burst = compiled_[j.id.value()]->burst) {
    Millis after = std::get<BurstRule>(burst->body).after;
    if (after > 0) PostAt(EventKind::kTick, now + after, {}, 0);
  }
  QueueEntry e{-j.priority, ordering_.Key(j, now), j.submitted, j.key, j.id.value()};
  queue_entry_[j.id.value()] = e;
  queues_[j.job.tenant.value()].insert(e);
  ++pending_count_;
  if (j.reason != PendingReason::kInfeasible) Press(j, +1);
}

void Engine::Press(const JobRecord& j, int sign) {
  pending_demand_ += sign * j.device_milli;
  const Compiled& c = *compiled_[j.id.value()];
  for (const auto& [cluster, model] : c.pressure_on)
    summaries_.AddPressure(cluster, model, sign * c.pressure_share);
}

void Engine::Dequeue(JobRecord& j) {
  size_t erased = queues_[j.job.tenant.value()].erase(queue_entry_[j.id.value()]);
  if (erased == 0) return;
  --pending_count_;
  if (j.reason != PendingReason::kInfeasible) Press(j, -1);
}

void Engine::MarkInfeasible(JobRecord& j) {
  if (j.reason == PendingReason::kInfeasible) return;
  j.reason = PendingReason::kInfeasible;
  Press(j, -1);
}

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
  // Sized once: `best_shares` points into it.
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
  while (true) {
    // The next job: highest priority head, then the tenant with the smallest shares along
    // its path (hierarchical DRF), then the tenant id.
    Cursor* best = nullptr;
    const std::vector<int64_t>* best_shares = nullptr;
    for (Cursor& c : cursors) {
      while (c.it != c.end && cs.stopped.count(c.it->id))
        ++c.it;  // preempted in this cycle: its turn comes in the next one
      if (c.it == c.end) continue;
      if (best) {
        if (c.it->neg_priority > best->it->neg_priority) continue;
        if (c.it->neg_priority == best->it->neg_priority) {
          const std::vector<int64_t>& shares = shares_of(c.tenant);
          if (!(shares < *best_shares)) continue;
          best = &c;
          best_shares = &shares;
          continue;
        }
      }
      best = &c;
      best_shares = &shares_of(c.tenant);
    }
    if (!best) break;
    JobRecord& j = jobs_[(best->it++)->id];
    if (j.reason == PendingReason::kInfeasible) continue;
    // A job within its tenant's guarantee is owed its devices now: a blocked job ahead of it
    // (which may only need borrowed capacity) neither stops it nor reserves against it.
    if (cs.blocked && GuaranteeModels(j) != 0) {
      if (TryStart(j, cs)) ++counters_.backfilled;
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
    const Compiled& c = *compiled_[j.id.value()];
    if (const CycleState::Refusal* r =
            cs.Refused(c.signature, ElasticClosed(j, c, cs.now), RuntimeLeft(j));
        r && r->reason == PendingReason::kResources) {
      j.reason = PendingReason::kResources;
      j.detail = r->detail;
      continue;
    }
    std::optional<BackfillVerdict> passing;
    if (cs.reservation) {
      const Reservation& r = *cs.reservation;
      std::optional<Millis> left;
      if (j.job.runtime) left = *j.job.runtime - j.kept_ms;
      passing = MayBackfill(r, c.mask, j.device_milli, left, cs.now);
      if (passing->pass == BackfillPass::kRefused) {
        j.reason = PendingReason::kReservation;
        j.detail = "would delay the reservation of " + jobs_[r.head].job.name;
        continue;
      }
    }
    bool started = TryStart(j, cs);
    if (started) {
      if (passing && passing->pass == BackfillPass::kInExtra && cs.reservation)
        cs.reservation->extra -= passing->on_mask;
      if (cs.blocked) ++counters_.backfilled;
      continue;
    }
    // A job its quota or budget holds back does not block the queue: the devices it cannot use are
    // for the jobs behind it (as Slurm's limit-pending jobs hold no reservation).
    if (j.reason == PendingReason::kInfeasible || j.reason == PendingReason::kQuota ||
        j.reason == PendingReason::kBudget)
      continue;
    if (!cs.blocked) {
      cs.blocked = true;
      if (options_.backfill) cs.reservation = ComputeReservation(j, cs.now);
    }
  }
}

// Heterogeneity-aware policies move running jobs onto faster device models that would
// otherwise stand idle: only when every pending job has had its turn and none is blocked (so
// no waiting job wanted those devices), only preemptible jobs (a move is a restart from the
// last checkpoint), and only when the time saved on the rest of the run outweighs twice the
// work the restart throws away. Largest speed-up first.
void Engine::MigrateToFasterModels(CycleState& cs) {
  struct Candidate {
    double gain;
    uint64_t key;
    uint32_t id;
    Milli speed;
  };
  std::vector<Candidate> candidates;
  for (uint32_t id : slow_) {  // running jobs at least 1.25x faster elsewhere
    const JobRecord& j = jobs_[id];
    const Compiled& c = *compiled_[id];
    if (!j.preemptible) continue;
    Milli now_speed = c.run_speed;
    Milli best = c.speed_of[c.by_speed.front()];
    candidates.push_back(
        {static_cast<double>(best) / static_cast<double>(now_speed), j.key, id, now_speed});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.gain != b.gain ? a.gain > b.gain : a.key < b.key;
  });
  for (const Candidate& cand : candidates) {
    JobRecord& j = jobs_[cand.id];
    Compiled& c = *compiled_[cand.id];
    // The rest of the run at today's speed, by the estimate (unknown: assume it is long).
    double rest =
        j.job.runtime ? static_cast<double>(std::max<Millis>(0, *j.job.runtime - j.kept_ms)) : 1e18;
    rest *= static_cast<double>(kMilliPerUnit) / static_cast<double>(cand.speed);
    double lost =
        static_cast<double>(LostSinceCheckpoint(j.last_start, cs.now, j.job.checkpoint_interval));
    for (uint16_t m : c.by_speed) {
      Milli faster = c.speed_of[m];
      if (faster * 4 < cand.speed * 5) break;
      if (free_by_model_[m] < j.device_milli) continue;
      double saved = rest * (1.0 - static_cast<double>(cand.speed) / static_cast<double>(faster));
      if (saved <= 2 * lost + 60.0 * 1000) continue;
      std::vector<Milli> held = PerModel(j.placements);
      quotas_.Refund(j.job.tenant, held);
      QuotaVerdict v = quotas_.Check(j.job.tenant, RequestPerModel(j, m));
      quotas_.Charge(j.job.tenant, held);
      if (!v.ok) continue;
      ++counters_.placements_tried;
      GangResult r = PlaceGang(cell_, placer_, Variant(c, ModelMask{1} << m), &rng_);
      if (r.outcome != PlaceOutcome::kPlaced) continue;
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, " x%.2f",
                    static_cast<double>(faster) / static_cast<double>(cand.speed));
      std::string why = "faster-model:" + spec_.model(DeviceModelId(m)).name + ratio;
      backend_.Stop(j, cs.now);
      // The new placement is committed already; release only the old one.
      std::vector<Placement> fresh = std::move(r.placements);
      ReleaseResources(j);
      StopRun(j, cs.now, /*lose_since_checkpoint=*/true);
      ++j.restarts;
      ++counters_.migrations;
      LogDecision(DecisionKind::kMigrate, j, std::move(why), cs.now);
      r.placements = std::move(fresh);
      Start(j, std::move(r), "migrate", cs.now);
      break;
    }
  }
}

void Engine::TrackRunning(const JobRecord& j, bool running) {
  const uint32_t id = j.id.value();
  Compiled& c = *compiled_[id];
  if (c.spread_group) spread_.Track(*c.spread_group, j.placements, running ? 1 : -1);
  if (!running) {
    slow_.erase(id);
    running_by_tenant_.Erase(id);
    running_by_priority_.Erase(id);
    preemptible_by_priority_.Erase(id);
    return;
  }
  const uint32_t klass =
      priority_sets_.try_emplace(j.priority, static_cast<uint32_t>(priority_sets_.size()))
          .first->second;
  running_by_tenant_.Insert(j.job.tenant.value(), id);
  running_by_priority_.Insert(klass, id);
  if (j.preemptible) preemptible_by_priority_.Insert(klass, id);
  c.run_speed = RunSpeed(j);
  if (c.by_speed.size() >= 2 && c.run_speed > 0 &&
      c.speed_of[c.by_speed.front()] * 4 >= c.run_speed * 5) {
    slow_.insert(id);
  }
}

void Engine::JoinSpeedPool(const JobRecord& j, int sign) {
  Compiled& c = *compiled_[j.id.value()];
  if (c.in_speed_pool == (sign > 0) || c.by_speed.empty()) return;
  c.in_speed_pool = sign > 0;
  for (uint16_t m : c.by_speed) {
    speed_pool_[m].first += sign * c.speed_of[m];
    speed_pool_[m].second += sign;
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

const GangRequest& Engine::Variant(Compiled& c, ModelMask mask, uint32_t scope) {
  if (c.mask == 0) mask = c.mask;
  if (mask == c.mask && scope == 0) return c.gang;
  auto it = c.variants.find({mask, scope});
  if (it != c.variants.end()) return it->second;
  GangRequest g = c.gang;
  for (GangGroup& group : g.groups) {
    if (scope != 0) group.shape.scope = scope;
    if (!group.shape.cpu_only()) group.shape.models &= mask;
    shapes_.Intern(group.shape);
  }
  return c.variants.emplace(std::make_pair(mask, scope), std::move(g)).first->second;
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

bool Engine::TryStart(JobRecord& j, CycleState& cs) {
  const Compiled& c = *compiled_[j.id.value()];
  const bool waiting = ElasticClosed(j, c, cs.now);
  if (const CycleState::Refusal* r = cs.Refused(c.signature, waiting, RuntimeLeft(j))) {
    j.reason = r->reason;
    j.detail = r->detail;
    return false;
  }
  ++counters_.placements_tried;
  PendingReason refused = PendingReason::kNone;
  std::optional<GangResult> placed = PlaceWithQuota(j, cs, &refused);
  if (placed) {
    Start(j, std::move(*placed), cs.blocked ? "backfill" : "order", cs.now);
    return true;
  }
  if (j.reason == PendingReason::kInfeasible) return false;
  // A job of the same signature (shapes, gang rule, priority, tenant) that found no victims
  // this cycle means this one would not either: its queue position is no better.
  // Preemption searches that found nothing are capped per cycle (the jobs first in order had
  // theirs); the rest look again in the next cycle.
  if (!cs.NoVictims(c.signature, waiting) && cs.preemptions_failed < options_.preemption_attempts) {
    if (TryPreempt(j, cs)) return true;
    cs.no_victims[waiting ? 1 : 0].insert(c.signature);
    ++cs.preemptions_failed;
  }
  j.reason = refused != PendingReason::kNone ? refused : PendingReason::kResources;
  // Budgets start afresh at midnight: look again then.
  if (refused == PendingReason::kBudget && budget_tick_ <= cs.now) {
    budget_tick_ = NextMidnight(cs.now);
    PostAt(EventKind::kTick, budget_tick_, {}, 0);
  }
  cs.refused[waiting ? 1 : 0].emplace(c.signature,
                                      CycleState::Refusal{j.reason, j.detail, RuntimeLeft(j)});
  return false;
}

std::optional<GangResult> Engine::PlaceWithQuota(JobRecord& j, CycleState& cs,
                                                 PendingReason* refused, ModelMask only) {
  Compiled& c = *compiled_[j.id.value()];
  const ModelMask mine = c.mask == 0 ? 0 : c.mask & only;  // CPU-only jobs have no models
  if (c.mask != 0 && mine == 0) return std::nullopt;
  if (!c.over_limit.empty()) {
    MarkInfeasible(j);
    j.detail = c.over_limit;
    return std::nullopt;
  }
  std::vector<ModelMask> masks;
  std::vector<const char*> whys;  // why each mask is tried before the next (by index)
  bool mixed_last = false;        // the last mask is tried only when every other is infeasible
  if (ordering_.speed_aware() && c.by_speed.size() > 1) {
    for (uint16_t m : cs.contended ? ByAdvantage(c) : c.by_speed) {
      if ((mine >> m) & 1) {
        masks.push_back(ModelMask{1} << m);
        whys.push_back(cs.contended ? "each model is tried apart, where the job gains most first"
                                    : "each model is tried apart, the job's fastest first");
      }
    }
    // A gang larger than any one model's devices may still run across models, at the pace
    // of the slowest; one that fits a single model waits for it instead (tried below only
    // when every single model is infeasible).
    if (std::popcount(mine) > 1) {
      masks.push_back(mine);
      mixed_last = true;
    }
  } else {
    mixed_last = AgnosticMasks(j, c, mine, &masks, &whys);
  }
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
        *refused = PendingReason::kQuota;
        all_infeasible = false;
        detail = pre.why;
        placer_said = false;
        continue;
      }
    }
    GangResult r = PlaceAcrossClusters(j, c, mask, cs, i < whys.size() ? whys[i] : nullptr);
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
          return r;
        }
        for (const Placement& p : r.placements)
          cell_.Release(p);
        *refused = PendingReason::kBudget;
        all_infeasible = false;
        detail = b.why;
        placer_said = false;
        continue;
      }
      for (const Placement& p : r.placements)
        cell_.Release(p);
      *refused = PendingReason::kQuota;
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
    if (detail.empty() || *refused == PendingReason::kNone) {
      std::string said = r.why.ToString() + (r.detail.empty() ? "" : "; " + r.detail);
      if (masks.size() > 1 && c.mask != 0) {
        said = "on " + ModelNames(spec_, mask) + ": " + said;
        if (placer_said) said = detail + " | " + said;
      }
      detail = std::move(said);
      placer_said = true;
    }
  }
  if (all_infeasible) MarkInfeasible(j);
  j.detail = detail;
  return std::nullopt;
}

// An agnostic job's models in the order to try them: first those on which its tenant stays
// within its own guarantee, then those on which the quota admits the whole job (borrowing),
// last all of them (for a gang that may split across models, or to tell a job that fits
// nowhere from one the quota keeps off the models where it would fit). Asking the quota
// before the placer keeps a job from landing on a model the lending pool then refuses while
// the models it may use fill up. True when the last mask is to be tried only if every other
// was infeasible.
bool Engine::AgnosticMasks(const JobRecord& j, const Compiled& c, ModelMask mine,
                           std::vector<ModelMask>* masks, std::vector<const char*>* whys) const {
  if (c.mask == 0 || std::popcount(mine) < 2) {
    masks->push_back(mine);
    return false;
  }
  const QuotaRoom room = QuotaRoomFor(j, c, mine);
  ModelMask own = 0;
  for (size_t m = 0; m < cell_.model_count(); ++m)
    if (((room.whole >> m) & 1) && quotas_.WithinGuarantee(j.job.tenant, RequestPerModel(j, m)))
      own |= ModelMask{1} << m;
  if (own != 0 && own != room.whole) {
    masks->push_back(own);
    whys->push_back("the models within the tenant's guarantee are tried first");
  }
  if (room.whole != 0) {
    masks->push_back(room.whole);
    whys->push_back("the models the quota admits the whole job on are tried first");
  }
  if (room.whole == mine) return false;
  masks->push_back(mine);
  whys->push_back(nullptr);
  return masks->size() > 1 && j.task_count == 1;
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
  per[model] = j.device_milli;
  return per;
}

// Runs idle past their idle-reclaim rule's threshold: the owner is told (notify), the run is
// stopped and requeued behind the waiting work (preempt), or a service replica is removed,
// its autoscaler adding one back should the load need it (shrink; on other jobs, a notice).
void Engine::ReclaimIdle(TimeMs now) {
  std::vector<uint32_t> due;
  for (auto it = idle_.begin(); it != idle_.end();) {
    const JobRecord& j = jobs_[*it];
    if (!j.running() || !j.idle_since) {  // ended, or stopped and not yet idle again
      it = idle_.erase(it);
      continue;
    }
    const auto& r = std::get<IdleReclaimRule>(compiled_[*it]->idle->body);
    if (*j.idle_since + r.after <= now) due.push_back(*it);
    ++it;
  }
  for (uint32_t id : due) {
    idle_.erase(id);
    JobRecord& j = jobs_[id];
    const PolicyRule& rule = *compiled_[id]->idle;
    const auto& r = std::get<IdleReclaimRule>(rule.body);
    const std::string why = "idle-reclaim:" + rule.name + " utilization below " +
                            FormatMilli(r.utilization_below * 100) + "% for " +
                            FormatDuration(now - *j.idle_since) + " (from " +
                            FormatDuration(*j.idle_since - j.last_start) + " into the run)";
    const bool replica = j.job.labels.count(kServiceLabel) > 0;
    if (r.action == ReclaimAction::kPreempt) {
      j.arrival_order = now;  // behind the work already waiting
      Requeue(j, now, PendingReason::kIdle, DecisionKind::kRequeue, why);
    } else if (r.action == ReclaimAction::kShrink && replica) {
      Finish(j, now, JobState::kCancelled, DecisionKind::kCancel, why + " (shrink)");
    } else if (!j.idle_noticed) {
      j.idle_noticed = true;
      LogDecision(DecisionKind::kIdle, j, why, now);
    }
  }
}

// ---- starting and stopping runs ----

void Engine::Start(JobRecord& j, GangResult placed, std::string reason, TimeMs now, Millis wait) {
  if (j.state == JobState::kPending) Dequeue(j);
  j.placements = std::move(placed.placements);
  j.level = placed.level;
  j.state = JobState::kPlaced;  // committed to the cell; running once the backend launched it
  j.reason = PendingReason::kNone;
  j.detail.clear();
  ++j.generation;
  j.idle_since.reset();
  j.idle_noticed = false;
  j.last_start = now + wait;
  if (!j.first_start) j.first_start = j.last_start;
  j.estimated_end = EstimatedEnd(j, j.last_start, RunSpeed(j));
  quotas_.Charge(j.job.tenant, PerModel(j.placements));
  for (const Placement& p : j.placements) {
    AdjustFree(p.node, p, -1);
  }
  allocated_milli_ += j.device_milli;
  if (holds_.size()) holds_.Charge(j.placements, compiled_[j.id.value()]->holds, j.preemptible, 1);
  TrackRunning(j, true);
  if (j.estimated_end != kNever) ends_.insert({j.estimated_end, j.id.value()});
  ledger_.Begin(j.id.value(), BudgetKeyOf(j, *compiled_[j.id.value()]), ledger_.Rate(j.placements),
                now, j.estimated_end);
  ++counters_.starts;
  backend_.Launch(j, now);
  j.state = JobState::kRunning;
  Record(j);
  std::vector<uint32_t> nodes;
  for (const Placement& p : j.placements)
    nodes.push_back(p.node);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  // The record keeps no copy of its explanation: the decision log is where it is read.
  LogDecision(DecisionKind::kStart, j, std::move(reason), now, std::move(nodes),
              std::move(j.where));
}

Millis Engine::RuntimeLeft(const JobRecord& j) {
  return j.job.runtime ? std::max<Millis>(0, *j.job.runtime - j.kept_ms) : -1;
}

TimeMs Engine::EstimatedEnd(const JobRecord& j, TimeMs now, Milli speed) const {
  Millis left = RuntimeLeft(j);
  if (left < 0) return kNever;
  // The declared runtime is on the reference device (speed 1000): a run on a model at 0.6 takes
  // 1/0.6 as long, one at 1.9 about half as long.
  if (speed > 0) left = left * kMilliPerUnit / speed;
  return now + std::max<Millis>(1000, left);
}

void Engine::AdjustFree(uint32_t node, const Placement& p, int sign) {
  auto devices = cell_.devices(node);
  for (const DeviceUse& u : p.devices)
    allocated_by_model_[devices[u.index].model] -= sign * u.milli;
  if (!Usable(node)) return;
  for (const DeviceUse& u : p.devices)
    free_by_model_[devices[u.index].model] += sign * u.milli;
  if (multi_cluster_) summaries_.Touch(node);
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

GangResult Engine::PlaceAcrossClusters(JobRecord& j, Compiled& c, ModelMask mask, CycleState& cs,
                                       const char* why_mask) {
  if (!c.global) return PlaceSpread(c, Variant(c, mask), std::nullopt);
  const std::vector<bool> blocked = BurstBlocks(j, c, cs.now);
  static const std::vector<int32_t> kNoSiblings;
  GlobalChoice choice =
      ChooseClusters(spec_, summaries_, *c.global, mask, blocked,
                     c.spread_group ? spread_.by_cluster(*c.spread_group) : kNoSiblings);
  if (why_mask != nullptr) choice.why_only = why_mask;
  std::string fell_back;
  for (const ClusterScore& s : choice.candidates) {
    ModelMask models = c.mask == 0 ? mask : s.models & mask;
    GangResult r = PlaceSpread(c, Variant(c, models, ClusterScope(s.cluster)), s.cluster);
    if (r.outcome == PlaceOutcome::kPlaced) {
      j.where = DescribeChoice(spec_, *c.global, choice, s.cluster,
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
  ScopeTable::Verdicts verdicts = c.global->constraints->verdicts;
  for (size_t cl = 0; cl < blocked.size(); ++cl) {
    if (!blocked[cl] || verdicts[cl]) continue;
    verdicts[cl] = Reason::kLaterPreference;
    elastic_closed = true;
  }
  GangResult r = PlaceSpread(c, Variant(c, mask, scopes_.Intern(verdicts)), std::nullopt);
  if (r.outcome == PlaceOutcome::kPlaced) {
    j.where = spec_.clusters[cell_.node(r.placements.front().node).cluster].name +
              " (no candidate by the summaries; placed over the job's scope)" + fell_back;
    return r;
  }
  if (r.outcome == PlaceOutcome::kInfeasible && elastic_closed) r.outcome = PlaceOutcome::kPending;
  r.detail += (r.detail.empty() ? "" : "; ") + std::string("clusters: ") +
              DescribePassed(spec_, *c.global, choice,
                             AnyBlocked(choice) ? BurstWhy(j, c, cs.now) : std::string()) +
              fell_back;
  return r;
}

GangResult Engine::PlaceSpread(const Compiled& c, const GangRequest& gang,
                               std::optional<uint32_t> cluster) {
  if (!c.spread_group || spread_.running(*c.spread_group) == 0)
    return PlaceGang(cell_, placer_, gang, &rng_);
  GangRequest spread = gang;
  spread.prefer_within = spread_.Tiers(*c.spread_group, cluster);
  return PlaceGang(cell_, placer_, spread, &rng_);
}

void Engine::ReleaseResources(JobRecord& j) {
  ReleaseDevices(j);
  ForgetRun(j);
}

void Engine::ReleaseDevices(const JobRecord& j) {
  for (const Placement& p : j.placements) {
    cell_.Release(p);
    AdjustFree(p.node, p, +1);
  }
  quotas_.Refund(j.job.tenant, PerModel(j.placements));
  if (holds_.size()) holds_.Charge(j.placements, compiled_[j.id.value()]->holds, j.preemptible, -1);
}

void Engine::RetakeDevices(JobRecord& j) {
  for (Placement& p : j.placements) {
    p.node_version = cell_.node(p.node).version;
    Status s = cell_.Commit(p);
    CHECK(s.ok()) << "retaking the devices of " << j.job.name << ": " << s.ToString();
    AdjustFree(p.node, p, -1);
  }
  quotas_.Charge(j.job.tenant, PerModel(j.placements));
  if (holds_.size()) holds_.Charge(j.placements, compiled_[j.id.value()]->holds, j.preemptible, 1);
}

void Engine::ForgetRun(JobRecord& j) {
  allocated_milli_ -= j.device_milli;
  TrackRunning(j, false);
  if (j.estimated_end != kNever) ends_.erase({j.estimated_end, j.id.value()});
}

void Engine::StopRun(JobRecord& j, TimeMs now, bool lose_since_checkpoint) {
  Millis elapsed = std::max<Millis>(0, now - j.last_start);
  Millis lost =
      lose_since_checkpoint ? LostSinceCheckpoint(j.last_start, now, j.job.checkpoint_interval) : 0;
  double milli = static_cast<double>(j.device_milli) / kMilliPerUnit;
  j.run_ms += elapsed;
  j.attained_device_ms += static_cast<double>(elapsed) * milli;
  j.kept_ms += elapsed - lost;
  j.lost_device_ms += static_cast<double>(lost) * milli;
  ledger_.End(j.id.value(), now);
  j.placements.clear();
}

void Engine::Requeue(JobRecord& j, TimeMs now, PendingReason why, DecisionKind kind,
                     std::string reason) {
  backend_.Stop(j, now);
  ReleaseResources(j);
  StopRun(j, now, /*lose_since_checkpoint=*/true);
  j.state = JobState::kPending;
  j.reason = why;
  j.detail = reason;
  ++j.restarts;
  if (kind == DecisionKind::kPreempt) ++j.preemptions;
  Enqueue(j, now);
  Record(j);
  LogDecision(kind, j, std::move(reason), now);
  dirty_ = true;
}

void Engine::Finish(JobRecord& j, TimeMs now, JobState end, DecisionKind kind, std::string reason) {
  if (j.running()) {
    if (end == JobState::kCancelled) backend_.Stop(j, now);
    ReleaseResources(j);
    StopRun(j, now, /*lose_since_checkpoint=*/false);
  }
  j.state = end;
  j.reason = PendingReason::kNone;
  j.finished = now;
  JoinSpeedPool(j, -1);
  --active_;
  Record(j);
  LogDecision(kind, j, std::move(reason), now);
}

void Engine::LogDecision(DecisionKind kind, const JobRecord& j, std::string reason, TimeMs now,
                         std::vector<uint32_t> nodes, std::string where) {
  Decision d;
  d.time = now;
  d.kind = kind;
  d.job = j.id;
  d.reason = std::move(reason);
  if (kind == DecisionKind::kStart) {
    d.level = j.level;
    d.where = std::move(where);
    const std::vector<Milli> per = PerModel(j.placements);
    for (size_t m = 0; m < per.size(); ++m)
      if (per[m] > 0) d.devices.push_back({static_cast<uint16_t>(m), per[m]});
  }
  d.nodes = std::move(nodes);
  store_.AppendDecision(std::move(d));
}

// ---- EASY backfill ----

std::optional<Reservation> Engine::ComputeReservation(const JobRecord& head, TimeMs now) const {
  const ModelMask mask = compiled_[head.id.value()]->mask;
  Milli free = 0;
  for (size_t m = 0; m < free_by_model_.size(); ++m)
    if ((mask >> m) & 1) free += free_by_model_[m];
  auto frees = [&](uint32_t id) {  // the devices of the head's models the job's end gives back
    Milli sum = 0;
    for (const Placement& p : jobs_[id].placements) {
      if (!Usable(p.node)) continue;
      auto devices = cell_.devices(p.node);
      for (const DeviceUse& u : p.devices)
        if ((mask >> devices[u.index].model) & 1) sum += u.milli;
    }
    return sum;
  };
  return ReserveForHead(head.id.value(), mask, head.device_milli, free, now, ends_, frees);
}

// ---- preemption ----

const PreemptionRule* Engine::PreemptionRuleOf(const JobRecord& j) const {
  std::vector<const PolicyRule*> rules = MatchingRules(spec_, RuleKind::kPreemption, j.job);
  return rules.empty() ? nullptr : &std::get<PreemptionRule>(rules.front()->body);
}

bool Engine::MayPreempt(const JobRecord& preemptor, const JobRecord& victim, ModelMask reclaim,
                        TimeMs now, uint64_t holds) const {
  if (!victim.running() || victim.id == preemptor.id) return false;
  if (victim.priority > preemptor.priority) return false;  // never a higher class
  // Held devices come back from whoever borrowed them (preemptibly, by the rule's terms).
  if (holds != 0) {
    return victim.preemptible &&
           holds_.Borrows(victim.placements, compiled_[victim.id.value()]->holds, holds);
  }
  bool reclaimed = false;
  if (reclaim != 0) {
    // Only capacity the victim's tenant borrowed of a reclaimed model: the tenant holds more
    // of it than its guarantee (the preemptor's own tenant never reclaims from itself).
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

ModelMask Engine::GuaranteeModels(const JobRecord& j) const {
  const Compiled& c = *compiled_[j.id.value()];
  ModelMask within = 0;
  for (size_t m = 0; m < cell_.model_count(); ++m) {
    if (((c.mask >> m) & 1) && quotas_.Guarded(m) &&
        quotas_.WithinGuarantee(j.job.tenant, RequestPerModel(j, m))) {
      within |= ModelMask{1} << m;
    }
  }
  return within;
}

bool Engine::TryPreempt(JobRecord& j, CycleState& cs) {
  if (PreemptFor(j, cs, 0)) return true;
  ModelMask reclaim = GuaranteeModels(j);
  if (reclaim != 0 && PreemptFor(j, cs, reclaim)) return true;
  const uint64_t holds = holds_.Reclaimable(compiled_[j.id.value()]->holds);
  return holds != 0 && PreemptFor(j, cs, 0, holds);
}

bool Engine::Frees(const JobRecord& v, const Compiled& c, ModelMask mask, bool waiting) const {
  for (const Placement& p : v.placements) {
    const uint32_t cluster = cell_.node(p.node).cluster;
    if (c.global && (c.global->constraints->verdicts[cluster] ||
                     (waiting && spec_.clusters[cluster].tier == ClusterTier::kElastic)))
      continue;
    if (c.mask == 0) return true;  // a CPU-only job needs only the node's CPU and memory
    // Its devices, or the CPU and memory beside devices of the mask.
    for (const DeviceSlot& d : cell_.devices(p.node))
      if ((mask >> d.model) & 1) return true;
  }
  return false;
}

QuotaRoom Engine::QuotaRoomFor(const JobRecord& j, const Compiled& c, ModelMask mask) const {
  if (c.mask == 0) return {0, true};  // CPU-only: no device quota
  Milli smallest = std::numeric_limits<Milli>::max();
  for (const GangGroup& g : c.gang.groups)
    if (!g.shape.cpu_only()) smallest = std::min(smallest, g.shape.total_milli());
  // Split across models, each model takes whole tasks: count them in the smallest's size.
  QuotaRoom room;
  Milli split = 0;
  for (size_t m = 0; m < cell_.model_count(); ++m) {
    if (!((mask >> m) & 1)) continue;
    Milli headroom = quotas_.Headroom(j.job.tenant, m);
    if (headroom >= j.device_milli) room.whole |= ModelMask{1} << m;
    split += std::min(headroom, j.device_milli) / smallest * smallest;
  }
  room.split = room.whole != 0 || split >= j.device_milli;
  return room;
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
    Milli free = 0;
    for (size_t m = 0; m < free_by_model_.size(); ++m)
      if ((mask >> m) & 1) free += free_by_model_[m];
    for (size_t cl = 0; freed && cl < spec_.clusters.size(); ++cl)
      free += released(cl);
    return free >= j.device_milli;
  }
  // A gang stays within one cluster: one cluster it may use must hold its devices.
  const bool waiting = ElasticClosed(j, c, now);
  for (size_t cl = 0; cl < spec_.clusters.size(); ++cl) {
    if (c.global->constraints->verdicts[cl]) continue;
    if (waiting && spec_.clusters[cl].tier == ClusterTier::kElastic) continue;
    if (summaries_.Free(static_cast<uint32_t>(cl), mask) + released(cl) >= j.device_milli)
      return true;
  }
  return false;
}

bool Engine::CouldMakeRoom(const JobRecord& j, const Compiled& c, ModelMask mask,
                           const std::vector<uint32_t>& victims, TimeMs now) {
  // The quota with every victim's usage refunded, then charged back.
  for (uint32_t id : victims)
    quotas_.Refund(jobs_[id].job.tenant, PerModel(jobs_[id].placements));
  const QuotaRoom room = QuotaRoomFor(j, c, mask);
  for (uint32_t id : victims)
    quotas_.Charge(jobs_[id].job.tenant, PerModel(jobs_[id].placements));
  if (!room.split) return false;
  const size_t models = cell_.model_count();
  std::vector<Milli> freed(std::max<size_t>(spec_.clusters.size(), 1) * models, 0);
  for (uint32_t id : victims) {
    for (const Placement& p : jobs_[id].placements) {
      const size_t cl = spec_.clusters.empty() ? 0 : cell_.node(p.node).cluster;
      auto devices = cell_.devices(p.node);
      for (const DeviceUse& u : p.devices)
        freed[cl * models + devices[u.index].model] += u.milli;
    }
  }
  return RoomInScope(j, c, room.whole != 0 ? room.whole : mask, now, &freed);
}

bool Engine::PreemptFor(JobRecord& j, CycleState& cs, ModelMask reclaim, uint64_t holds) {
  const Compiled& c = *compiled_[j.id.value()];
  const ModelMask only = holds ? holds_.Models(holds) : reclaim ? reclaim : kAnyAccelerator;
  const ModelMask mask = c.mask & only;
  std::vector<VictimCandidate> candidates;
  const bool waiting = ElasticClosed(j, c, cs.now);
  auto consider = [&](uint32_t id) {
    const JobRecord& v = jobs_[id];
    if (!Frees(v, c, mask, waiting) || !MayPreempt(j, v, reclaim, cs.now, holds)) return;
    double lost =
        static_cast<double>(LostSinceCheckpoint(v.last_start, cs.now, v.job.checkpoint_interval)) *
        static_cast<double>(v.device_milli);
    candidates.push_back({v.priority, lost, v.key, id});
  };
  // Only the running jobs that can be victims at all: preemptible ones of a lower class (or
  // of the same class under a preemptive ordering); in a reclaim, the jobs of tenants that
  // borrow a reclaimed model; for held devices, preemptible jobs of no higher class.
  const PreemptionRule* rule = PreemptionRuleOf(j);
  if (reclaim == 0) {
    // A rule with victimsPreemptibleOnly: false opens every running job of a lower class.
    const bool any = holds == 0 && rule && rule->allow && !rule->victims_preemptible_only;
    const JobSets& victims = any ? running_by_priority_ : preemptible_by_priority_;
    for (const auto& [priority, klass] : priority_sets_) {
      if (priority > j.priority ||
          (priority == j.priority && !ordering_.preemptive() && holds == 0))
        break;
      for (uint32_t id : victims.members(klass))
        consider(id);
    }
  } else {
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
  }
  if (candidates.empty()) return false;
  RankVictims(candidates, static_cast<size_t>(options_.preemption_candidates));
  // Most hopeless preemptions end here, before any victim is released: not even all of them
  // together would let the quota admit the job or give a cluster it may use its devices.
  std::vector<uint32_t> all;
  all.reserve(candidates.size());
  for (const VictimCandidate& cand : candidates)
    all.push_back(cand.id);
  if (!CouldMakeRoom(j, c, mask, all, cs.now)) return false;

  // Candidates [0, held) are released; saved[i] is candidate i's placements.
  std::vector<std::vector<Placement>> saved;
  size_t held = 0;
  // Trial releases free only what a placement consults (devices, free counts, summaries,
  // quota); the victims finally chosen are then forgotten as running.
  auto restore = [&](size_t i) {
    JobRecord& v = jobs_[candidates[i].id];
    v.placements = saved[i];
    RetakeDevices(v);
  };
  auto hold = [&](size_t k) {  // release or restore until exactly the first k are released
    for (; held < k; ++held) {
      JobRecord& v = jobs_[candidates[held].id];
      if (saved.size() <= held) saved.push_back(v.placements);
      ReleaseDevices(v);
    }
    while (held > k)
      restore(--held);
  };
  // A placement with the released victims' room, when the counts allow one at all.
  auto attempt = [&]() -> std::optional<GangResult> {
    const QuotaRoom room = QuotaRoomFor(j, c, mask);
    if (!room.split || !RoomInScope(j, c, room.whole != 0 ? room.whole : mask, cs.now))
      return std::nullopt;
    PendingReason refused = PendingReason::kNone;
    return PlaceWithQuota(j, cs, &refused, only);
  };
  // The shortest cheapest-first prefix of the candidates whose release lets the job start.
  std::optional<GangResult> placed;
  auto places = [&](size_t k) {
    if (placed) {
      for (const Placement& p : placed->placements)
        cell_.Release(p);
      placed.reset();
    }
    hold(k);
    placed = attempt();
    return placed.has_value();
  };
  if (!ShortestSufficientPrefix(candidates.size(), places)) {
    hold(0);
    return false;
  }
  std::vector<uint32_t> released;
  for (size_t i = 0; i < held; ++i)
    released.push_back(candidates[i].id);
  // Keep only the victims the placement needs: one whose nodes it does not touch goes back,
  // unless putting it back would break the preemptor's quota admission or a reservation's
  // hold (a non-preemptible borrower reclaimed elsewhere counts against the hold again).
  std::set<uint32_t> used;
  for (const Placement& p : placed->placements)
    used.insert(p.node);
  std::vector<uint32_t> victims;
  for (size_t i = released.size(); i-- > 0;) {
    bool touches = false;
    for (const Placement& p : saved[i])
      touches = touches || used.count(p.node);
    if (!touches) {
      restore(i);
      if (quotas_.Check(j.job.tenant, PerModel(placed->placements)).ok &&
          (holds_.size() == 0 ||
           holds_.Refuses(placed->placements, c.holds, j.preemptible).empty()))
        continue;
      ReleaseDevices(jobs_[released[i]]);
    }
    victims.push_back(released[i]);
  }
  std::sort(victims.begin(), victims.end());
  // A rule's grace period: each victim checkpoints on the signal and exits within it, losing
  // nothing; the preemptor's processes start when it is over. Without a rule, or reclaiming,
  // victims stop at once and lose the work since their last checkpoint.
  const Millis grace = rule && reclaim == 0 && holds == 0 ? rule->grace_period : 0;
  for (uint32_t id : victims) {
    JobRecord& v = jobs_[id];
    std::string cause = holds                     ? "reservation-reclaim"
                        : reclaim                 ? "quota-reclaim"
                        : v.priority < j.priority ? "priority"
                                                  : std::string(ordering_.name());
    // Its devices are released already; finish the stop.
    v.stop_grace = grace;
    backend_.Stop(v, cs.now);
    v.stop_grace = 0;
    v.placements = saved[std::find(released.begin(), released.end(), id) - released.begin()];
    ForgetRun(v);
    StopRun(v, cs.now, /*lose_since_checkpoint=*/grace == 0);
    v.state = JobState::kPending;
    v.reason = PendingReason::kPreempted;
    v.detail = "preempted by " + j.job.name;
    ++v.restarts;
    ++v.preemptions;
    Enqueue(v, cs.now);
    cs.stopped.insert(v.id.value());
    Record(v);
    LogDecision(DecisionKind::kPreempt, v,
                "preempted-by:" + j.job.name + " " + cause +
                    (grace > 0 ? " grace " + FormatDuration(grace) : ""),
                cs.now);
    ++counters_.preemptions;
  }
  Start(j, std::move(*placed), "preempted " + std::to_string(victims.size()) + " job(s)", cs.now,
        victims.empty() ? 0 : grace);
  return true;
}

}  // namespace tessera
