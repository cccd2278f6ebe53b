#include "store/postgres_store.h"

#include <pthread.h>
#include <unistd.h>

#include <initializer_list>

#include "store/postgres_schema.h"

namespace tessera {

namespace {

// The statements the writer prepares, by name.
constexpr std::pair<const char*, const char*> kStatements[] = {
    {"insert_job",
     "INSERT INTO jobs(id, name, tenant, body, idempotency_key, principal, submitted_ms, state, "
     "reason, detail, class, resolved) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"},
    {"update_job",
     "UPDATE jobs SET state = $2, reason = $3, detail = $4, first_start_ms = $5, finished_ms = $6, "
     "restarts = $7, placement = $8, run_start_ms = $9, kept_ms = $10 WHERE id = $1"},
    {"decision",
     "INSERT INTO decisions(time_ms, kind, job_id, reason, detail) VALUES($1, $2, $3, $4, $5)"},
    {"audit",
     "INSERT INTO audit(time_ms, principal, remote, method, path, status, detail) "
     "VALUES($1, $2, $3, $4, $5, $6, $7)"},
    {"principal",
     "INSERT INTO principals(name, role, tenant, created_ms, node) VALUES($1, $2, $3, $4, $5) "
     "ON CONFLICT(name) DO UPDATE SET role = excluded.role, tenant = excluded.tenant, "
     "node = excluded.node"},
    {"token", "INSERT INTO tokens(hash, principal, expires_ms, created_ms) VALUES($1, $2, $3, $4)"},
    {"node_flags",
     "INSERT INTO node_flags(node, cordoned, draining) VALUES($1, $2, $3) ON CONFLICT(node) DO "
     "UPDATE SET cordoned = excluded.cordoned, draining = excluded.draining"},
    {"insert_cost",
     "INSERT INTO costs(id, job_id, tenant, cluster, model, start_ms, per_hour_micro) "
     "VALUES($1, $2, $3, $4, $5, $6, $7)"},
    {"end_cost", "UPDATE costs SET end_ms = $2 WHERE id = $1"},
    {"resume_job",
     "UPDATE jobs SET state = 'running', reason = '', first_start_ms = $2, finished_ms = NULL, "
     "run_start_ms = $3, kept_ms = $4 WHERE id = $1"},
    {"insert_cost_of_job",
     "INSERT INTO costs(id, job_id, tenant, cluster, model, start_ms, per_hour_micro) "
     "SELECT $1, $2, tenant, $3, $4, $5, $6 FROM jobs WHERE id = $2"},
    {"delete_tokens", "DELETE FROM tokens WHERE principal = $1"},
    {"insert_service",
     "INSERT INTO services(name, tenant, body, principal, created_ms) VALUES($1, $2, $3, $4, $5)"},
    {"delete_service", "DELETE FROM services WHERE name = $1"},
    {"delete_principal", "DELETE FROM principals WHERE name = $1"},
    {"task_log",
     "INSERT INTO task_logs(job_id, run, task, tail) VALUES($1, $2, $3, $4) "
     "ON CONFLICT(job_id, run, task) DO UPDATE SET tail = excluded.tail"},
    {"alive",
     "INSERT INTO meta(key, value) VALUES('alive_ms', $1) ON CONFLICT(key) DO UPDATE SET "
     "value = excluded.value"},
    {"end_open_costs",
     "UPDATE costs SET end_ms = GREATEST(start_ms, $1::bigint) WHERE end_ms IS NULL"},
    // The fencing check that opens every batch (postgres_schema.cc): the lease row stays locked
    // until the batch ends, so a takeover waits for the batch, and a batch after a takeover
    // finds another term and fails, with everything sent after it.
    {"fence", "SELECT tessera_fence($1)"},
    {"mark",
     "INSERT INTO tessera_commit(id, term, batch) VALUES(1, $1, $2) ON CONFLICT(id) DO UPDATE "
     "SET term = excluded.term, batch = excluded.batch"},
};

// Takes the lease when it is free, expired, or already this holder's: the new term.
constexpr const char* kTakeLease =
    "INSERT INTO tessera_lease(id, holder, term, expires) VALUES(1, $1, 1, clock_timestamp() + "
    "$2::bigint * interval '1 millisecond') ON CONFLICT(id) DO UPDATE SET holder = "
    "excluded.holder, term = tessera_lease.term + 1, expires = excluded.expires, address = '' "
    "WHERE "
    "tessera_lease.expires < clock_timestamp() OR tessera_lease.holder = excluded.holder "
    "RETURNING term";

constexpr const char* kRenewLease =
    "UPDATE tessera_lease SET expires = clock_timestamp() + $2::bigint * interval '1 "
    "millisecond' WHERE id = 1 AND term = $1";

constexpr const char* kEndLease =
    "UPDATE tessera_lease SET expires = clock_timestamp() WHERE id = 1 AND term = $1";

constexpr const char* kReadLease =
    "SELECT holder, address, term, CAST(EXTRACT(EPOCH FROM expires) * 1000 AS BIGINT), expires < "
    "clock_timestamp() FROM tessera_lease WHERE id = 1";

std::string DefaultHolder() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return "tessera pid " + std::to_string(getpid()) + " on " + host;
}

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Result<std::optional<LeaseHolder>> LeaseOf(Postgres& db) {
  auto q = db.Query(kReadLease);
  if (!q.ok()) return q.status();
  if (q->rows() == 0) return std::optional<LeaseHolder>();
  return std::optional<LeaseHolder>(
      LeaseHolder{q->Text(0, 0), q->Text(0, 1), q->Int(0, 2), q->Int(0, 3), q->Text(0, 4) == "t"});
}

// The rows of a query that selects seq, time_ms, kind, job_id, reason, detail.
std::vector<StoredDecision> DecisionsOf(const PgResult& r) {
  std::vector<StoredDecision> out;
  out.reserve(static_cast<size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i)
    out.push_back(
        {r.Int(i, 0), r.Int(i, 1), r.Text(i, 2), r.Int(i, 3), r.Text(i, 4), r.Text(i, 5)});
  return out;
}

// Appends the rows of a query of the jobs' columns as Load reads them.
void ReadJobs(const PgResult& q, StableVector<StoredJob>& jobs) {
  for (int i = 0; i < q.rows(); ++i) {
    StoredJob& j = jobs.emplace_back();
    j.id = q.Int(i, 0);
    j.name = q.Text(i, 1);
    j.tenant = q.Text(i, 2);
    j.body = q.Text(i, 3);
    j.idempotency_key = q.Text(i, 4);
    j.principal = q.Text(i, 5);
    j.submitted = q.Int(i, 6);
    j.state = q.Text(i, 7);
    j.reason = q.Text(i, 8);
    j.detail = q.Text(i, 9);
    j.first_start = q.OptInt(i, 10);
    j.finished = q.OptInt(i, 11);
    j.restarts = static_cast<int32_t>(q.Int(i, 12));
    j.placement = q.Text(i, 13);
    j.job_class = q.Text(i, 14);
    j.run_start = q.OptInt(i, 15);
    j.kept_ms = q.Int(i, 16);
  }
}

}  // namespace

Result<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url,
                                                           PostgresOptions options) {
  if (options.holder.empty()) options.holder = DefaultHolder();
  // A standby waits for the database too: it may start before it, or outlive an outage.
  const auto unreachable = [&](const Status& s) {
    return s.code() == StatusCode::kUnavailable && options.standby &&
           options.standby(LeaseHolder{});
  };
  auto writer = Postgres::Connect(url, options.holder);
  while (!writer.ok() && unreachable(writer.status())) {
    std::this_thread::sleep_for(options.lease / 6);
    writer = Postgres::Connect(url, options.holder);
  }
  if (!writer.ok()) return writer.status();
  Postgres& w = **writer;
  if (Status s = MigratePgSchema(w); !s.ok()) return s;
  // Take the lease, or wait for it as a standby (or say who holds it).
  int64_t term = 0;
  for (;;) {
    auto taken =
        w.Query(kTakeLease, PgParams().Add(options.holder).Add(int64_t{options.lease.count()}));
    if (!taken.ok() && unreachable(taken.status())) {
      std::this_thread::sleep_for(options.lease / 6);
      (void)w.Reconnect();
      continue;
    }
    if (!taken.ok()) return taken.status();
    if (taken->rows() == 1) {
      term = taken->Int(0, 0);
      break;
    }
    auto held = LeaseOf(w);
    if (!held.ok()) return held.status();
    if (!*held) continue;  // given up between the two statements
    if (!options.standby || !options.standby(**held)) {
      return Status(StatusCode::kFailedPrecondition,
                    "store " + w.name() + " is led by " + (*held)->holder + " (term " +
                        std::to_string((*held)->term) +
                        "); one daemon leads a store at a time (the others wait as standbys)");
    }
    std::this_thread::sleep_for(options.lease / 6);
  }
  for (const auto& [name, sql] : kStatements) {
    if (Status s = w.Prepare(name, sql); !s.ok()) return s;
  }
  auto reader = Postgres::Connect(url, options.holder + " (reader)");
  if (!reader.ok()) return reader.status();
  auto lease = Postgres::Connect(url, options.holder + " (lease)");
  if (!lease.ok()) return lease.status();
  return std::unique_ptr<PostgresStore>(new PostgresStore(
      url, std::move(options), term, std::move(*writer), std::move(*reader), std::move(*lease)));
}

PostgresStore::PostgresStore(std::string url, PostgresOptions options, int64_t term,
                             std::unique_ptr<Postgres> writer, std::unique_ptr<Postgres> reader,
                             std::unique_ptr<Postgres> lease)
    : url_(std::move(url)),
      options_(std::move(options)),
      term_(term),
      writer_db_(std::move(writer)),
      reader_db_(std::move(reader)),
      lease_db_(std::move(lease)),
      renewed_ns_(SteadyNs()),
      commits_("store " + writer_db_->name(),
               {[this] { return Begin(); }, [this](size_t& failed_at) { return Commit(failed_at); },
                [this] { Rollback(); }, [this] { return CommittedAnyway(); }},
               options_.background_delay),
      renewer_([this] { RenewLoop(); }) {}

PostgresStore::~PostgresStore() {
  {
    MutexLock lock(lease_mu_);
    stopping_ = true;
  }
  lease_cv_.notify_all();
  renewer_.join();
  // What is queued is committed under this term; then the lease is given up, so that the next
  // daemon leads at once instead of after the lease (a crash leaves it to expire).
  commits_.Enqueue([] { return Status::Ok(); }).wait();
  if (!deposed_ && !lease_db_->Broken()) (void)lease_db_->Query(kEndLease, PgParams().Add(term_));
}

Result<std::optional<LeaseHolder>> PostgresStore::ReadLease(const std::string& url) {
  auto db = Postgres::Connect(url, "tessera (lease reader)");
  if (!db.ok()) return db.status();
  auto exists = (*db)->Query("SELECT to_regclass('tessera_lease') IS NOT NULL");
  if (!exists.ok()) return exists.status();
  if (exists->Text(0, 0) != "t") return std::optional<LeaseHolder>();
  return LeaseOf(**db);
}

Status PostgresStore::Advertise(const std::string& address) {
  // On a connection of its own: the lease's is the renewing thread's.
  auto db = Postgres::Connect(url_, options_.holder + " (advertise)");
  if (!db.ok()) return db.status();
  auto set = (*db)->Query("UPDATE tessera_lease SET address = $2 WHERE id = 1 AND term = $1",
                          PgParams().Add(term_).Add(address));
  if (!set.ok()) return set.status();
  if (set->affected() != 1) {
    return Status(StatusCode::kFailedPrecondition,
                  (*db)->name() + ": deposed: another daemon leads the store now");
  }
  return Status::Ok();
}

bool PostgresStore::leading() const {
  if (deposed_) return false;
  return SteadyNs() - renewed_ns_ <
         std::chrono::duration_cast<std::chrono::nanoseconds>(options_.lease).count();
}

Status PostgresStore::Begin() {
  Postgres& db = *writer_db_;
  if (db.Broken()) {
    if (Status s = db.Reconnect(); !s.ok()) return s;
  }
  // The batch is one pipeline: BEGIN, the fence, the writes (each tagged with its index in the
  // batch: WriteAt), COMMIT; one round trip for them all.
  batch_write_ = -1;
  commit_sent_ = false;
  db.set_tag(-1);
  if (Status s = db.EnterPipeline(); !s.ok()) return s;
  if (Status s = db.SendSql("BEGIN"); !s.ok()) return s;
  if (Status s = db.Send("fence", PgParams().Add(term_)); !s.ok()) return s;
  return db.Send("mark", PgParams().Add(term_).Add(++batch_));
}

Status PostgresStore::Commit(size_t& failed_at) {
  Postgres& db = *writer_db_;
  db.set_tag(-1);
  Status s = db.SendSql("COMMIT");
  commit_sent_ = s.ok();  // sent by the sync, if at all: from here on it may have taken
  int tag = -1;
  Status synced = db.Sync(&tag);
  if (s.ok()) s = synced;
  if (s.ok()) return s;
  if (tag >= 0) {
    failed_at = static_cast<size_t>(tag);  // that write alone, unless the store failed
  } else if (s.code() == StatusCode::kFailedPrecondition) {
    deposed_ = true;  // the fence: another daemon's term
  }
  return s;
}

std::optional<bool> PostgresStore::CommittedAnyway() {
  if (!commit_sent_) return false;  // failed before its COMMIT went out
  Postgres& db = *writer_db_;
  if (db.Broken() && !db.Reconnect().ok()) return std::nullopt;
  auto mark = db.Query("SELECT term, batch FROM tessera_commit WHERE id = 1");
  if (!mark.ok()) return std::nullopt;
  return mark->rows() == 1 && mark->Int(0, 0) == term_ && mark->Int(0, 1) == batch_;
}

void PostgresStore::Rollback() {
  writer_db_->AbandonPipeline();
  (void)writer_db_->Exec("ROLLBACK");
}

Status PostgresStore::WriteAt(const Write& w) {
  writer_db_->set_tag(++batch_write_);
  return w(*writer_db_);
}

void PostgresStore::RenewLoop() {
  pthread_setname_np(pthread_self(), "store-lease");
  const auto every = options_.lease / 3;
  bool failing = false;
  MutexLock lock(lease_mu_);
  while (!stopping_ && !deposed_) {
    const auto until = std::chrono::steady_clock::now() + every;
    while (!stopping_ && lease_cv_.wait_until(lock, until) == std::cv_status::no_timeout) {
    }
    if (stopping_) break;
    lock.unlock();
    const int64_t sent = SteadyNs();
    Status reconnected = lease_db_->Broken() ? lease_db_->Reconnect() : Status::Ok();
    Result<PgResult> renewed =
        reconnected.ok()
            ? lease_db_->Query(kRenewLease,
                               PgParams().Add(term_).Add(int64_t{options_.lease.count()}))
            : Result<PgResult>(reconnected);
    if (renewed.ok() && renewed->affected() == 1) {
      renewed_ns_ = sent;
      if (failing) Tell(false, "");
      failing = false;
    } else if (renewed.ok()) {
      deposed_ = true;
      Tell(true, "store " + lease_db_->name() + ": deposed: another daemon took the lease (term " +
                     std::to_string(term_) + " is over)");
    } else if (!failing || !leading()) {
      failing = true;
      Tell(true, "store " + lease_db_->name() + ": cannot renew the lease" +
                     (leading() ? "" : " and it has expired") + ": " + renewed.status().message());
    }
    lock.lock();
  }
}

void PostgresStore::Tell(bool degraded, const std::string& message) {
  MutexLock lock(health_mu_);
  if (health_log_) health_log_(degraded, message);
}

void PostgresStore::SetHealthLog(std::function<void(bool, const std::string&)> log) {
  commits_.SetHealthLog(log);
  MutexLock lock(health_mu_);
  health_log_ = std::move(log);
}

std::shared_future<Status> PostgresStore::Enqueue(Write w, bool first) {
  GroupCommit::Write write = [this, w = std::move(w)] { return WriteAt(w); };
  return first ? commits_.EnqueueFirst(std::move(write)) : commits_.Enqueue(std::move(write));
}

void PostgresStore::Post(Write w) {
  commits_.Post([this, w = std::move(w)] { return WriteAt(w); });
}

std::shared_future<Status> PostgresStore::InsertJob(StoredJob j) {
  return Enqueue(
      [j = std::move(j)](Postgres& db) {
        PgParams p;
        p.Add(j.id).Add(j.name).Add(j.tenant).Add(j.body);
        if (j.idempotency_key.empty()) {
          p.AddNull();
        } else {
          p.Add(j.idempotency_key);
        }
        p.Add(j.principal).Add(j.submitted).Add(j.state).Add(j.reason).Add(j.detail);
        p.Add(j.job_class).Add(j.resolved);
        return db.Send("insert_job", p);
      },
      /*first=*/true);
}

namespace {

Status WritePgJobUpdate(const JobUpdate& j, Postgres& db) {
  PgParams p;
  p.Add(j.id).Add(j.state).Add(j.reason).Add(j.detail).Add(j.first_start).Add(j.finished);
  p.Add(int64_t{j.restarts}).Add(j.placement).Add(j.run_start).Add(j.kept_ms);
  return db.Send("update_job", p);
}

Status WritePgDecision(const StoredDecision& d, std::string_view detail, Postgres& db) {
  return db.Send("decision",
                 PgParams().Add(d.time).Add(d.kind).Add(d.job).Add(d.reason).Add(detail));
}

}  // namespace

void PostgresStore::UpdateJob(JobUpdate j) {
  Post([j = std::move(j)](Postgres& db) { return WritePgJobUpdate(j, db); });
}

std::shared_future<Status> PostgresStore::CommitJobUpdate(JobUpdate j) {
  return Enqueue([j = std::move(j)](Postgres& db) { return WritePgJobUpdate(j, db); });
}

void PostgresStore::AppendDecision(StoredDecision d) {
  Post([d = std::move(d)](Postgres& db) { return WritePgDecision(d, d.detail, db); });
}

void PostgresStore::AppendDecision(StoredDecision d, DecisionParts parts) {
  Post([d = std::move(d), parts = std::move(parts)](Postgres& db) {
    return WritePgDecision(d, DecisionDetail(parts), db);
  });
}

void PostgresStore::AppendAudit(AuditEntry a) {
  Post([a = std::move(a)](Postgres& db) {
    PgParams p;
    p.Add(a.time).Add(a.principal).Add(a.remote).Add(a.method).Add(a.path);
    p.Add(int64_t{a.status}).Add(a.detail);
    return db.Send("audit", p);
  });
}

std::shared_future<Status> PostgresStore::PutPrincipal(Principal p) {
  return Enqueue([p = std::move(p)](Postgres& db) {
    return db.Send("principal",
                   PgParams().Add(p.name).Add(p.role).Add(p.tenant).Add(p.created).Add(p.node));
  });
}

std::shared_future<Status> PostgresStore::PutToken(StoredToken t) {
  return Enqueue([t = std::move(t)](Postgres& db) {
    return db.Send("token", PgParams().Add(t.hash).Add(t.principal).Add(t.expires).Add(t.created));
  });
}

std::shared_future<Status> PostgresStore::DeleteTokens(const std::string& principal) {
  return Enqueue(
      [principal](Postgres& db) { return db.Send("delete_tokens", PgParams().Add(principal)); });
}

std::shared_future<Status> PostgresStore::DeletePrincipal(const std::string& name) {
  return Enqueue([name](Postgres& db) {
    if (Status s = db.Send("delete_tokens", PgParams().Add(name)); !s.ok()) return s;
    return db.Send("delete_principal", PgParams().Add(name));
  });
}

std::shared_future<Status> PostgresStore::PutNodeFlags(NodeFlags f) {
  return Enqueue([f = std::move(f)](Postgres& db) {
    return db.Send("node_flags",
                   PgParams().Add(f.node).Add(int64_t{f.cordoned}).Add(int64_t{f.draining}));
  });
}

std::shared_future<Status> PostgresStore::InsertService(StoredService v) {
  return Enqueue([v = std::move(v)](Postgres& db) {
    return db.Send(
        "insert_service",
        PgParams().Add(v.name).Add(v.tenant).Add(v.body).Add(v.principal).Add(v.created));
  });
}

std::shared_future<Status> PostgresStore::DeleteService(const std::string& name) {
  return Enqueue([name](Postgres& db) { return db.Send("delete_service", PgParams().Add(name)); });
}

void PostgresStore::InsertCost(CostRow c) {
  Post([c = std::move(c)](Postgres& db) {
    PgParams p;
    p.Add(c.id).Add(c.job).Add(c.tenant).Add(c.cluster).Add(c.model).Add(c.start).Add(c.per_hour);
    return db.Send("insert_cost", p);
  });
}

void PostgresStore::ResumeRuns(ResumedRuns runs) {
  if (runs.runs.empty()) return;
  Post([r = std::move(runs)](Postgres& db) {
    std::vector<std::string> nodes;
    for (const ResumedRuns::Run& run : r.runs) {
      if (Status s =
              db.Send("resume_job",
                      PgParams().Add(run.job).Add(run.first_start).Add(run.time).Add(run.kept_ms));
          !s.ok()) {
        return s;
      }
      if (!run.decided) continue;
      nodes.clear();
      for (uint32_t n : run.nodes)
        nodes.push_back(r.node_names.at(n));
      if (Status s = WritePgDecision({0, run.time, "start", run.job, run.reason, ""},
                                     DecisionDetail({nodes, "", "", ""}), db);
          !s.ok()) {
        return s;
      }
      for (const ResumedRuns::Cost& c : run.costs) {
        PgParams p;
        p.Add(c.id).Add(run.job).Add(r.clusters.at(c.cluster));
        p.Add(c.model < 0 ? std::string("cpu") : r.models.at(static_cast<size_t>(c.model)));
        p.Add(run.time).Add(c.per_hour);
        if (Status s = db.Send("insert_cost_of_job", p); !s.ok()) return s;
      }
    }
    return Status::Ok();
  });
}

void PostgresStore::EndCost(int64_t id, TimeMs end) {
  Post([id, end](Postgres& db) { return db.Send("end_cost", PgParams().Add(id).Add(end)); });
}

void PostgresStore::Alive(TimeMs now) {
  Post([now](Postgres& db) { return db.Send("alive", PgParams().Add(std::to_string(now))); });
}

void PostgresStore::EndOpenCosts(TimeMs end) {
  Post([end](Postgres& db) { return db.Send("end_open_costs", PgParams().Add(end)); });
}

void PostgresStore::PutTaskLog(int64_t job, int64_t run, int64_t task, std::string tail) {
  Post([job, run, task, tail = std::move(tail)](Postgres& db) {
    return db.Send("task_log", PgParams().Add(job).Add(run).Add(task).Add(tail));
  });
}

std::shared_future<Status> PostgresStore::Flush() {
  return Enqueue([](Postgres&) { return Status::Ok(); });
}

Result<StoreSnapshot> PostgresStore::Load() {
  MutexLock lock(read_mu_);
  Postgres& db = *reader_db_;
  if (db.Broken()) {
    if (Status s = db.Reconnect(); !s.ok()) return s;
  }
  // One snapshot of the whole database: the queries below see the same moment.
  if (Status s = db.Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); !s.ok()) return s;
  StoreSnapshot snap;
  Status status = [&]() -> Status {
    auto top = db.Query("SELECT COALESCE(MAX(id), 0) FROM jobs");  // an index's end: no scan
    if (!top.ok()) return top.status();
    snap.jobs.reserve(static_cast<size_t>(top->Int(0, 0)));
    // Streamed: the rows are copied while the server sends the next ones, and no result of
    // 100,000 rows (~100 MB, allocated afresh and zeroed by the kernel) holds them all first.
    Status jobs = db.Stream(
        "SELECT id, name, tenant, body, idempotency_key, principal, submitted_ms, state, reason, "
        "detail, first_start_ms, finished_ms, restarts, placement, class, run_start_ms, kept_ms "
        "FROM jobs ORDER BY id",
        {}, [&](const PgResult& row) { ReadJobs(row, snap.jobs); });
    if (!jobs.ok()) return jobs;
    auto p = db.Query(
        "SELECT name, role, tenant, created_ms, node FROM principals ORDER BY name COLLATE \"C\"");
    if (!p.ok()) return p.status();
    for (int i = 0; i < p->rows(); ++i)
      snap.principals.push_back(
          {p->Text(i, 0), p->Text(i, 1), p->Text(i, 2), p->Int(i, 3), p->Text(i, 4)});
    auto t = db.Query("SELECT hash, principal, expires_ms, created_ms FROM tokens");
    if (!t.ok()) return t.status();
    for (int i = 0; i < t->rows(); ++i)
      snap.tokens.push_back({t->Text(i, 0), t->Text(i, 1), t->OptInt(i, 2), t->Int(i, 3)});
    auto last = db.Query(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM costs), GREATEST((SELECT COALESCE(MAX(time_ms), "
        "0) FROM decisions), (SELECT COALESCE(MAX(time_ms), 0) FROM audit), (SELECT "
        "COALESCE(MAX(submitted_ms), 0) FROM jobs), (SELECT COALESCE(MAX(CAST(value AS BIGINT)), "
        "0) FROM meta WHERE key = 'alive_ms'))");
    if (!last.ok()) return last.status();
    snap.last_cost = last->Int(0, 0);
    snap.last_seen = last->Int(0, 1);
    auto n =
        db.Query("SELECT node, cordoned, draining FROM node_flags ORDER BY node COLLATE \"C\"");
    if (!n.ok()) return n.status();
    for (int i = 0; i < n->rows(); ++i)
      snap.nodes.push_back({n->Text(i, 0), n->Int(i, 1) != 0, n->Int(i, 2) != 0});
    auto v = db.Query(
        "SELECT name, tenant, body, principal, created_ms FROM services ORDER BY name COLLATE "
        "\"C\"");
    if (!v.ok()) return v.status();
    for (int i = 0; i < v->rows(); ++i)
      snap.services.push_back(
          {v->Text(i, 0), v->Text(i, 1), v->Text(i, 2), v->Text(i, 3), v->Int(i, 4)});
    return Status::Ok();
  }();
  (void)db.Exec(status.ok() ? "COMMIT" : "ROLLBACK");
  if (!status.ok()) return status;
  return snap;
}

Result<int64_t> PostgresStore::LastJobId() const {
  MutexLock lock(read_mu_);
  auto q = reader_db_->Query("SELECT COALESCE(MAX(id), 0) FROM jobs");
  if (!q.ok()) return q.status();
  return q->Int(0, 0);
}

namespace {

// Reads on a connection of its own, opened once: a connection per chunk cost a restart of
// 100,000 jobs about a second (a server process forked and its caches filled each time).
class PgActiveJobReader final : public DurableStore::ActiveJobReader {
 public:
  explicit PgActiveJobReader(std::unique_ptr<Postgres> db) : db_(std::move(db)) {}
  Status Read(int64_t from, int64_t to, const DurableStore::ActiveJobRow& row) override {
    return db_->Stream(
        "SELECT id, state, resolved, placement FROM jobs WHERE id BETWEEN $1 AND $2 AND state "
        "NOT IN ('succeeded', 'failed', 'cancelled') ORDER BY id",
        PgParams().Add(from).Add(to),
        [&](const PgResult& r) { row(r.Int(0, 0), r.View(0, 1), r.View(0, 2), r.View(0, 3)); });
  }

 private:
  std::unique_ptr<Postgres> db_;
};

}  // namespace

Result<std::unique_ptr<DurableStore::ActiveJobReader>> PostgresStore::OpenActiveJobReader() const {
  auto db = Postgres::Connect(url_, options_.holder + " (restore)");
  if (!db.ok()) return db.status();
  return std::unique_ptr<ActiveJobReader>(std::make_unique<PgActiveJobReader>(std::move(*db)));
}

Result<std::vector<AuditEntry>> PostgresStore::QueryAudit(const AuditQuery& aq) {
  MutexLock lock(read_mu_);
  // Newest first, below the cursor (0: from the newest).
  auto q = reader_db_->Query(
      "SELECT seq, time_ms, principal, remote, method, path, status, detail FROM audit WHERE "
      "($1::bigint = 0 OR seq < $1::bigint) AND time_ms >= $2::bigint AND ($3::text = '' OR "
      "principal = $3::text) ORDER BY seq DESC LIMIT $4::bigint",
      PgParams().Add(aq.after).Add(aq.since.value_or(0)).Add(aq.principal).Add(int64_t{aq.limit}));
  if (!q.ok()) return q.status();
  std::vector<AuditEntry> out;
  for (int i = 0; i < q->rows(); ++i)
    out.push_back({q->Int(i, 0), q->Int(i, 1), q->Text(i, 2), q->Text(i, 3), q->Text(i, 4),
                   q->Text(i, 5), static_cast<int>(q->Int(i, 6)), q->Text(i, 7)});
  return out;
}

Result<int64_t> PostgresStore::CountAudit(const AuditQuery& aq) {
  MutexLock lock(read_mu_);
  auto q = reader_db_->Query(
      "SELECT COUNT(*) FROM audit WHERE time_ms >= $1::bigint AND ($2::text = '' OR principal = "
      "$2::text)",
      PgParams().Add(aq.since.value_or(0)).Add(aq.principal));
  if (!q.ok()) return q.status();
  return q->Int(0, 0);
}

Result<std::vector<StoredDecision>> PostgresStore::QueryDecisionLog(const DecisionQuery& dq) {
  MutexLock lock(read_mu_);
  auto q = reader_db_->Query(
      "SELECT seq, time_ms, kind, job_id, reason, detail FROM decisions WHERE seq > $1::bigint "
      "AND time_ms >= $2::bigint AND ($3::text = '' OR kind = $3::text) ORDER BY seq LIMIT "
      "$4::bigint",
      PgParams().Add(dq.after).Add(dq.since.value_or(0)).Add(dq.kind).Add(int64_t{dq.limit}));
  if (!q.ok()) return q.status();
  return DecisionsOf(*q);
}

Result<std::vector<StoredDecision>> PostgresStore::QueryDecisions(int64_t job) {
  MutexLock lock(read_mu_);
  auto q = reader_db_->Query(
      "SELECT seq, time_ms, kind, job_id, reason, detail FROM decisions WHERE job_id = $1 ORDER "
      "BY seq",
      PgParams().Add(job));
  if (!q.ok()) return q.status();
  return DecisionsOf(*q);
}

Result<std::vector<CostTotal>> PostgresStore::QueryCosts(TimeMs since, TimeMs until, TimeMs now) {
  MutexLock lock(read_mu_);
  // Each row's part of the period, summed here in fixed point (CostOver), as SqliteStore does.
  auto q = reader_db_->Query(
      "SELECT tenant, cluster, model, per_hour_micro, LEAST(COALESCE(end_ms, $3::bigint), "
      "$2::bigint) - GREATEST(start_ms, $1::bigint) FROM costs WHERE start_ms < $2::bigint AND "
      "COALESCE(end_ms, $3::bigint) > $1::bigint ORDER BY tenant COLLATE \"C\", cluster COLLATE "
      "\"C\", model COLLATE \"C\"",
      PgParams().Add(since).Add(until).Add(now));
  if (!q.ok()) return q.status();
  std::vector<CostTotal> out;
  for (int i = 0; i < q->rows(); ++i)
    AddCostRow(out, q->View(i, 0), q->View(i, 1), q->View(i, 2),
               CostOver(q->Int(i, 3), q->Int(i, 4)));
  return out;
}

Result<std::optional<std::string>> PostgresStore::QueryTaskLog(int64_t job, int64_t run,
                                                               int64_t task) {
  MutexLock lock(read_mu_);
  auto q =
      reader_db_->Query("SELECT tail FROM task_logs WHERE job_id = $1 AND run = $2 AND task = $3",
                        PgParams().Add(job).Add(run).Add(task));
  if (!q.ok()) return q.status();
  if (q->rows() == 0) return std::optional<std::string>();
  return std::optional<std::string>(q->Text(0, 0));
}

}  // namespace tessera
