// The daemon's core (`tessera serve`): the configuration, the engine driven by the system
// clock, the emulated backend, the durable store and the in-memory view of every job that the
// API answers from. It is the composition root of the running service; the HTTP layer
// (api.h) only translates requests into these calls.
//
// Submissions are durable before they are acknowledged: Submit waits for the store's commit
// of the job's row, then hands the job to the engine. On start the daemon rebuilds itself from
// the store: finished jobs are shown as they ended, every other job is queued again (a run the
// previous process had started is requeued: the emulated backend's timers died with it).
//
// Thread-safety: every public method may be called from any thread; one mutex guards the
// engine and the view, and the engine runs on a thread of its own, the only one that runs
// it: an API call that changes it (a cancel, a node's hold, a service, a reload) posts the
// change to that thread and waits for the pass that made it (EngineHost::Post); submissions
// wait in an inbox the thread takes at each pass. What a scheduling cycle changes reaches the
// view and the store through a thread of their own ("view"): the cycle only hands over the
// parts of the records they need (JobChange, DecisionChange), and every call that reads the
// view applies what is still pending first.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "backends/local/agent_hub.h"
#include "backends/slurm/slurm_clusters.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/rng.h"
#include "engine/core.h"
#include "engine/engine.h"
#include "engine/services.h"
#include "model/spec.h"
#include "sched/fragmentation.h"
#include "server/accounting.h"
#include "server/auth.h"
#include "server/backend_router.h"
#include "server/emulated_backend.h"
#include "server/engine_host.h"
#include "server/job_book.h"
#include "server/metrics.h"
#include "server/principals.h"
#include "server/views.h"
#include "store/durable_store.h"

namespace tessera {

struct DaemonOptions {
  // The configuration's files or directories: what a reload reads again.
  std::vector<std::string> config_paths;
  // The admin's token on first start with an empty store; "" = generate one.
  std::string admin_token;
  uint64_t seed = 1;
  // How often services are scaled to their load.
  Millis scale_interval = 30 * 1000;
  // The least time between two scheduling cycles: what arrives meanwhile (submissions,
  // finishes) waits for the next, fuller cycle; the first change after a quiet spell is
  // scheduled at once. 0 = a cycle at every change (docs/serve.md#performance).
  Millis cycle_interval = 5;
  // Node agents: how often they sync at least, and the silence after which a node is lost.
  Millis agent_heartbeat = 2000;
  Millis agent_lost_after = 10000;
  // Where the Slurm backend keeps batch scripts and task output of a cluster whose
  // backendOptions name no workDir: WORK_DIR/slurm/CLUSTER.
  std::string work_dir = ".";
  // The scheduler's policy and scorer in place of the configuration's `scheduler` section
  // (`tessera serve --policy/--placement`): what names nothing leaves the section's.
  SchedulerSettings scheduler;
  // Several daemons on one store (PostgreSQL): why this one does not lead it now ("" = it
  // leads). None = it always does (SQLite). While it does not, the daemon neither schedules
  // nor watches its backends, and answers writes and /readyz 503 (docs/operations.md, HA).
  std::function<std::string()> not_leading;
  // The daemon's log lines (level "info", "warn" or "error", a message, fields); none = silent.
  // Called from any thread.
  std::function<void(const std::string& level, const std::string& msg,
                     const nlohmann::json& fields)>
      log;
};

// A page of jobs, newest first.
struct JobPage {
  std::vector<StoredJob> jobs;
  int64_t next = 0;  // the `after` of the next (older) page; 0 = none
  size_t total = 0;  // the jobs the filter matches, on every page
};

struct ServiceOutcome {
  ServiceView service;
  bool replayed = false;  // the same service was submitted before
};

struct SubmitOutcome {
  StoredJob job;
  bool replayed = false;  // an earlier submission with the same Idempotency-Key
};

// A stored row that had not ended, read on start beside the store (daemon.cc): its job, and
// the tasks of the run it had.
struct RestoredJob;
class ResolvedJobs;
// One task of a stored run's placement, its node by name.
struct StoredTask;

class Daemon;

// A started daemon, and the token of the admin it created ("" when the store had principals
// already): to be shown once.
struct DaemonStarted {
  std::unique_ptr<Daemon> daemon;
  std::string admin_token;
};

class Daemon {
 public:
  // Rebuilds the state from `store` and starts the engine's thread. When the store has no
  // principal yet, creates `admin` (DaemonOptions::admin_token).
  static Result<DaemonStarted> Start(Spec spec, std::unique_ptr<DurableStore> store,
                                     const Clock& clock, DaemonOptions options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // An error about the body names the field of its first error (Status::field).
  Result<SubmitOutcome> Submit(const Caller& caller, const std::string& body,
                               const std::string& idempotency_key);
  // A job by id ("17") or name; `tenant` narrows a name several tenants use.
  Result<StoredJob> GetJob(const Caller& caller, const std::string& ref,
                           const std::string& tenant) const;
  JobPage ListJobs(const Caller& caller, const JobFilter& filter) const;
  Result<StoredJob> Cancel(const Caller& caller, const std::string& ref, const std::string& tenant);
  // Why the job is pending, or why it runs where it does, with its decision log.
  Result<JobExplanation> Explain(const Caller& caller, const std::string& ref,
                                 const std::string& tenant);

  // Services (docs/serve.md#services): long-running inference whose replicas are jobs, scaled
  // every DaemonOptions::scale_interval to the load (its curve, or a reported load). Durable
  // before acknowledged; replicas keep running across restarts and reloads. Submitting the
  // same service again is a replay; another service of the same name is a conflict.
  Result<ServiceOutcome> SubmitService(const Caller& caller, const std::string& body);
  // The services the caller may see, each with its replicas and load.
  std::vector<ServiceView> ListServices(const Caller& caller) const;
  Result<ServiceView> GetService(const Caller& caller, const std::string& name) const;
  // Stops a service (durable first): its replicas are cancelled.
  Result<ServiceView> DeleteService(const Caller& caller, const std::string& name);
  // A measured load (`{"rps": N}`), which replaces the service's curve until it is older than
  // three scaling intervals. Errors name the body's offending field.
  Result<ServiceView> ReportLoad(const Caller& caller, const std::string& name,
                                 const std::string& body);

  // The decision log across the jobs the caller may see (`q.limit` of them at most), each
  // with its job's id, name and tenant; `next` (a seq) when there may be more.
  Result<DecisionPage> Decisions(const Caller& caller, DecisionQuery q) const;

  // The fleet as the engine sees it now: clusters with node and device counts.
  std::vector<ClusterSummary> Clusters() const;
  // Nodes (of `cluster`, or all) from cell index `after` on, at most `limit`. Jobs on a node
  // are listed where the caller may see them.
  NodePage ListNodes(const Caller& caller, const std::string& cluster, int64_t after,
                     int limit) const;
  Result<NodeView> GetNode(const Caller& caller, const std::string& name) const;
  // "cordon", "drain" or "uncordon" a node; admins and operators. Durable before it acts.
  Result<NodeView> HoldNode(const Caller& caller, const std::string& name,
                            const std::string& action);

  // Spending within [since, until) by "tenant" (organisation), "project" (tenant path),
  // "cluster" or "model", of the tenants the caller may see; running runs count until now.
  Result<SpendingReport> Costs(const Caller& caller, const std::string& by, TimeMs since,
                               TimeMs until);
  // The tenants the caller may see, with each model's quota and what is in use now.
  std::vector<TenantView> Tenants(const Caller& caller) const;

  // Creates (or replaces) a principal; admins only. An agent is bound to exactly one node of
  // the fleet (Principal::node); one without a node is refused. Errors name the offending
  // field.
  Status PutPrincipal(const Caller& caller, Principal p);
  // Deletes a principal and its tokens (durable first); admins only, and never the caller
  // itself or the last admin. What it submitted stays, recorded under its name.
  Status DeletePrincipal(const Caller& caller, const std::string& name);
  // Revokes every token of `principal` (durable first); admins only. Returns how many.
  Result<size_t> RevokeTokens(const Caller& caller, const std::string& principal);
  // A new token for `principal`, valid until `expires` (nullopt = no expiry); admins only. An
  // agent principal bound to no node (left by an older tessera) gets none.
  Result<std::string> IssueToken(const Caller& caller, const std::string& principal,
                                 std::optional<TimeMs> expires);

  // Node agents (docs/operations.md#agents). One sync of `node`'s agent (an agent principal
  // bound to that node, or an admin; an unbound agent principal left in an old store is refused
  // and logged once): its report is taken in (exits end runs, a new agent brings the node into
  // service), then the answer — the node's assignment — waits until it changes or the sync's
  // wait_ms passes. Errors name the body's offending field.
  Result<std::string> AgentSync(const Caller& caller, const std::string& node,
                                const std::string& body);
  // The tail of a task's output as its agent reported it; the job's current (or last) run
  // unless `run` is given.
  Result<TaskLogView> TaskLog(const Caller& caller, const std::string& ref,
                              const std::string& tenant, int task, std::optional<int> run);
  AgentHub& agents() { return backends_->agents(); }

  // The configuration in force (a reload replaces it; the pointer keeps it alive).
  std::shared_ptr<const Spec> spec() const;
  // The scheduler in force: its policy and placement scorer, by name.
  SchedulerSettings scheduler() const;
  // Reads the configuration's files again and checks them (errors, or what would change). With
  // `apply`, a valid configuration replaces the one in force — the engine is rebuilt on it,
  // waiting jobs are queued again and running ones go on where they are (a run whose node
  // left the fleet is requeued). Admins and operators only.
  Result<ReloadReport> Reload(const Caller& caller, bool apply);
  DurableStore& store() { return *store_; }
  const Authenticator& auth() const { return principals_.auth(); }
  const Clock& clock() const { return clock_; }
  Metrics& metrics() { return metrics_; }
  // Why this daemon does not lead its store now (DaemonOptions::not_leading); "" = it leads.
  std::string NotLeading() const { return options_.not_leading ? options_.not_leading() : ""; }
  // The gauges of /metrics, computed now: queue depth per class and tenant, jobs by state,
  // devices allocated and in service per cluster and model, the store's writes.
  std::vector<Gauge> Gauges() const;
  // Jobs pending and running now, and jobs known in all.
  struct Counts {
    size_t pending = 0, running = 0, total = 0;
  };
  Counts counts() const;
  // How long the start took: reading the store, and rebuilding the view and the queue.
  struct StartTimes {
    double load_ms = 0, restore_ms = 0;
    size_t jobs = 0, active = 0;  // jobs in the store; of those, queued again
    // Of those, jobs whose resolved form could not be read: checked again from the submission.
    size_t rechecked = 0;
  };
  const StartTimes& start_times() const { return start_times_; }

 private:
  class StorePort;
  struct Sink;
  class Replicas;

  // A service submitted through the API: its row, and why it is not driven (a reload made
  // it invalid) when it is not.
  struct ServiceEntry {
    StoredService stored;
    std::string error;
    bool durable = false;
  };

  // The scheduling core built on one configuration: replaced whole by a reload.
  // The scheduler built from a configuration (engine/core.h: as `tessera place` builds it),
  // and the cell's node indices by name.
  struct Core : EngineCore {
    std::unordered_map<std::string, uint32_t> node_index;
    // The policy and scorer its engine decides by, as its decisions name them (a decision
    // applied after a reload still names the engine that made it).
    std::shared_ptr<const SchedulerSettings> decided_by;
  };

  Daemon(std::shared_ptr<const Spec> spec, std::unique_ptr<DurableStore> store, const Clock& clock,
         DaemonOptions options);
  Result<std::unique_ptr<Core>> MakeCore(std::shared_ptr<const Spec> spec);
  // Makes `core` the one in force (the engine, the backend's and the store's view).
  void Install(std::unique_ptr<Core> core) REQUIRES(mu_);
  // The operators' holds on nodes, applied to the engine in force.
  void ApplyFlags() REQUIRES(mu_);
  // Every stored service taken on by the driver in force (parsed against the
  // configuration in force; one it no longer admits keeps its error).
  void DriveServices() REQUIRES(mu_);
  // On the engine's thread: a new engine on `spec` in place of the one in force,
  // with every job moved onto it (a running one goes on where it is, when it can); the old
  // core is retired_ until the drive of its engine ends.
  Result<ReloadReport::Jobs> SwapEngine(std::shared_ptr<const Spec> spec) REQUIRES(mu_);
  // A job queued again on a new engine (restart, reload) that is a replica rejoins
  // its service; `orphans` collects replicas no service claims (cancelled afterwards).
  void Rejoin(JobId id, std::vector<JobId>& orphans) REQUIRES(mu_);
  // Registers a new job row in the book and queues its insert.
  std::shared_future<Status> AddRow(StoredJob& row) REQUIRES(mu_);
  // The job of row `id` goes to the engine, submitted at `at`.
  JobId Enqueue(int64_t id, Job job, TimeMs at) REQUIRES(mu_);
  // The accepted submissions waiting in the host's inbox go to the engine. The engine's own
  // thread takes them before each pass, so that its state is written by the thread that reads
  // it (an API worker's writes of it cost the cycle the cache misses of another core); callers
  // that read or change the engine for a job take them first.
  void TakeArrivals() REQUIRES(mu_);
  // A replica the service driver asks for, stored as a job of the service's tenant.
  std::optional<JobId> SubmitReplica(Job job, TimeMs now) REQUIRES(mu_);
  ServiceView ServiceViewOf(const ServiceEntry& e) const REQUIRES(mu_);
  ReplicaHost& replica_host();
  // Takes the snapshot's job rows (moved into the view); `read` holds, by row, what the
  // workers read of the rows that had not ended (nullopt for the others).
  // `resolved`: the resolved job and run of each job that has not ended.
  Status Restore(StoreSnapshot& snap, ResolvedJobs& resolved) REQUIRES(mu_);
  // One row of Restore that had not ended: queued again from its resolved form (or its
  // submission, checked again), its run resumed where it was when it can be (its progress
  // counted until `last_seen`); a row the configuration no longer admits fails.
  void RestoreRow(StoredJob& row, RestoredJob& restored, TimeMs now, TimeMs last_seen,
                  std::vector<JobId>& orphans) REQUIRES(mu_);
  // The engine's thread: drives the engine (engine/drive.h) at the system clock's pace.
  class EnginePace;
  void Loop();
  // The services' autoscaling step, if due at `now`.
  void StepServices(TimeMs now) REQUIRES(mu_);
  // On the engine's thread: handles what is due and schedules, timing the cycle; what the
  // cycle changes goes to the view's thread.
  void RunCycle() REQUIRES(mu_);
  // The job's row, with a waiting job's current reason from the engine.
  StoredJob View(int64_t id) const REQUIRES(mu_);
  // What the view and the store take of an engine's record, handed over by its hook.
  struct JobChange {
    JobId job;
    JobState state = JobState::kPending;
    PendingReason reason = PendingReason::kNew;
    std::string text;  // the row's detail, when it changes (has_text)
    bool has_text = false;
    std::optional<TimeMs> first_start, finished;
    TimeMs last_start = 0;
    TimeMs seen = 0;  // when the hook ran: the end of a run that stopped unfinished
    int32_t restarts = 0;
    Millis kept_ms = 0;
    uint64_t generation = 0;
    enum class Placement { kKeep, kClear, kFormat } placement = Placement::kKeep;
    std::vector<tessera::Placement> placements;  // kFormat: the run's
    bool running() const { return state == JobState::kRunning; }
    bool waiting() const { return state == JobState::kPending || state == JobState::kAdmitted; }
  };
  struct DecisionChange {
    TimeMs time = 0;
    DecisionKind kind = DecisionKind::kStart;
    JobId job;
    std::string reason;
    std::vector<uint32_t> nodes;
    std::string where;
    double lost_device_ms = 0;  // kRequeue, kPreempt: the job's, all restarts together
    int32_t restarts = 0;       // and its restarts in this process
    RunRate rate;               // kStart: what the run costs
    std::shared_ptr<const SchedulerSettings> by;  // the engine's that decided
    std::optional<bool> deadline_met;             // kFinish, kFail of a job with a deadline
  };
  // The engine's record changed (its store port). During a cycle the change is
  // handed to the view's thread; otherwise what is pending is applied, then the change.
  void OnJob(const JobRecord& rec) REQUIRES(mu_);
  void OnDecision(Decision d) REQUIRES(mu_);
  JobChange ChangeOf(const JobRecord& rec) REQUIRES(mu_);
  // While Restore runs: the start of a run it adopted (ApplyJob listed it) joins
  // resumed_ with its costs; false for any other decision.
  bool ResumedStart(const DecisionChange& d, int64_t id) REQUIRES(mu_);
  // Writes resumed_ (the end of Restore).
  void WriteResumed() REQUIRES(mu_);
  void ApplyJob(const JobChange& c) REQUIRES(mu_);
  void ApplyDecision(const DecisionChange& c) REQUIRES(mu_);
  // Applies the changes the last cycles handed over, in order.
  void ApplyChanges() REQUIRES(mu_);
  // mu_ for a scope, with the view first brought up to date (ApplyChanges): what every API
  // call that reads or changes the view takes. A CondVar may wait on it.
  class SCOPED_CAPABILITY ViewLock {
   public:
    explicit ViewLock(const Daemon& d) ACQUIRE(d.mu_);
    ~ViewLock() RELEASE();
    ViewLock(const ViewLock&) = delete;
    ViewLock& operator=(const ViewLock&) = delete;
    void lock() ACQUIRE();
    void unlock() RELEASE();

   private:
    Mutex& mu_;
    bool held_ = true;
  };
  // 503 for a change refused while the store's writes fail (`what`: "the reload is not applied").
  Status StoreFails(const std::string& what) const;
  void ViewLoop();
  std::string PlacementJson(const std::vector<Placement>& placements) const REQUIRES(mu_);
  // A stored run's placements (read by ParsePlacement) on this cell's node indices.
  Result<std::vector<Placement>> PlacementsOf(std::vector<StoredTask> tasks) const REQUIRES(mu_);
  NodeView NodeViewOf(const Caller& caller, uint32_t node) const REQUIRES(mu_);
  // Whether the configuration cordons the node (then the engine sees it down).
  bool CordonedInConfig(uint32_t node) const REQUIRES(mu_);
  // Why a node is down, as " (…)", or "" when nothing more is known.
  std::string DownReason(uint32_t node) const REQUIRES(mu_);
  // A run ended as its agents or its Slurm job said (ignored when it is not the
  // job's current run).
  void EndRun(const RunOutcome& o, TimeMs now) REQUIRES(mu_);
  // What the Slurm clusters reported: runs ended, nodes down or up, controllers
  // unreachable (their nodes take no new work; what runs there goes on) or back.
  void ApplySlurm(TimeMs now) REQUIRES(mu_);
  // The nodes of `local` clusters are the agents'; one without a live agent is out
  // of service (or, with runs on it after a restart, given lost_after for its agent to return).
  void ApplyAgents() REQUIRES(mu_);
  // Nodes whose agents went silent are lost (their runs are requeued).
  void CheckAgents(TimeMs now) REQUIRES(mu_);
  // A node's GPU utilization (from its agent) for the runs on it: what idle-reclaim
  // rules judge.
  void ReportUtilization(uint32_t node, const AgentTelemetry& telemetry, TimeMs now) REQUIRES(mu_);
  // The agents' telemetry and the Slurm controllers' reachability, for /metrics.
  std::vector<Gauge> AgentGauges() const REQUIRES(mu_);

  // A log line through DaemonOptions::log.
  void Log(const std::string& level, const std::string& msg, const nlohmann::json& fields) const;

  std::unique_ptr<DurableStore> store_;
  // Guards the engine and the view: every field marked so, and every method that REQUIRES it.
  mutable Mutex mu_;
  Accounting accounting_ GUARDED_BY(mu_);
  const Clock& clock_;
  DaemonOptions options_;
  mutable Mutex logged_mu_;
  // The principals refused once (each is logged once).
  std::set<std::string> unbound_agents_logged_ GUARDED_BY(logged_mu_);
  Principals principals_;
  Metrics metrics_;
  StartTimes start_times_;

  SeededRng rng_;
  // Routes runs to the emulated timers, the node agents or Slurm, and owns all three.
  std::unique_ptr<BackendRouter> backends_;
  std::map<int64_t, std::string> fail_detail_ GUARDED_BY(mu_);  // why a run failed, as agents said
  std::set<std::string> unreachable_ GUARDED_BY(mu_);           // slurm clusters out of touch
  struct RunUtilization {
    uint64_t generation = 0;
    std::map<uint32_t, double> by_node;  // node -> busy share of the run's devices there
  };
  std::unordered_map<uint32_t, RunUtilization> utilization_ GUARDED_BY(mu_);  // by engine job id
  std::unique_ptr<StorePort> port_;
  std::unique_ptr<Sink> sink_;
  std::unique_ptr<Replicas> replicas_;
  std::unique_ptr<Core> core_ GUARDED_BY(mu_);     // spec_ and engine_ are its parts
  std::unique_ptr<Core> retired_ GUARDED_BY(mu_);  // the core a reload replaced, while driven
  std::shared_ptr<const Spec> spec_;               // under mu_ or spec_mu_ (writers hold both)
  Engine* engine_ GUARDED_BY(mu_) = nullptr;
  mutable std::mutex spec_mu_;

  // The engine's thread's inbox, posted work, pokes, stop and pace.
  EngineHost host_ GUARDED_BY(mu_);
  JobBook book_ GUARDED_BY(mu_);
  // While Restore runs: transitions of jobs that are only queued again are not written back
  // (their rows already say so), and an adopted run keeps its stored placement.
  bool restoring_ GUARDED_BY(mu_) = false;
  // While Restore runs: the adopted runs, written as one batch when it ends.
  ResumedRuns resumed_ GUARDED_BY(mu_);
  std::map<std::string, NodeFlags> flags_ GUARDED_BY(mu_);        // operators' holds, by node
  std::map<std::string, ServiceEntry> services_ GUARDED_BY(mu_);  // by name
  bool deferring_ GUARDED_BY(mu_) = false;  // the engine's thread runs a cycle; hooks hand over
  using Change = std::variant<JobChange, DecisionChange>;
  std::vector<Change> changes_ GUARDED_BY(mu_);   // not yet applied
  std::vector<Change> applying_ GUARDED_BY(mu_);  // ApplyChanges'
  // Changes applied, freed by the engine's thread before its next pass. What the
  // hooks allocated then returns to that thread's cache in the allocator: freed on the view's
  // thread it served the view's own allocations, and the hooks took fresh memory each time —
  // page faults inside the cycle (docs/serve.md#performance).
  std::vector<Change> spent_ GUARDED_BY(mu_);
  CondVar view_cv_;  // changes_ or view_stopping_
  bool view_stopping_ GUARDED_BY(mu_) = false;
  std::thread view_;
  std::thread loop_;
};

}  // namespace tessera
