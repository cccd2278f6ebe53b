// The engine: one event loop that drives the scheduler core through time (docs/architecture.md §3).
// Events (submit, finish, fail, cancel, node lost/recovered, tick) update the job records and
// mark the engine dirty; a scheduling cycle then handles everything pending in one batch:
//
//   1. admission  — the tenant's quota (QuotaTracker), per device model, with borrowing;
//   2. ordering   — priority class, hierarchical DRF across tenants, then within a
//                   tenant's queue the earliest deadline (EDF), the ordering policy's key
//                   (fifo, las, hetero), age, submission sequence;
//   4. placement  — the gang placer of sched/ over the cell (all tasks or none);
//   5. preemption — the cheapest victim set that makes room, when the job may preempt
//                   (higher priority class, quota reclaim, or a preemptive ordering);
//   6. backfill   — EASY: the first job that cannot start holds a reservation at the time
//                   enough devices free up (from running jobs' estimates); later jobs start
//                   only if they end before it, or use only devices it will not need;
//   7. explain    — every job left pending carries a reason code and the placer's counts.
//
// The simulator drives the engine with a ManualClock and the sim backend; the daemon with the
// system clock and real backends. Nothing here reads the wall clock or iterates an unordered
// container to decide anything.
//
// Thread-safety: none. The engine's owner calls it from one thread; other threads post
// events through the owner.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/rng.h"
#include "common/stable_vector.h"
#include "engine/deadline.h"
#include "engine/event.h"
#include "engine/job_record.h"
#include "engine/job_sets.h"
#include "engine/ordering.h"
#include "engine/ports.h"
#include "sched/backfill.h"
#include "sched/cluster_summary.h"
#include "sched/compile_job.h"
#include "sched/cost.h"
#include "sched/gang.h"
#include "sched/global.h"
#include "sched/holds.h"
#include "sched/model_order.h"
#include "sched/placer.h"
#include "sched/preemption_cost.h"
#include "sched/quota.h"
#include "sched/scope.h"
#include "sched/spread.h"
#include "sched/typical_waits.h"
#include "sched/victims.h"

namespace tessera {

struct EngineOptions {
  bool backfill = true;  // false: strict order, nothing passes a blocked job
  // Jobs considered in one cycle after the first blocked one (Slurm's bf_max_job_test).
  int32_t backfill_depth = 256;
  // Victims considered for one preemption.
  int32_t preemption_candidates = 512;
  // Failed victim searches per cycle: past this many, later jobs wait for the next cycle
  // (as Kubernetes nominates one preemptor per cycle and Slurm's backfill tests a bounded
  // number of jobs).
  int32_t preemption_attempts = 16;
  Millis tick = 0;  // re-evaluation period; 0 = the ordering policy's quantum
  // The placer scores in explain mode and the engine keeps what it last said of each job
  // (explained()): for `tessera place`, which prints it. Decisions are the same either way.
  bool explain = false;
};

// What the placer last said of a job (EngineOptions::explain): the score parts of each task's
// placement when its run started, or why it could not be placed when it waits.
struct PlacementExplained {
  PlaceOutcome outcome = PlaceOutcome::kPending;
  Explanation why;                                                 // when not placed
  std::vector<std::vector<std::pair<std::string, double>>> parts;  // by task, when placed
};

struct EngineCounters {
  uint64_t cycles = 0;
  uint64_t placements_tried = 0;
  uint64_t starts = 0;
  uint64_t preemptions = 0;
  uint64_t requeues = 0;  // node lost
  uint64_t backfilled = 0;
  uint64_t migrations = 0;  // runs moved to faster device models (heterogeneity-aware)
  uint64_t growths = 0;     // elastic runs that took more tasks
  uint64_t shrinks = 0;     // elastic runs shrunk to their minimum for a preemptor
  // Preemptions found but not made: the preemptor's gain did not pay for the victims' cost
  // (sched/preemption_cost.h).
  uint64_t preemptions_declined = 0;
  // Preemptions put off until the victims' next checkpoints (cheaper than their lost work).
  uint64_t preemptions_deferred = 0;
  // Searches for victims (each a walk of the running jobs that may be victims, and trial
  // releases when some could make room), made or found nothing.
  uint64_t preemption_searches = 0;
  // Requeued jobs whose service a preemptive ordering forgave after their wait (starvation
  // promotion, OrderingPolicy::PromoteAfter).
  uint64_t promotions = 0;
};

// The scorers the configuration's weights rules name (`placement`), by name: a job that such a
// rule matches first is placed by that scorer, every other by the engine's own. A name not
// here is placed by the engine's own (MakeEngineCore provides every name the rules use).
using RuleScorers = std::map<std::string, Scorer*, std::less<>>;

class Engine final : public EventSink {
 public:
  // The cell must have been built from `spec` (node indices = the spec's nodes).
  Engine(const Spec& spec, CellState cell, Scorer& scorer, const OrderingPolicy& ordering,
         Store& store, Backend& backend, const Clock& clock, Rng& rng, EngineOptions options = {},
         const RuleScorers& rule_scorers = {});
  ~Engine() override;

  // Accepts a job; it enters the queue at `at` (>= now). Returns its id.
  JobId Submit(Job job, TimeMs at);
  void Cancel(JobId job, TimeMs at);
  // A run that was running before this engine existed (a daemon's restart, a backend's
  // report): job `id`, just submitted (before the next RunDue), takes exactly `placements` —
  // one per task, in task order; node indices of this cell — as a run first started at
  // `first_start` that has kept `kept` ms of progress. It is launched again (the backend
  // resumes what is left) and logged as a start with reason "adopted". Errors (the job is not
  // newly submitted, a node is unknown or down, the placements do not fit) change nothing:
  // the job is placed anew.
  Status Adopt(JobId id, std::vector<Placement> placements, TimeMs first_start, Millis kept);
  void NodeLost(uint32_t node, TimeMs at);
  void NodeRecovered(uint32_t node, TimeMs at);
  // An operator's hold on a node: cordoned, it takes no new work while what runs there goes
  // on; drained, it is cordoned and its running jobs are requeued (they restart elsewhere
  // from their last checkpoint). Uncordon lifts either.
  void Cordon(uint32_t node, TimeMs at);
  void Drain(uint32_t node, TimeMs at);
  void Uncordon(uint32_t node, TimeMs at);
  // The utilization (busy fraction of its devices, milli) of a job's run `generation`, as a
  // backend or node agent measured it at `at`; an idle-reclaim rule acts on it.
  void ReportUtilization(JobId job, uint64_t generation, Milli utilization, TimeMs at);
  // A node of the spec joins while the engine runs (a daemon registering it): it gets the
  // next cell index, existing indices and job ids never change, and the next cycle may use
  // it. Errors: the node is unknown to the spec or already in the cell.
  Result<uint32_t> AddNode(NodeId id);
  void Post(const Event& e) override { events_.Push(e); }

  // The time of the next event, if any.
  std::optional<TimeMs> NextEventTime() const;
  // Handles every event due at or before the clock's now, then runs a scheduling cycle if
  // anything changed.
  void RunDue();

  // Room for `jobs` more submissions without regrowing (a daemon restoring its queue).
  void Reserve(size_t jobs);

  const JobRecord& job(JobId id) const { return jobs_[id.value()]; }
  // How job `id` stands against its deadline at `now` (none: it has none). engine/deadline.h
  // says what a pending job's estimate counts.
  std::optional<DeadlineOutlook> Outlook(JobId id, TimeMs now) const;
  // In explain mode, what the placer last said of the job (null: nothing, or not in that mode).
  const PlacementExplained* explained(JobId id) const {
    auto it = explained_.find(id.value());
    return it == explained_.end() ? nullptr : &it->second;
  }
  size_t job_count() const { return jobs_.size(); }
  size_t pending_count() const { return pending_count_; }
  size_t running_count() const { return running_by_tenant_.size(); }
  // Jobs not yet in a terminal state.
  size_t active_count() const { return active_; }
  const CellState& cell() const { return cell_; }
  const ClusterSummaries& summaries() const { return summaries_; }
  const QuotaTracker& quotas() const { return quotas_; }
  const CostLedger& ledger() const { return ledger_; }
  const EngineCounters& counters() const { return counters_; }
  const Spec& spec() const { return spec_; }
  // Device milli allocated right now, and the healthy capacity.
  Milli allocated_milli() const { return allocated_milli_; }
  // Milli-devices of each model held by running jobs.
  const std::vector<Milli>& allocated_by_model() const { return allocated_by_model_; }
  Milli healthy_capacity_milli() const { return healthy_milli_; }
  bool node_up(uint32_t node) const { return node_up_[node]; }
  bool cordoned(uint32_t node) const { return cordoned_[node]; }

 private:
  struct Compiled;    // a job's gang request, compiled once
  struct CycleState;  // what one cycle knows

  void PostAt(EventKind kind, TimeMs at, JobId job, uint32_t node);
  void Handle(const Event& e);
  void Cycle();
  void Enqueue(JobRecord& j, TimeMs now);
  void Dequeue(JobRecord& j);
  void MarkInfeasible(JobRecord& j);
  // Recomputes every queued job's key (policies whose keys move while jobs wait).
  void Rekey(TimeMs now);
  void PlacePending(CycleState& cs);
  // Starts `j` now, preempting for it if need be: PendingReason::kNone when it started, else
  // what holds it back (the record's reason and detail say it too).
  PendingReason TryStart(JobRecord& j, CycleState& cs);
  // A placement the quota and the budgets admit, or why there is none: `refused` is kQuota or
  // kBudget when they refused one (else the placer found no room: the job's reason and
  // detail say why).
  struct Admitted {
    std::optional<GangResult> placed;
    PendingReason refused = PendingReason::kNone;
  };
  // Places the job where its quota admits it, on the models of `only` among its own.
  Admitted PlaceWithQuota(JobRecord& j, CycleState& cs, ModelMask only = kAnyAccelerator);
  // The model masks PlaceWithQuota tries in turn (sched/model_order.h).
  ModelOrder MasksToTry(const JobRecord& j, const Compiled& c, ModelMask mine,
                        const CycleState& cs) const;
  // Preemption in two passes: victims of a lower class (or displaced by a preemptive
  // ordering), else — when the job's tenant is within its guarantee of some models — capacity
  // other tenants borrowed of those models, with the job placed on them.
  bool TryPreempt(JobRecord& j, CycleState& cs);
  // Whether the run holds devices of a model some tenant is guaranteed (with `borrowing`
  // false: a run within its tenant's guarantee).
  bool UsesGuardedModels(const JobRecord& j) const;
  // The job's models, of those a cluster it may use has, of which its tenant's guarantee still
  // covers the whole job.
  ModelMask GuaranteeModels(const JobRecord& j) const;
  // The same for any job of signature `sig` tried for its start (Compiled::sig), kept until
  // the quota's usage changes: the queue's walk asks it of every job within a guarantee
  // without reading the job.
  ModelMask GuaranteeModelsOf(uint32_t sig) const;
  ModelMask WithinGuaranteeOn(TenantId tenant, ModelMask mask, Milli request) const;
  // One pass: `reclaim` = 0 for the first, the models reclaimed for the second; `holds` for
  // the third, the reservation holds whose borrowers an owner takes its devices back from.
  bool PreemptFor(JobRecord& j, CycleState& cs, ModelMask reclaim, uint64_t holds = 0);
  // The running jobs PreemptFor may stop for `j` on `mask` (unranked), each with its stop's
  // cost per device freed (StopCostPerDevice).
  // Runs that would be victims but for their age (their class's minRunTime) are left out;
  // `protected_until` is lowered to the time the first of them comes of age.
  std::vector<VictimCandidate> VictimCandidates(const JobRecord& j, const Compiled& c,
                                                ModelMask mask, ModelMask reclaim, uint64_t holds,
                                                TimeMs now, TimeMs& protected_until) const;
  // How long `j` would wait for room without preempting (sched/preemption_cost.h): until enough
  // of its devices free up by the running jobs' estimated ends (backfill's shadow; a day when
  // the estimates do not say); `capped`: no longer than jobs of its class and size waited
  // before they started lately, or than it has waited already when that is longer.
  Millis WaitAvoided(const JobRecord& j, const Compiled& c, TimeMs now, bool capped = true) const;
  // Whether stops of a lower class among `candidates` could pay at all for a preemptor that
  // would wait `wait`: as the fewest of them whose devices could make the room beside the free
  // candidates (at least one), with the least losses among them (false: no set with one of
  // them pays).
  bool MightPay(const JobRecord& j, const Compiled& c, ModelMask mask,
                const std::vector<VictimCandidate>& candidates, Millis wait, TimeMs now) const;
  // What stopping the run now costs it (sched/preemption_cost.h).
  StopCostInput StopOf(const JobRecord& v, TimeMs now) const;
  // What `j`, preempting by class, pays for stopping `which` of `candidates` (a shrink costs
  // nothing): each stop of a lower class in full, and the ordering's displacements within the
  // class what they waste, once there are more than kFreeDisplacements of them. `gap` is set to
  // j's priority over the highest victim of a lower class (0: none).
  PreemptionBill BillOf(const JobRecord& j, const std::vector<VictimCandidate>& candidates,
                        const std::vector<size_t>& which, TimeMs now, int32_t& gap) const;
  // When to stop the victims `chosen` of `candidates` for `j` on `placed`: `now`; later, at
  // their next checkpoints, when the preemptor's wait for them costs less than the work they
  // would lose; or never (kNever) when, preempting by class, the wait it avoids
  // (`wait_for(gap)`, BillOf's gap) does not pay for its victims (BillOf). `must_pay` false: a
  // preemption that is owed (a quota's reclaim, a reservation's hold) whatever it costs.
  // Called with the victims released and `placed` taken.
  TimeMs PreemptionTime(const JobRecord& j, const GangResult& placed, bool must_pay,
                        const std::function<Millis(int32_t)>& wait_for,
                        const std::vector<VictimCandidate>& candidates,
                        const std::vector<size_t>& chosen, TimeMs now) const;
  // Of the candidates `released` (their placements `saved` before each release) that let
  // `placed` start, the ones it needs (their indices); the others take their devices back.
  std::vector<size_t> KeepNeededVictims(const JobRecord& j, const Compiled& c,
                                        const GangResult& placed,
                                        const std::vector<VictimCandidate>& released,
                                        const std::vector<std::vector<Placement>>& saved);
  // A preemption's trial release of a run's tasks from `from` on (0: all it holds; else an
  // elastic run shrunk to its first `from`, its placements cut to them), and its undoing:
  // `saved` (its placements before the release) taken back from `from` on.
  void ReleaseFrom(JobRecord& v, size_t from);
  void RetakeFrom(JobRecord& v, const std::vector<Placement>& saved, size_t from);
  // Shrinks victim `v` (its tasks after its minimum released already; `all` is what it had)
  // for `by`: the run goes on with its minimum, its other tasks stop within `grace`, logged
  // as `shrink`.
  void ShrinkVictim(JobRecord& v, const JobRecord& by, const std::string& cause, Millis grace,
                    std::vector<Placement> all, CycleState& cs);
  // Stops victim `v` (its devices released already) for `by`: back to pending, logged.
  void StopVictim(JobRecord& v, const JobRecord& by, const std::string& cause, Millis grace,
                  std::vector<Placement> placements, CycleState& cs);
  // An agnostic job's model masks (sched/model_order.h: AgnosticOrder), from its quota room.
  ModelOrder AgnosticMasks(const JobRecord& j, const Compiled& c, ModelMask mine) const;
  // What the tenant's quota admits of the job now, on the models of `mask`.
  QuotaRoom QuotaRoomFor(const JobRecord& j, const Compiled& c, ModelMask mask) const;
  // Whether a cluster the job may use now has its device count free on `mask`; `freed`, when
  // given, adds milli per (cluster x model) that victims would release.
  bool RoomInScope(const JobRecord& j, const Compiled& c, ModelMask mask, TimeMs now,
                   const std::vector<Milli>* freed = nullptr) const;
  // The fewest of the ranked candidates whose release could, node by node, hold the job's
  // tasks by count (sched/room_bound.h); none when all of them could not.
  std::optional<size_t> LeastSufficientByCount(const JobRecord& j, const Compiled& c,
                                               ModelMask mask,
                                               const std::vector<VictimCandidate>& candidates,
                                               TimeMs now) const;
  // Whether stopping every one of `victims` could let the job start, judged on the counts
  // alone (the quota, the free devices per cluster): no placement is touched. When it could,
  // the models of `mask` on which the quota would then admit a task of the job.
  std::optional<ModelMask> CouldMakeRoom(const JobRecord& j, const Compiled& c, ModelMask mask,
                                         const std::vector<uint32_t>& victims, TimeMs now);
  // The models of `mask` on which the job's quota admits one of its tasks now.
  ModelMask UsableModels(const JobRecord& j, const Compiled& c, ModelMask mask) const;
  // Whether stopping `v` frees room on a node with devices of `mask` (any node, for a CPU-only
  // job) in a cluster the job may use now.
  bool Frees(const JobRecord& v, const Compiled& c, ModelMask mask, bool waiting) const;
  void MigrateToFasterModels(CycleState& cs);
  // Elastic gangs (gang.minMembers): each running one short of tasks takes more as room
  // appears, in submission order, after the cycle's waiting jobs had their turn and never
  // into the devices the head job's reservation needs (engine_elastic.cc).
  void GrowElastic(CycleState& cs);
  // An elastic gang placed to start (its first gang.minMembers tasks) takes as many more of
  // its tasks as fit beside them now (MoreTasks).
  void Widen(JobRecord& j, GangResult& placed);
  // The elastic gang's next tasks after `run` (its placements so far, `charged` to the quota
  // or not yet), as many as fit one after another beside it — on the run's cluster and
  // models, within the domain its gang rule requires, on its own nodes first — and as its
  // quota and the reservation holds allow. Committed to the cell; the caller adds them to the
  // run (Start) or grows the run by them (Grow).
  std::vector<Placement> MoreTasks(JobRecord& j, Compiled& c, const std::vector<Placement>& run,
                                   bool charged);
  // The task shape of an elastic gang's task `task` (beyond its start) on `models` of
  // `cluster`, under `guard` (interned once).
  const TaskShape& GrowthShape(Compiled& c, int32_t task, ModelMask models, uint32_t cluster,
                               TaskShape::Guard guard);
  // The running job `j` takes `added` (committed to the cell) as its next tasks: a new
  // generation whose progress carries on, logged as `grow`.
  void Grow(JobRecord& j, std::vector<Placement> added, TimeMs now);
  // A running elastic run now has `tasks` (its devices, quota and holds already moved by the
  // caller): what it did so far is kept, a new generation goes on at the new pace from `now`,
  // and the backend is told.
  void ResizeRun(JobRecord& j, std::vector<Placement> tasks, TimeMs now);
  void ReclaimIdle(TimeMs now);
  // The speed of the job's current run: its slowest task's device model.
  Milli RunSpeed(const JobRecord& j) const;
  // The speed of a run on `placements` (0 when it holds no devices).
  Milli SpeedOn(const Compiled& c, const std::vector<Placement>& placements) const;
  void JoinSpeedPool(const JobRecord& j, int sign);
  // Adds the job to (or removes it from) the running set and, for heterogeneity-aware
  // policies, the set of runs that another model would speed up.
  void TrackRunning(const JobRecord& j, bool running);
  // A pending job's demand enters (+1) or leaves (-1) the queue's totals and the clusters'
  // queue pressure.
  void Press(const JobRecord& j, int sign);
  // The job's gang restricted to the device models of `mask` and, when `scope` is not 0, to
  // that placement scope instead of the job's own, its tasks under `guard` (compiled once per
  // mask, scope and guard).
  const GangRequest& Variant(Compiled& c, ModelMask mask, uint32_t scope = 0,
                             TaskShape::Guard guard = TaskShape::kNoGuard);
  // PlaceAcrossClusters under the strictest guard of device nodes first (TaskShape::Guard:
  // CPU-only work on CPU-only nodes, then on device nodes that keep their free devices fed;
  // other work keeping them fed), relaxed only when the guard kept out nodes and nothing else
  // fits; a placement under a relaxed guard says so in the job's `where`.
  GangResult PlaceGuarded(JobRecord& j, Compiled& c, ModelMask mask, CycleState& cs,
                          const char* why_mask = nullptr);
  // The global layer: on a fleet of several clusters, the job's candidate clusters from the
  // summaries, tried in order until one holds the gang; then its whole scope, which explains
  // why nothing fits. On one cluster, the gang placer over the cell.
  // `why_mask`: why the job is tried on `mask` before its other models (null: not said).
  GangResult PlaceAcrossClusters(JobRecord& j, Compiled& c, ModelMask mask, CycleState& cs,
                                 const char* why_mask, TaskShape::Guard guard);
  // PlaceGang for `gang`; a service replica with siblings running first tries the nodes away
  // from them (of `cluster`, or of the whole cell).
  GangResult PlaceSpread(const Compiled& c, const GangRequest& gang,
                         std::optional<uint32_t> cluster);
  // By cluster, whether it is closed to the job now: elastic clusters before the job has
  // waited as long as its burst rule asks (empty = none closed); and the reason, as text.
  // Whether the job's burst rule still keeps it off elastic clusters.
  bool BurstWaiting(const JobRecord& j, const Compiled& c, TimeMs now) const;
  // Whether elastic clusters are closed to the job now: its burst rule's wait, or its budget.
  bool ElasticClosed(const JobRecord& j, const Compiled& c, TimeMs now) const;
  BudgetKey BudgetKeyOf(const JobRecord& j, const Compiled& c) const;
  std::vector<bool> BurstBlocks(const JobRecord& j, const Compiled& c, TimeMs now) const;
  std::string BurstWhy(const JobRecord& j, const Compiled& c, TimeMs now) const;
  std::vector<uint16_t> ByAdvantage(const Compiled& c) const;
  // `wait`: the grace period of the jobs it preempted; its processes start after it.
  void Start(JobRecord& j, GangResult placed, std::string reason, TimeMs now, Millis wait = 0);
  // Stops a running job and returns it to pending (preempted or lost) or ends it.
  void StopRun(JobRecord& j, TimeMs now, bool keep_progress_from_checkpoint);
  void Requeue(JobRecord& j, TimeMs now, PendingReason why, DecisionKind kind, std::string reason);
  void Finish(JobRecord& j, TimeMs now, JobState end, DecisionKind kind, std::string reason);
  void ReleaseResources(JobRecord& j);  // ReleaseDevices, then ForgetRun
  // A run's devices (cell, free counts, summaries) and its quota charge: what a placement
  // consults. Retake undoes it (a preemption's trial release).
  void ReleaseDevices(const JobRecord& j);
  void RetakeDevices(JobRecord& j);
  // The run no longer counts as running (allocation, running sets, estimated ends).
  void ForgetRun(JobRecord& j);
  std::vector<Milli> PerModel(const std::vector<Placement>& placements) const;
  std::vector<Milli> RequestPerModel(const JobRecord& j, size_t model) const;
  // The devices of `placements` on usable nodes that are of a model in `mask` (milli).
  Milli UsableOnMask(std::span<const Placement> placements, ModelMask mask) const;
  // The free milli of the models in `mask` on schedulable nodes.
  Milli FreeOnMask(ModelMask mask) const;
  // `adjust`: added to the free devices of the head's models (what a trial release or
  // placement changed, to see the state before it); `horizon`: as ReserveForHead's.
  std::optional<Reservation> ComputeReservation(const JobRecord& head, TimeMs now, Milli adjust = 0,
                                                TimeMs horizon = kNever) const;
  // Whether `victim` may make room for `preemptor`: with `reclaim` = 0, by class or the
  // ordering; else only as borrowed capacity of the models in `reclaim`; with `holds`, only as
  // a preemptible borrower of those reservation holds.
  // The job's first matching preemption rule; nullptr when none matches.
  const PreemptionRule* PreemptionRuleOf(const JobRecord& j) const;
  bool MayPreempt(const JobRecord& preemptor, const JobRecord& victim, ModelMask reclaim,
                  TimeMs now, uint64_t holds = 0) const;
  // When a run started at `now` at `speed` (of 1000) should end by the job's declared runtime.
  TimeMs EstimatedEnd(const JobRecord& j, TimeMs now, Milli speed) const;
  // What the job's next run (or, running, its current one) spends reloading its checkpoint
  // before it progresses: scheduler.restartCost for every run after its first.
  Millis RestartOverhead(const JobRecord& j) const;
  // In explain mode: job j, refused as `refused` was within a cycle, is explained as it was.
  void ExplainAs(const JobRecord& j, uint32_t refused);
  // The declared runtime the job has still to run (reference-device time); -1 without one.
  static Millis RuntimeLeft(const JobRecord& j);
  // The progress (in runtime) a current run of `j` made in `ran` ms of wall time: all of it,
  // or an elastic gang's share while it runs short of tasks (MembersShare).
  static Millis Progress(const JobRecord& j, Millis ran);
  void ScheduleTick(TimeMs now);
  // The backend is told what a batch (RunDue's events and cycle, an adoption) decided once the
  // batch is done, never from inside it: the orders wait in `orders_`, in the order they were
  // decided, and SendOrders hands them over. A stop carries the record as it was when the run
  // was stopped (the engine has released its placements since); a launch reads the record
  // when sent, unless its run was stopped in the same batch.
  void OrderLaunch(const JobRecord& j, TimeMs now);
  void OrderStop(const JobRecord& j, TimeMs now);
  // A resize carries the record as it was when the run grew or shrank.
  void OrderResize(const JobRecord& j, TimeMs now);
  void SendOrders();
  void Record(const JobRecord& j) { store_.PutJob(j); }
  // Appends one line to the store's decision log (`nodes`: a start's distinct nodes).
  // `where`: a start's explanation (JobRecord::where, moved in).
  void LogDecision(DecisionKind kind, const JobRecord& j, std::string reason, TimeMs now,
                   std::vector<uint32_t> nodes = {}, std::string where = {});
  void AdjustFree(uint32_t node, const Placement& p, int sign);
  // The placement scope that allows only `cluster` (interned on first use).
  uint32_t ClusterScope(uint32_t cluster);

  const Spec& spec_;
  CellState cell_;
  // Each job's hard rules (sched/constraints.h) as a placement scope, read by the scope
  // filters at the head of the placer's chain.
  ScopeTable scopes_;
  ConstraintsTable constraints_;  // equal constraints, one copy shared by their jobs
  FilterChain filters_;
  Placer placer_;
  // The weights rules' scorers' placers, by scorer name (RuleScorers).
  std::map<std::string, std::unique_ptr<Placer>, std::less<>> rule_placers_;
  // The placer of a compiled job: its weights rule's scorer's, else the engine's.
  Placer& PlacerFor(const Compiled& c);
  // A service replica's constraints with the clusters outside its siblings' region excluded,
  // when a rule says crossRegion: false and siblings run; null otherwise.
  std::shared_ptr<const JobConstraints> ReplicaRegion(const Compiled& c) const;
  // The global layer's view: one summary per cluster, used and kept current (by AdjustFree
  // and node events) only when the fleet has more than one cluster with nodes.
  ClusterSummaries summaries_;
  bool multi_cluster_ = false;
  RegionPaths paths_;
  std::vector<uint32_t> cluster_scope_;  // by cluster; 0 = not interned yet
  const OrderingPolicy& ordering_;
  Store& store_;
  Backend& backend_;
  const Clock& clock_;
  Rng& rng_;
  EngineOptions options_;
  QuotaTracker quotas_;
  CostLedger ledger_;
  DeviceHolds holds_;
  ReplicaSpread spread_;
  TimeMs budget_tick_ = 0;   // the midnight a tick is posted for (jobs wait for budget)
  TimeMs protect_tick_ = 0;  // the time a tick is posted for (victims come of age)
  ShapeTable shapes_;

  EventQueue events_;
  // What the backend is to be told once the batch is done (OrderLaunch, OrderStop).
  struct BackendOrder {
    enum Kind : uint8_t { kLaunch, kStop, kResize } kind = kLaunch;
    TimeMs now = 0;
    JobId job;
    std::shared_ptr<const JobRecord> as_was;  // the record at the stop; null: read when sent
  };
  std::vector<BackendOrder> orders_;
  std::unordered_map<uint32_t, size_t> launch_order_;  // job -> its launch in orders_
  // Growing never moves a record: a daemon's engine doubling a std::vector of 65,536 records
  // stalled every API call ~100 ms.
  StableVector<JobRecord> jobs_;
  std::vector<std::unique_ptr<Compiled>> compiled_;
  std::map<uint32_t, PlacementExplained> explained_;  // by job, in explain mode only
  // A pending job's place in its tenant's queue: priority class, then the earliest deadline
  // (EDF; none = kNever, after every job with one), then the ordering policy's key, age and
  // submission sequence.
  struct QueueEntry {
    int32_t neg_priority = 0;
    TimeMs deadline = kNever;
    int64_t key = 0;
    TimeMs submitted = 0;
    uint64_t seq = 0;
    uint32_t id = 0;
    uint32_t sig = 0;     // the job's Compiled::sig (after id: never decides the order)
    bool bursts = false;  // it has a burst rule (Compiled::burst): its elastic clusters may close
    auto operator<=>(const QueueEntry&) const = default;
  };
  // Signatures (CompiledJob::signature) as small numbers (Compiled::sig), each with what the
  // guarantee check of its jobs needs (equal signatures: equal tenant, models and start) and
  // that check's last answer, valid while the quota's version is the one it was made at.
  struct SignatureFacts {
    TenantId tenant;
    ModelMask mask = 0;
    Milli start_milli = 0;
    uint64_t quota_version = ~uint64_t{0};
    ModelMask within = 0;
  };
  std::map<std::vector<uint32_t>, uint32_t> signature_ids_;
  mutable std::vector<SignatureFacts> signatures_;   // by sig; the answers are a cache
  std::map<uint32_t, std::set<QueueEntry>> queues_;  // by tenant
  std::vector<QueueEntry> queue_entry_;              // by job: its entry while pending
  size_t pending_count_ = 0;
  Milli pending_demand_ = 0;  // device milli of pending jobs not known to be infeasible
  // The running jobs, indexed for the victim search: all of them by tenant (set = TenantId
  // value) and by priority class, the preemptible ones by class again (set = the class's
  // number in priority_sets_, which orders the classes).
  JobSets running_by_tenant_;
  JobSets running_by_priority_;
  JobSets preemptible_by_priority_;
  std::map<int32_t, uint32_t> priority_sets_;  // priority -> its set in the two above
  std::set<uint32_t> idle_;     // running jobs idle by their idle-reclaim rule, not yet acted on
  std::set<uint32_t> slow_;     // running jobs at least 1.25x faster on another of their models
  std::set<uint32_t> growing_;  // running elastic gangs that have not all their tasks
  std::set<std::pair<TimeMs, uint32_t>> ends_;  // running jobs by estimated end
  std::vector<bool> node_up_;
  std::vector<bool> cordoned_;
  // Whether new work may use the node's free devices: up and not cordoned.
  bool Usable(uint32_t node) const { return node_up_[node] && !cordoned_[node]; }
  // The node stops (or starts again) counting as free capacity for new work.
  void Withhold(uint32_t node, bool withhold);
  // Requeues every job with a task on `node` (whole: a gang's other tasks too), each logged as
  // a requeue with reason `prefix` + the node's name. Returns how many.
  size_t RequeueAllOn(uint32_t node, TimeMs now, PendingReason why, const std::string& prefix);
  // Jobs judged infeasible get another chance (capacity came back).
  void Reconsider();
  std::vector<Milli> free_by_model_;  // free milli on schedulable nodes
  std::vector<Milli> allocated_by_model_;
  std::vector<bool> model_present_;  // the cell has devices of the model
  // By model: the sum of the speeds there of the jobs in the system that accept it, and
  // their number (heterogeneity-aware placement compares a job's speed with the mean).
  std::vector<std::pair<int64_t, int64_t>> speed_pool_;
  Milli allocated_milli_ = 0;
  Milli healthy_milli_ = 0;
  size_t active_ = 0;
  uint64_t next_key_ = 0;
  bool dirty_ = false;
  std::optional<TimeMs> tick_at_;
  EngineCounters counters_;
  TypicalWaits typical_waits_;  // how long jobs waited before they started, by class and size
};

}  // namespace tessera
