#include "store/sqlite_store.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "store/schema.h"
#include "store/store_lock.h"

namespace tessera {

struct SqliteStore::Statements {
  Sqlite* db = nullptr;
  SqliteStatement insert_job, update_job, decision, audit, principal, token, node_flags;
  SqliteStatement insert_cost, end_cost, end_open_costs, alive, delete_tokens;
  SqliteStatement insert_service, delete_service, delete_principal, task_log;
  SqliteStatement resume_job, insert_cost_of_job;
};

namespace {

// The rows of a query that selects seq, time_ms, kind, job_id, reason, detail.
Result<std::vector<StoredDecision>> ReadDecisions(SqliteStatement& q) {
  std::vector<StoredDecision> out;
  if (Status s = q.Each([&] {
        out.push_back({q.Int(0), q.Int(1), q.Text(2), q.Int(3), q.Text(4), q.Text(5)});
      });
      !s.ok()) {
    return s;
  }
  return out;
}

// WAL, full sync on commit: a committed batch survives a power cut, not only a crash.
Status Configure(Sqlite& db) {
  return db.Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;");
}

// A connection that only reads maps the file instead of copying each page it reads (a restart
// reads the whole jobs table, on several connections at once).
Status ConfigureReader(Sqlite& db) {
  if (Status s = Configure(db); !s.ok()) return s;
  return db.Exec("PRAGMA mmap_size = 17179869184;");
}

// The highest job id (0: none); capacity for the rows, the range of the active jobs' chunks.
Result<int64_t> MaxJobId(Sqlite& db) {
  auto q = db.Prepare("SELECT COALESCE(MAX(id), 0) FROM jobs");
  if (!q.ok()) return q.status();
  int64_t last = 0;
  if (Status s = q->Each([&] { last = q->Int(0); }); !s.ok()) return s;
  return last;
}

// An SQLite database with tables of its own but no Tessera schema version is another
// program's: refused rather than migrated into.
Status CheckTesseraTables(Sqlite& db) {
  auto q = db.Prepare(
      "SELECT COUNT(*), COALESCE(SUM(name = 'meta'), 0) FROM sqlite_master WHERE type = 'table'");
  if (!q.ok()) return q.status();
  int64_t tables = 0, meta = 0;
  if (Status s = q->Each([&] {
        tables = q->Int(0);
        meta = q->Int(1);
      });
      !s.ok()) {
    return s;
  }
  if (tables > 0 && meta == 0) {
    return Status(StatusCode::kFailedPrecondition,
                  "store " + db.path() + " is not a Tessera store: an SQLite database with " +
                      std::to_string(tables) + " table(s) of another program and no meta table");
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path,
                                                       StoreOptions options) {
  // One daemon per store; then the file must be a store or not exist yet.
  auto lock = StoreLock::Acquire(path);
  if (!lock.ok()) return lock.status();
  if (Status s = CheckStoreFile(path); !s.ok()) return s;
  auto writer = Sqlite::Open(path, options.busy_timeout);
  if (!writer.ok()) return writer.status();
  if ((*writer)->ReadOnly()) {
    return Status(StatusCode::kFailedPrecondition,
                  "store " + path + " is read-only: the daemon writes every change to it");
  }
  if (Status s = Configure(**writer); !s.ok()) return s;
  if (Status s = CheckTesseraTables(**writer); !s.ok()) return s;
  if (Status s = MigrateSchema(**writer); !s.ok()) return s;
  auto reader = Sqlite::Open(path);
  if (!reader.ok()) return reader.status();
  if (Status s = ConfigureReader(**reader); !s.ok()) return s;

  auto st = std::make_unique<Statements>();
  st->db = writer->get();
  struct Def {
    SqliteStatement* into;
    const char* sql;
  };
  for (const Def& d : std::initializer_list<Def>{
           {&st->insert_job,
            "INSERT INTO jobs(id, name, tenant, body, idempotency_key, principal, submitted_ms, "
            "state, reason, detail, class, resolved) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
            "?10, ?11, ?12)"},
           {&st->update_job,
            "UPDATE jobs SET state = ?2, reason = ?3, detail = ?4, first_start_ms = ?5, "
            "finished_ms = ?6, restarts = ?7, placement = ?8, run_start_ms = ?9, kept_ms = ?10 "
            "WHERE id = ?1"},
           {&st->decision,
            "INSERT INTO decisions(time_ms, kind, job_id, reason, detail) "
            "VALUES(?1, ?2, ?3, ?4, ?5)"},
           {&st->audit,
            "INSERT INTO audit(time_ms, principal, remote, method, path, status, detail) "
            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
           {&st->principal,
            "INSERT INTO principals(name, role, tenant, created_ms, node) "
            "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(name) DO UPDATE SET role = excluded.role, "
            "tenant = excluded.tenant, node = excluded.node"},
           {&st->token,
            "INSERT INTO tokens(hash, principal, expires_ms, created_ms) VALUES(?1, ?2, ?3, ?4)"},
           {&st->node_flags,
            "INSERT INTO node_flags(node, cordoned, draining) VALUES(?1, ?2, ?3) "
            "ON CONFLICT(node) DO UPDATE SET cordoned = excluded.cordoned, "
            "draining = excluded.draining"},
           {&st->insert_cost,
            "INSERT INTO costs(id, job_id, tenant, cluster, model, start_ms, per_hour_micro) "
            "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"},
           {&st->end_cost, "UPDATE costs SET end_ms = ?2 WHERE id = ?1"},
           {&st->resume_job,
            "UPDATE jobs SET state = 'running', reason = '', first_start_ms = ?2, "
            "finished_ms = NULL, run_start_ms = ?3, kept_ms = ?4 WHERE id = ?1"},
           {&st->insert_cost_of_job,
            "INSERT INTO costs(id, job_id, tenant, cluster, model, start_ms, per_hour_micro) "
            "SELECT ?1, ?2, tenant, ?3, ?4, ?5, ?6 FROM jobs WHERE id = ?2"},
           {&st->delete_tokens, "DELETE FROM tokens WHERE principal = ?1"},
           {&st->insert_service,
            "INSERT INTO services(name, tenant, body, principal, created_ms) "
            "VALUES(?1, ?2, ?3, ?4, ?5)"},
           {&st->delete_service, "DELETE FROM services WHERE name = ?1"},
           {&st->delete_principal, "DELETE FROM principals WHERE name = ?1"},
           {&st->task_log,
            "INSERT INTO task_logs(job_id, run, task, tail) VALUES(?1, ?2, ?3, ?4) "
            "ON CONFLICT(job_id, run, task) DO UPDATE SET tail = excluded.tail"},
           {&st->alive,
            "INSERT INTO meta(key, value) VALUES('alive_ms', ?1) ON CONFLICT(key) DO UPDATE SET "
            "value = excluded.value"},
           {&st->end_open_costs,
            "UPDATE costs SET end_ms = MAX(start_ms, ?1) WHERE end_ms IS NULL"},
       }) {
    auto s = (*writer)->Prepare(d.sql);
    if (!s.ok()) return s.status();
    *d.into = std::move(*s);
  }
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(*lock), std::move(*writer),
                                                      std::move(*reader), std::move(st), options));
}

SqliteStore::SqliteStore(StoreLock lock, std::unique_ptr<Sqlite> writer,
                         std::unique_ptr<Sqlite> reader, std::unique_ptr<Statements> statements,
                         StoreOptions options)
    : lock_(std::move(lock)),
      writer_db_(std::move(writer)),
      reader_db_(std::move(reader)),
      statements_(std::move(statements)),
      commits_("store " + writer_db_->path(),
               {[db = writer_db_.get()] { return db->Exec("BEGIN IMMEDIATE"); },
                [db = writer_db_.get()](size_t&) { return db->Exec("COMMIT"); },
                [db = writer_db_.get()] { (void)db->Exec("ROLLBACK"); },
                {}},  // a local file: a commit's outcome is never in doubt
               options.background_delay) {}

SqliteStore::~SqliteStore() = default;

std::shared_future<Status> SqliteStore::Enqueue(Write w, bool first) {
  GroupCommit::Write write = [st = statements_.get(), w = std::move(w)] { return w(*st); };
  return first ? commits_.EnqueueFirst(std::move(write)) : commits_.Enqueue(std::move(write));
}

void SqliteStore::Post(Write w) {
  commits_.Post([st = statements_.get(), w = std::move(w)] { return w(*st); });
}

void SqliteStore::SetHealthLog(std::function<void(bool, const std::string&)> log) {
  commits_.SetHealthLog(std::move(log));
}

std::shared_future<Status> SqliteStore::InsertJob(StoredJob j) {
  return Enqueue(
      [j = std::move(j)](Statements& st) {
        st.insert_job.Bind(1, j.id).Bind(2, j.name).Bind(3, j.tenant).Bind(4, j.body);
        if (j.idempotency_key.empty()) {
          st.insert_job.BindNull(5);
        } else {
          st.insert_job.Bind(5, j.idempotency_key);
        }
        st.insert_job.Bind(6, j.principal).Bind(7, j.submitted).Bind(8, j.state).Bind(9, j.reason);
        st.insert_job.Bind(10, j.detail).Bind(11, j.job_class).Bind(12, j.resolved);
        return st.insert_job.Run();
      },
      /*first=*/true);
}

namespace {

Status WriteJobUpdate(const JobUpdate& j, SqliteStatement& update_job) {
  update_job.Bind(1, j.id).Bind(2, j.state).Bind(3, j.reason).Bind(4, j.detail);
  update_job.Bind(5, j.first_start).Bind(6, j.finished).Bind(7, j.restarts);
  update_job.Bind(8, j.placement).Bind(9, j.run_start).Bind(10, j.kept_ms);
  return update_job.Run();
}

}  // namespace

void SqliteStore::UpdateJob(JobUpdate j) {
  Post([j = std::move(j)](Statements& st) { return WriteJobUpdate(j, st.update_job); });
}

std::shared_future<Status> SqliteStore::CommitJobUpdate(JobUpdate j) {
  return Enqueue([j = std::move(j)](Statements& st) { return WriteJobUpdate(j, st.update_job); });
}

void SqliteStore::AppendDecision(StoredDecision d) {
  Post([d = std::move(d)](Statements& st) {
    st.decision.Bind(1, d.time).Bind(2, d.kind).Bind(3, d.job).Bind(4, d.reason);
    st.decision.Bind(5, d.detail);
    return st.decision.Run();
  });
}

void SqliteStore::AppendDecision(StoredDecision d, DecisionParts parts) {
  Post([d = std::move(d), parts = std::move(parts)](Statements& st) {
    st.decision.Bind(1, d.time).Bind(2, d.kind).Bind(3, d.job).Bind(4, d.reason);
    st.decision.Bind(5, DecisionDetail(parts));
    return st.decision.Run();
  });
}

void SqliteStore::AppendAudit(AuditEntry a) {
  Post([a = std::move(a)](Statements& st) {
    st.audit.Bind(1, a.time).Bind(2, a.principal).Bind(3, a.remote).Bind(4, a.method);
    st.audit.Bind(5, a.path).Bind(6, int64_t{a.status}).Bind(7, a.detail);
    return st.audit.Run();
  });
}

std::shared_future<Status> SqliteStore::PutPrincipal(Principal p) {
  return Enqueue([p = std::move(p)](Statements& st) {
    st.principal.Bind(1, p.name).Bind(2, p.role).Bind(3, p.tenant).Bind(4, p.created);
    st.principal.Bind(5, p.node);
    return st.principal.Run();
  });
}

std::shared_future<Status> SqliteStore::PutToken(StoredToken t) {
  return Enqueue([t = std::move(t)](Statements& st) {
    st.token.Bind(1, t.hash).Bind(2, t.principal).Bind(3, t.expires).Bind(4, t.created);
    return st.token.Run();
  });
}

std::shared_future<Status> SqliteStore::DeleteTokens(const std::string& principal) {
  return Enqueue([principal](Statements& st) { return st.delete_tokens.Bind(1, principal).Run(); });
}

std::shared_future<Status> SqliteStore::DeletePrincipal(const std::string& name) {
  return Enqueue([name](Statements& st) {
    if (Status s = st.delete_tokens.Bind(1, name).Run(); !s.ok()) return s;
    return st.delete_principal.Bind(1, name).Run();
  });
}

std::shared_future<Status> SqliteStore::PutNodeFlags(NodeFlags f) {
  return Enqueue([f = std::move(f)](Statements& st) {
    st.node_flags.Bind(1, f.node).Bind(2, int64_t{f.cordoned}).Bind(3, int64_t{f.draining});
    return st.node_flags.Run();
  });
}

std::shared_future<Status> SqliteStore::InsertService(StoredService v) {
  return Enqueue([v = std::move(v)](Statements& st) {
    st.insert_service.Bind(1, v.name).Bind(2, v.tenant).Bind(3, v.body).Bind(4, v.principal);
    return st.insert_service.Bind(5, v.created).Run();
  });
}

std::shared_future<Status> SqliteStore::DeleteService(const std::string& name) {
  return Enqueue([name](Statements& st) { return st.delete_service.Bind(1, name).Run(); });
}

void SqliteStore::InsertCost(CostRow c) {
  Post([c = std::move(c)](Statements& st) {
    st.insert_cost.Bind(1, c.id).Bind(2, c.job).Bind(3, c.tenant).Bind(4, c.cluster);
    st.insert_cost.Bind(5, c.model).Bind(6, c.start).Bind(7, c.per_hour);
    return st.insert_cost.Run();
  });
}

void SqliteStore::ResumeRuns(ResumedRuns runs) {
  if (runs.runs.empty()) return;
  Post([r = std::move(runs)](Statements& st) {
    std::vector<std::string> nodes;
    for (const ResumedRuns::Run& run : r.runs) {
      st.resume_job.Bind(1, run.job).Bind(2, run.first_start).Bind(3, run.time);
      if (Status s = st.resume_job.Bind(4, run.kept_ms).Run(); !s.ok()) return s;
      if (!run.decided) continue;
      nodes.clear();
      for (uint32_t n : run.nodes)
        nodes.push_back(r.node_names.at(n));
      st.decision.Bind(1, run.time).Bind(2, "start").Bind(3, run.job).Bind(4, run.reason);
      st.decision.Bind(5, DecisionDetail({nodes, "", "", ""}));
      if (Status s = st.decision.Run(); !s.ok()) return s;
      for (const ResumedRuns::Cost& c : run.costs) {
        st.insert_cost_of_job.Bind(1, c.id).Bind(2, run.job).Bind(3, r.clusters.at(c.cluster));
        st.insert_cost_of_job.Bind(
            4, c.model < 0 ? std::string("cpu") : r.models.at(static_cast<size_t>(c.model)));
        st.insert_cost_of_job.Bind(5, run.time).Bind(6, c.per_hour);
        if (Status s = st.insert_cost_of_job.Run(); !s.ok()) return s;
      }
    }
    return Status::Ok();
  });
}

void SqliteStore::EndCost(int64_t id, TimeMs end) {
  Post([id, end](Statements& st) { return st.end_cost.Bind(1, id).Bind(2, end).Run(); });
}

void SqliteStore::Alive(TimeMs now) {
  Post([now](Statements& st) { return st.alive.Bind(1, std::to_string(now)).Run(); });
}

void SqliteStore::EndOpenCosts(TimeMs end) {
  Post([end](Statements& st) { return st.end_open_costs.Bind(1, end).Run(); });
}

std::shared_future<Status> SqliteStore::Flush() {
  return Enqueue([](Statements&) { return Status::Ok(); });
}

Result<StoreSnapshot> SqliteStore::Load() {
  MutexLock lock(read_mu_);
  Sqlite& db = *reader_db_;
  StoreSnapshot snap;
  // The rows' vector at its size from the start (ids count from 1; a gap is rare): growing it
  // by doubling would touch (and copy) twice the memory, which a restart pays in page faults.
  Result<int64_t> last_id = MaxJobId(db);
  if (!last_id.ok()) return last_id.status();
  snap.jobs.reserve(static_cast<size_t>(*last_id));
  auto q = db.Prepare(
      "SELECT id, name, tenant, body, idempotency_key, principal, submitted_ms, state, reason, "
      "detail, first_start_ms, finished_ms, restarts, placement, class, run_start_ms, kept_ms "
      "FROM jobs ORDER BY id");
  if (!q.ok()) return q.status();
  if (Status s = q->Each([&] {
        StoredJob& j = snap.jobs.emplace_back();
        j.id = q->Int(0);
        j.name = q->Text(1);
        j.tenant = q->Text(2);
        j.body = q->Text(3);
        j.idempotency_key = q->Text(4);
        j.principal = q->Text(5);
        j.submitted = q->Int(6);
        j.state = q->Text(7);
        j.reason = q->Text(8);
        j.detail = q->Text(9);
        j.first_start = q->OptInt(10);
        j.finished = q->OptInt(11);
        j.restarts = static_cast<int32_t>(q->Int(12));
        j.placement = q->Text(13);
        j.job_class = q->Text(14);
        j.run_start = q->OptInt(15);
        j.kept_ms = q->Int(16);
      });
      !s.ok()) {
    return s;
  }
  auto p = db.Prepare("SELECT name, role, tenant, created_ms, node FROM principals ORDER BY name");
  if (!p.ok()) return p.status();
  if (Status s = p->Each([&] {
        snap.principals.push_back({p->Text(0), p->Text(1), p->Text(2), p->Int(3), p->Text(4)});
      });
      !s.ok()) {
    return s;
  }
  auto t = db.Prepare("SELECT hash, principal, expires_ms, created_ms FROM tokens");
  if (!t.ok()) return t.status();
  if (Status s = t->Each([&] {
        snap.tokens.push_back({t->Text(0), t->Text(1), t->OptInt(2), t->Int(3)});
      });
      !s.ok()) {
    return s;
  }
  auto last = db.Prepare(
      "SELECT (SELECT COALESCE(MAX(id), 0) FROM costs), MAX((SELECT COALESCE(MAX(time_ms), 0) "
      "FROM decisions), (SELECT COALESCE(MAX(time_ms), 0) FROM audit), (SELECT "
      "COALESCE(MAX(submitted_ms), 0) FROM jobs), (SELECT COALESCE(MAX(CAST(value AS INTEGER)), "
      "0) FROM meta WHERE key = 'alive_ms'))");
  if (!last.ok()) return last.status();
  if (Status s = last->Each([&] {
        snap.last_cost = last->Int(0);
        snap.last_seen = last->Int(1);
      });
      !s.ok()) {
    return s;
  }
  auto n = db.Prepare("SELECT node, cordoned, draining FROM node_flags ORDER BY node");
  if (!n.ok()) return n.status();
  if (Status s = n->Each([&] {
        snap.nodes.push_back({n->Text(0), n->Int(1) != 0, n->Int(2) != 0});
      });
      !s.ok()) {
    return s;
  }
  auto v =
      db.Prepare("SELECT name, tenant, body, principal, created_ms FROM services ORDER BY name");
  if (!v.ok()) return v.status();
  if (Status s = v->Each([&] {
        snap.services.push_back({v->Text(0), v->Text(1), v->Text(2), v->Text(3), v->Int(4)});
      });
      !s.ok()) {
    return s;
  }
  return snap;
}

Result<int64_t> SqliteStore::LastJobId() const {
  MutexLock lock(read_mu_);
  return MaxJobId(*reader_db_);
}

namespace {

// Reads straight from SQLite's memory, on a connection of its own.
class SqliteActiveJobReader final : public DurableStore::ActiveJobReader {
 public:
  explicit SqliteActiveJobReader(std::unique_ptr<Sqlite> db) : db_(std::move(db)) {}
  Status Read(int64_t from, int64_t to, const DurableStore::ActiveJobRow& row) override {
    auto q = db_->Prepare(
        "SELECT id, state, resolved, placement FROM jobs WHERE id BETWEEN ?1 AND ?2 AND state "
        "NOT IN ('succeeded', 'failed', 'cancelled') ORDER BY id");
    if (!q.ok()) return q.status();
    q->Bind(1, from).Bind(2, to);
    return q->Each([&] { row(q->Int(0), q->View(1), q->View(2), q->View(3)); });
  }

 private:
  std::unique_ptr<Sqlite> db_;
};

}  // namespace

Result<std::unique_ptr<DurableStore::ActiveJobReader>> SqliteStore::OpenActiveJobReader() const {
  auto db = Sqlite::Open(reader_db_->path());
  if (!db.ok()) return db.status();
  if (Status s = ConfigureReader(**db); !s.ok()) return s;
  return std::unique_ptr<ActiveJobReader>(std::make_unique<SqliteActiveJobReader>(std::move(*db)));
}

Result<std::vector<AuditEntry>> SqliteStore::QueryAudit(const AuditQuery& aq) {
  MutexLock lock(read_mu_);
  // Newest first, below the cursor (0: from the newest).
  auto q = reader_db_->Prepare(
      "SELECT seq, time_ms, principal, remote, method, path, status, detail FROM audit "
      "WHERE (?1 = 0 OR seq < ?1) AND time_ms >= ?2 AND (?3 = '' OR principal = ?3) "
      "ORDER BY seq DESC LIMIT ?4");
  if (!q.ok()) return q.status();
  q->Bind(1, aq.after).Bind(2, aq.since.value_or(0)).Bind(3, aq.principal);
  q->Bind(4, int64_t{aq.limit});
  std::vector<AuditEntry> out;
  if (Status s = q->Each([&] {
        out.push_back({q->Int(0), q->Int(1), q->Text(2), q->Text(3), q->Text(4), q->Text(5),
                       static_cast<int>(q->Int(6)), q->Text(7)});
      });
      !s.ok()) {
    return s;
  }
  return out;
}

Result<int64_t> SqliteStore::CountAudit(const AuditQuery& aq) {
  MutexLock lock(read_mu_);
  auto q = reader_db_->Prepare(
      "SELECT COUNT(*) FROM audit WHERE time_ms >= ?1 AND (?2 = '' OR principal = ?2)");
  if (!q.ok()) return q.status();
  q->Bind(1, aq.since.value_or(0)).Bind(2, aq.principal);
  int64_t n = 0;
  if (Status s = q->Each([&] { n = q->Int(0); }); !s.ok()) return s;
  return n;
}

Result<std::vector<StoredDecision>> SqliteStore::QueryDecisionLog(const DecisionQuery& dq) {
  MutexLock lock(read_mu_);
  auto q = reader_db_->Prepare(
      "SELECT seq, time_ms, kind, job_id, reason, detail FROM decisions WHERE seq > ?1 AND "
      "time_ms >= ?2 AND (?3 = '' OR kind = ?3) ORDER BY seq LIMIT ?4");
  if (!q.ok()) return q.status();
  q->Bind(1, dq.after).Bind(2, dq.since.value_or(0)).Bind(3, dq.kind);
  q->Bind(4, int64_t{dq.limit});
  return ReadDecisions(*q);
}

Result<std::vector<CostTotal>> SqliteStore::QueryCosts(TimeMs since, TimeMs until, TimeMs now) {
  MutexLock lock(read_mu_);
  // Each row's part of the period, summed here in fixed point: a rate times a span can pass
  // 64 bits (CostOver), which SQLite's integers cannot hold.
  auto q = reader_db_->Prepare(
      "SELECT tenant, cluster, model, per_hour_micro, MIN(COALESCE(end_ms, ?3), ?2) - "
      "MAX(start_ms, ?1) FROM costs WHERE start_ms < ?2 AND COALESCE(end_ms, ?3) > ?1 "
      "ORDER BY tenant, cluster, model");
  if (!q.ok()) return q.status();
  q->Bind(1, since).Bind(2, until).Bind(3, now);
  std::vector<CostTotal> out;
  if (Status s = q->Each([&] {
        AddCostRow(out, q->View(0), q->View(1), q->View(2), CostOver(q->Int(3), q->Int(4)));
      });
      !s.ok()) {
    return s;
  }
  return out;
}

void SqliteStore::PutTaskLog(int64_t job, int64_t run, int64_t task, std::string tail) {
  Post([job, run, task, tail = std::move(tail)](Statements& st) {
    st.task_log.Bind(1, job).Bind(2, run).Bind(3, task).Bind(4, tail);
    return st.task_log.Run();
  });
}

Result<std::optional<std::string>> SqliteStore::QueryTaskLog(int64_t job, int64_t run,
                                                             int64_t task) {
  MutexLock lock(read_mu_);
  auto q = reader_db_->Prepare(
      "SELECT tail FROM task_logs WHERE job_id = ?1 AND run = ?2 AND task = ?3");
  if (!q.ok()) return q.status();
  q->Bind(1, job).Bind(2, run).Bind(3, task);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(q->Text(0));
}

Result<std::vector<StoredDecision>> SqliteStore::QueryDecisions(int64_t job) {
  MutexLock lock(read_mu_);
  auto q = reader_db_->Prepare(
      "SELECT seq, time_ms, kind, job_id, reason, detail FROM decisions WHERE job_id = ?1 "
      "ORDER BY seq");
  if (!q.ok()) return q.status();
  q->Bind(1, job);
  return ReadDecisions(*q);
}

}  // namespace tessera
