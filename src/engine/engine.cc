#include "engine/engine.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <limits>
#include <map>

#include "engine/engine_cycle.h"
#include "sched/constraints.h"
#include "sched/fleet_view.h"
#include "sched/policy_match.h"

namespace tessera {

Engine::Engine(const Spec& spec, CellState cell, Scorer& scorer, const OrderingPolicy& ordering,
               Store& store, Backend& backend, const Clock& clock, Rng& rng, EngineOptions options,
               const RuleScorers& rule_scorers)
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
  placer_.set_explain(options_.explain);
  for (const auto& [name, rule_scorer] : rule_scorers) {
    auto& p = rule_placers_[name] = std::make_unique<Placer>(*rule_scorer, filters_);
    p->set_explain(options_.explain);
  }
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
  j.min_run = pc ? pc->min_run_or_default() : kDefaultMinRunTime;
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
  c->reachable = c->mask;
  if (c->global) {
    ModelMask present = 0;
    for (uint32_t cl = 0; cl < spec_.clusters.size(); ++cl)
      if (!c->global->constraints->verdicts[cl]) present |= summaries_.models(cl);
    c->reachable &= present;
  }
  // Equal signatures: equal shapes (so models and start) and scope (so reachable models).
  const auto [sig, fresh] =
      signature_ids_.try_emplace(c->signature, static_cast<uint32_t>(signatures_.size()));
  if (fresh) signatures_.push_back({job.tenant, c->reachable, c->start_milli});
  c->sig = sig->second;
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
  // An elastic gang's run may have any number of its tasks from its minimum on.
  const int32_t least = compiled_[id.value()]->start_tasks;
  if (placements.size() < static_cast<size_t>(least) ||
      placements.size() > static_cast<size_t>(j.task_count)) {
    return InvalidArgument(
        std::to_string(placements.size()) + " placements for " + std::to_string(j.task_count) +
        " tasks" +
        (least < j.task_count ? " (at least " + std::to_string(least) + ")" : std::string()));
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
  SendOrders();
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
  SendOrders();
}

void Engine::OrderLaunch(const JobRecord& j, TimeMs now) {
  launch_order_[j.id.value()] = orders_.size();
  orders_.push_back({BackendOrder::kLaunch, now, j.id, nullptr});
}

void Engine::OrderResize(const JobRecord& j, TimeMs now) {
  // A run launched in this batch is launched as it is when the batch ends, resized already.
  if (launch_order_.count(j.id.value())) return;
  orders_.push_back({BackendOrder::kResize, now, j.id, std::make_shared<const JobRecord>(j)});
}

void Engine::OrderStop(const JobRecord& j, TimeMs now) {
  auto as_was = std::make_shared<const JobRecord>(j);
  // A run launched in this batch is launched as it was, before it is stopped.
  if (auto launch = launch_order_.find(j.id.value()); launch != launch_order_.end()) {
    orders_[launch->second].as_was = as_was;
    launch_order_.erase(launch);
  }
  orders_.push_back({BackendOrder::kStop, now, j.id, std::move(as_was)});
}

void Engine::SendOrders() {
  // Swapped out first: a backend may report back (post events) while it is told.
  std::vector<BackendOrder> orders;
  orders.swap(orders_);
  launch_order_.clear();
  for (const BackendOrder& o : orders) {
    const JobRecord& j = o.as_was ? *o.as_was : jobs_[o.job.value()];
    switch (o.kind) {
      case BackendOrder::kLaunch:
        CHECK(o.as_was || j.running()) << "launching " << j.job.name << ", which does not run";
        backend_.Launch(j, o.now);
        break;
      case BackendOrder::kStop:
        backend_.Stop(j, o.now);
        break;
      case BackendOrder::kResize:
        backend_.Resize(j, o.now);
        break;
    }
  }
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
      j.asked_within_guarantee = GuaranteeModels(j) != 0;
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
      // Only the quantum's own tick ends it: a burst's, a budget's or a victim's coming of age
      // posts ticks too, and the quantum's tick is still queued then (a second chain of
      // quantum ticks would follow, then more).
      if (tick_at_ && *tick_at_ <= e.time) tick_at_.reset();
      dirty_ = true;
      return;
    case EventKind::kPromote: {
      JobRecord& j = jobs_[e.job.value()];
      if (j.state != JobState::kPending || j.generation != e.generation) return;
      // Its service so far is forgiven: its place in its tenant's queue is taken afresh.
      std::set<QueueEntry>& queue = queues_[j.job.tenant.value()];
      QueueEntry& entry = queue_entry_[j.id.value()];
      if (queue.erase(entry) == 0) return;
      j.forgiven_device_ms = j.attained_device_ms;
      entry.key = ordering_.Key(j, now);
      queue.insert(entry);
      ++counters_.promotions;
      dirty_ = true;
      return;
    }
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

void Engine::Cycle() {
  ++counters_.cycles;
  CycleState cs;
  cs.now = clock_.Now();
  ledger_.Roll(cs.now);
  if (!idle_.empty()) ReclaimIdle(cs.now);
  if (pending_count_ > 0) PlacePending(cs);
  if (!growing_.empty()) GrowElastic(cs);
  if (ordering_.speed_aware() && !cs.blocked) MigrateToFasterModels(cs);
  // Victims too young to be preempted (minRunTime), or jobs whose search for victims backs
  // off: look again when the first comes of age or may search again, should nothing else happen
  // before.
  const TimeMs again = std::min(cs.protected_until, cs.search_again_at);
  if (again != kNever && (protect_tick_ <= cs.now || again < protect_tick_)) {
    protect_tick_ = again;
    PostAt(EventKind::kTick, protect_tick_, {}, 0);
  }
}

void Engine::Enqueue(JobRecord& j, TimeMs now) {
  j.queued_since = now;
  // A job that may burst is looked at again when its wait reaches the rule's threshold.
  if (const PolicyRule* burst = compiled_[j.id.value()]->burst) {
    Millis after = std::get<BurstRule>(burst->body).after;
    if (after > 0) PostAt(EventKind::kTick, now + after, {}, 0);
  }
  // Back in the queue after a run: a preemptive ordering may promote it after a while.
  if (j.last_run_ms > 0) {
    if (const Millis after = ordering_.PromoteAfter(j); after > 0) {
      Event promote;
      promote.time = now + after;
      promote.kind = EventKind::kPromote;
      promote.job = j.id;
      promote.generation = j.generation;
      events_.Push(promote);
    }
  }
  QueueEntry e{-j.priority,
               j.job.deadline.value_or(kNever),
               ordering_.Key(j, now),
               j.submitted,
               j.key,
               j.id.value(),
               compiled_[j.id.value()]->sig,
               compiled_[j.id.value()]->burst != nullptr};
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

void Engine::Start(JobRecord& j, GangResult placed, std::string reason, TimeMs now, Millis wait) {
  if (j.state == JobState::kPending) Dequeue(j);
  if (options_.explain)
    explained_[j.id.value()] = {PlaceOutcome::kPlaced, {}, std::move(placed.parts)};
  j.placements = std::move(placed.placements);
  j.level = placed.level;
  j.state = JobState::kPlaced;  // committed to the cell; running once the backend launched it
  j.reason = PendingReason::kNone;
  j.detail.clear();
  j.searches_failed = 0;
  j.search_again_at = 0;
  ++j.generation;
  j.idle_since.reset();
  j.idle_noticed = false;
  j.last_start = now + wait;
  if (!j.first_start) j.first_start = j.last_start;
  j.run_overhead = RestartOverhead(j);
  j.estimated_end = EstimatedEnd(j, j.last_start, RunSpeed(j));
  quotas_.Charge(j.job.tenant, PerModel(j.placements));
  for (const Placement& p : j.placements) {
    AdjustFree(p.node, p, -1);
  }
  j.run_milli = MilliOf(j.placements);
  allocated_milli_ += j.run_milli;
  typical_waits_.Observe(j.priority, j.run_milli, now - j.queued_since);
  if (holds_.size()) holds_.Charge(j.placements, compiled_[j.id.value()]->holds, j.preemptible, 1);
  TrackRunning(j, true);
  if (j.placements.size() < static_cast<size_t>(j.task_count)) growing_.insert(j.id.value());
  if (j.estimated_end != kNever) ends_.insert({j.estimated_end, j.id.value()});
  ledger_.Begin(j.id.value(), BudgetKeyOf(j, *compiled_[j.id.value()]), ledger_.Rate(j.placements),
                now, j.estimated_end);
  ++counters_.starts;
  j.state = JobState::kRunning;
  OrderLaunch(j, now);
  Record(j);
  // The record keeps no copy of its explanation: the decision log is where it is read.
  LogDecision(DecisionKind::kStart, j, std::move(reason), now, DistinctNodes(j.placements),
              std::move(j.where));
}

void Engine::ExplainAs(const JobRecord& j, uint32_t refused) {
  auto it = explained_.find(refused);
  if (it != explained_.end()) explained_[j.id.value()] = it->second;
}

Millis Engine::Progress(const JobRecord& j, Millis ran) {
  const double share = MembersShare(j.placements.size(), j.task_count);
  return share >= 1.0 ? ran : static_cast<Millis>(static_cast<double>(ran) * share);
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
  // An elastic gang short of tasks goes at its members' share of the pace.
  const double share = MembersShare(j.placements.size(), j.task_count);
  if (share < 1.0) left = static_cast<Millis>(static_cast<double>(left) / share);
  // A run resumed from a checkpoint reloads it first (a pending job's next run would).
  const Millis overhead = j.state == JobState::kPending ? RestartOverhead(j) : j.run_overhead;
  return now + overhead + std::max<Millis>(1000, left);
}

Millis Engine::RestartOverhead(const JobRecord& j) const {
  return j.run_ms > 0 ? spec_.scheduler.restart_cost : 0;
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

void Engine::ReleaseFrom(JobRecord& v, size_t from) {
  if (from == 0) return ReleaseDevices(v);
  std::vector<Placement> tail(v.placements.begin() + static_cast<std::ptrdiff_t>(from),
                              v.placements.end());
  for (const Placement& p : tail) {
    cell_.Release(p);
    AdjustFree(p.node, p, +1);
  }
  quotas_.Refund(v.job.tenant, PerModel(tail));
  if (holds_.size()) holds_.Charge(tail, compiled_[v.id.value()]->holds, v.preemptible, -1);
  v.placements.resize(from);
}

void Engine::RetakeFrom(JobRecord& v, const std::vector<Placement>& saved, size_t from) {
  if (from == 0) {
    v.placements = saved;
    return RetakeDevices(v);
  }
  std::vector<Placement> tail;
  for (size_t i = from; i < saved.size(); ++i) {
    Placement p = saved[i];
    p.node_version = cell_.node(p.node).version;
    Status s = cell_.Commit(p);
    CHECK(s.ok()) << "retaking the tasks of " << v.job.name << ": " << s.ToString();
    AdjustFree(p.node, p, -1);
    tail.push_back(p);
  }
  quotas_.Charge(v.job.tenant, PerModel(tail));
  if (holds_.size()) holds_.Charge(tail, compiled_[v.id.value()]->holds, v.preemptible, 1);
  v.placements.resize(from);
  v.placements.insert(v.placements.end(), tail.begin(), tail.end());
}

void Engine::ForgetRun(JobRecord& j) {
  allocated_milli_ -= j.run_milli;
  growing_.erase(j.id.value());
  TrackRunning(j, false);
  if (j.estimated_end != kNever) ends_.erase({j.estimated_end, j.id.value()});
}

void Engine::StopRun(JobRecord& j, TimeMs now, bool lose_since_checkpoint) {
  Millis elapsed = std::max<Millis>(0, now - j.last_start);
  // Progress began once the run had reloaded its checkpoint; the devices were held throughout.
  Millis progressed = std::max<Millis>(0, now - j.progress_start());
  Millis lost = lose_since_checkpoint
                    ? LostSinceCheckpoint(j.progress_start(), now, j.job.checkpoint_interval)
                    : 0;
  double milli = static_cast<double>(j.run_milli) / kMilliPerUnit;
  j.run_ms += elapsed;
  j.last_run_ms = elapsed;
  j.attained_device_ms += static_cast<double>(elapsed) * milli;
  j.kept_ms += Progress(j, progressed - lost);
  j.lost_device_ms += static_cast<double>(lost) * milli;
  ledger_.End(j.id.value(), now);
  j.placements.clear();
}

void Engine::Requeue(JobRecord& j, TimeMs now, PendingReason why, DecisionKind kind,
                     std::string reason) {
  OrderStop(j, now);
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
    if (end == JobState::kCancelled) OrderStop(j, now);
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

}  // namespace tessera
