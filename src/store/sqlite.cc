#include "store/sqlite.h"

#include <cstring>

namespace tessera {

namespace {

// Whether a failure with this result code may go away by itself (space returns, a lock is
// released, the disk comes back): Unavailable, so the writer retries what nobody waits for.
// Any other (a constraint, a type mismatch) is this write's own fault: Internal.
StatusCode CodeOf(int rc) {
  switch (rc & 0xff) {
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_NOMEM:
    case SQLITE_PROTOCOL:
    case SQLITE_INTERRUPT:
      return StatusCode::kUnavailable;
    default:
      return StatusCode::kInternal;
  }
}

// SQLite's message, and the operating system's error beneath it when there is one.
std::string MessageOf(sqlite3* db) {
  std::string msg = sqlite3_errmsg(db);
  if (int e = sqlite3_system_errno(db); e != 0) msg += " (" + std::string(std::strerror(e)) + ")";
  return msg;
}

}  // namespace

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& o) noexcept {
  if (this != &o) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = o.db_;
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
  }
  return *this;
}

SqliteStatement::~SqliteStatement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

SqliteStatement& SqliteStatement::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}

SqliteStatement& SqliteStatement::Bind(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

SqliteStatement& SqliteStatement::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Result<bool> SqliteStatement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Status(CodeOf(rc),
                std::string("sqlite: ") + MessageOf(db_) + " (" + sqlite3_sql(stmt_) + ")");
}

Status SqliteStatement::Run() {
  Result<bool> r = Step();
  while (r.ok() && *r)
    r = Step();
  Reset();
  return r.ok() ? Status::Ok() : r.status();
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string SqliteStatement::Text(int col) const {
  return std::string(View(col));
}

std::string_view SqliteStatement::View(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return std::string_view(reinterpret_cast<const char*>(p),
                          static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

Result<std::unique_ptr<Sqlite>> Sqlite::Open(const std::string& path,
                                             std::chrono::milliseconds busy_timeout) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status(StatusCode::kUnavailable, path + ": cannot open the store: " + msg);
  }
  sqlite3_busy_timeout(db, static_cast<int>(busy_timeout.count()));
  return std::unique_ptr<Sqlite>(new Sqlite(db, path));
}

Sqlite::~Sqlite() {
  sqlite3_close(db_);
}

Status Sqlite::Exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  if (int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err); rc != SQLITE_OK) {
    std::string msg = err != nullptr ? err : "unknown error";
    sqlite3_free(err);
    if (int e = sqlite3_system_errno(db_); e != 0)
      msg += " (" + std::string(std::strerror(e)) + ")";
    return Status(CodeOf(rc), path_ + ": " + msg);
  }
  return Status::Ok();
}

Result<SqliteStatement> Sqlite::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &stmt, nullptr) != SQLITE_OK) {
    return Error("prepare");
  }
  return SqliteStatement(db_, stmt);
}

Status Sqlite::Error(std::string_view what) const {
  return Status(CodeOf(sqlite3_errcode(db_)),
                path_ + ": " + std::string(what) + ": " + MessageOf(db_));
}

}  // namespace tessera
