// A thin RAII layer over SQLite's C API: a connection and prepared statements. Errors come back
// as Status naming the database file and SQLite's message.
//
// Thread-safety: a Sqlite connection belongs to one thread at a time (the store serialises
// its use).
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera {

class SqliteStatement {
 public:
  SqliteStatement() = default;
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  SqliteStatement(SqliteStatement&& o) noexcept { *this = std::move(o); }
  SqliteStatement& operator=(SqliteStatement&& o) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Binds parameter `i` (1-based); the value is copied.
  SqliteStatement& Bind(int i, int64_t v);
  SqliteStatement& Bind(int i, std::string_view v);
  SqliteStatement& BindNull(int i);
  SqliteStatement& BindDouble(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  SqliteStatement& Bind(int i, const std::optional<int64_t>& v) {
    return v ? Bind(i, *v) : BindNull(i);
  }
  // One step: true while a row is available; an error (other than done) is a failed Status.
  Result<bool> Step();
  // Steps to completion, then resets for the next use.
  Status Run();
  // Steps through every row, calling `row` on each (it reads the columns).
  template <typename Row>
  Status Each(Row&& row) {
    for (;;) {
      Result<bool> more = Step();
      if (!more.ok()) return more.status();
      if (!*more) return Status::Ok();
      row();
    }
  }
  void Reset();

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::optional<int64_t> OptInt(int col) const {
    if (IsNull(col)) return std::nullopt;
    return Int(col);
  }
  std::string Text(int col) const;
  // The column's text without a copy: valid until the statement steps again or resets.
  std::string_view View(int col) const;
  double Double(int col) const { return sqlite3_column_double(stmt_, col); }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class Sqlite {
 public:
  // Opens (creating) the database file. A statement that finds the file locked by another
  // connection retries for `busy_timeout`, then fails (SQLITE_BUSY: Unavailable).
  static Result<std::unique_ptr<Sqlite>> Open(
      const std::string& path, std::chrono::milliseconds busy_timeout = std::chrono::seconds(5));
  ~Sqlite();
  Sqlite(const Sqlite&) = delete;
  Sqlite& operator=(const Sqlite&) = delete;

  Status Exec(std::string_view sql);
  Result<SqliteStatement> Prepare(std::string_view sql);
  const std::string& path() const { return path_; }
  // Whether SQLite opened the file read-only (no write permission, a read-only mount).
  bool ReadOnly() const { return sqlite3_db_readonly(db_, "main") == 1; }
  // The failed Status for SQLite's last error on this connection.
  Status Error(std::string_view what) const;

 private:
  Sqlite(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

}  // namespace tessera
