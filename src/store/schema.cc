#include "store/schema.h"

#include <string>
#include <vector>

namespace tessera {
namespace {

// Migration i brings version i to version i + 1. Append; never edit a released one.
const std::vector<const char*>& Migrations() {
  static const std::vector<const char*> kMigrations = {
      // 1: jobs, the decision log, the audit log, principals and their tokens, node flags,
      // and what each run costs where (one row per run and (cluster, model); open while the
      // run runs).
      R"sql(
CREATE TABLE jobs(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  tenant TEXT NOT NULL,
  class TEXT NOT NULL,
  body TEXT NOT NULL,
  resolved TEXT NOT NULL DEFAULT '',
  idempotency_key TEXT,
  principal TEXT NOT NULL,
  submitted_ms INTEGER NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  detail TEXT NOT NULL DEFAULT '',
  first_start_ms INTEGER,
  finished_ms INTEGER,
  restarts INTEGER NOT NULL DEFAULT 0,
  placement TEXT NOT NULL DEFAULT '',
  run_start_ms INTEGER,
  kept_ms INTEGER NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX jobs_idempotency ON jobs(principal, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE TABLE decisions(
  seq INTEGER PRIMARY KEY,
  time_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  job_id INTEGER NOT NULL,
  reason TEXT NOT NULL,
  detail TEXT NOT NULL);
CREATE INDEX decisions_job ON decisions(job_id);
CREATE TABLE audit(
  seq INTEGER PRIMARY KEY,
  time_ms INTEGER NOT NULL,
  principal TEXT NOT NULL,
  remote TEXT NOT NULL,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  status INTEGER NOT NULL,
  detail TEXT NOT NULL);
CREATE TABLE principals(
  name TEXT PRIMARY KEY,
  role TEXT NOT NULL,
  tenant TEXT NOT NULL,
  created_ms INTEGER NOT NULL);
CREATE TABLE tokens(
  hash TEXT PRIMARY KEY,
  principal TEXT NOT NULL REFERENCES principals(name),
  expires_ms INTEGER,
  created_ms INTEGER NOT NULL);
CREATE TABLE node_flags(
  node TEXT PRIMARY KEY,
  cordoned INTEGER NOT NULL,
  draining INTEGER NOT NULL);
CREATE TABLE costs(
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL,
  tenant TEXT NOT NULL,
  cluster TEXT NOT NULL,
  model TEXT NOT NULL,
  start_ms INTEGER NOT NULL,
  end_ms INTEGER,
  per_hour REAL NOT NULL);
CREATE INDEX costs_start ON costs(start_ms);
)sql",
      // 2: services (inference), as submitted through the API; their replicas are jobs.
      R"sql(
CREATE TABLE services(
  name TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  body TEXT NOT NULL,
  principal TEXT NOT NULL,
  created_ms INTEGER NOT NULL);
)sql",
      // 3: an agent's principal may be bound to the one node it answers for.
      R"sql(
ALTER TABLE principals ADD COLUMN node TEXT NOT NULL DEFAULT '';
)sql",
      // 4: the tail of each ended task's output, as its agent last reported it.
      R"sql(
CREATE TABLE task_logs(
  job_id INTEGER NOT NULL,
  run INTEGER NOT NULL,
  task INTEGER NOT NULL,
  tail TEXT NOT NULL,
  PRIMARY KEY(job_id, run, task)) WITHOUT ROWID;
)sql",
      // 5: money in fixed point: a cost row's rate in micro-units of the currency an hour.
      R"sql(
CREATE TABLE costs_micro(
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL,
  tenant TEXT NOT NULL,
  cluster TEXT NOT NULL,
  model TEXT NOT NULL,
  start_ms INTEGER NOT NULL,
  end_ms INTEGER,
  per_hour_micro INTEGER NOT NULL);
INSERT INTO costs_micro
  SELECT id, job_id, tenant, cluster, model, start_ms, end_ms,
         CAST(ROUND(per_hour * 1000000) AS INTEGER) FROM costs;
DROP TABLE costs;
ALTER TABLE costs_micro RENAME TO costs;
CREATE INDEX costs_start ON costs(start_ms);
)sql",
  };
  return kMigrations;
}

}  // namespace

int CurrentSchemaVersion() {
  return static_cast<int>(Migrations().size());
}

Result<int> SchemaVersion(Sqlite& db) {
  if (Status s =
          db.Exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
      !s.ok()) {
    return s;
  }
  auto q = db.Prepare("SELECT value FROM meta WHERE key = 'schema_version'");
  if (!q.ok()) return q.status();
  auto row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return 0;
  return ParseSchemaVersion(db.path(), q->Text(0));
}

Status ApplyMigrations(const std::string& name, int version,
                       const std::vector<const char*>& migrations, const char* begin,
                       const std::function<Status(const std::string&)>& exec) {
  const int current = static_cast<int>(migrations.size());
  if (version > current) {
    return Status(StatusCode::kFailedPrecondition,
                  name + ": the store has schema version " + std::to_string(version) +
                      ", newer than this tessera knows (" + std::to_string(current) +
                      "); use a newer tessera");
  }
  for (int v = version; v < current; ++v) {
    std::string sql = std::string(begin) + migrations[v] +
                      "INSERT INTO meta(key, value) VALUES('schema_version', '" +
                      std::to_string(v + 1) +
                      "') ON CONFLICT(key) DO UPDATE SET value = excluded.value; COMMIT;";
    if (Status s = exec(sql); !s.ok()) {
      (void)exec("ROLLBACK");
      return Status(s.code(), "migration to schema version " + std::to_string(v + 1) +
                                  " failed: " + s.message());
    }
  }
  return Status::Ok();
}

Result<int> ParseSchemaVersion(const std::string& name, const std::string& text) {
  try {
    return std::stoi(text);
  } catch (...) {
    return Status(StatusCode::kFailedPrecondition,
                  name + ": meta.schema_version is \"" + text + "\", not a number");
  }
}

Status MigrateSchema(Sqlite& db) {
  auto version = SchemaVersion(db);
  if (!version.ok()) return version.status();
  return ApplyMigrations(db.path(), *version, Migrations(), "BEGIN IMMEDIATE;",
                         [&](const std::string& sql) { return db.Exec(sql); });
}

}  // namespace tessera
