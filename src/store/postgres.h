// A thin RAII layer over libpq: a connection to PostgreSQL, prepared statements and results.
// Errors come back as Status naming the database (its URL without a password) and the
// server's message: Unavailable when the failure may pass by itself (a lost connection, a
// server shutting down or out of resources, a serialisation conflict), Internal when the
// statement is wrong in itself (a constraint), FailedPrecondition for what the caller raised
// on purpose (`RAISE ... USING ERRCODE = 'TS001'`, a deposed leader's fenced write).
//
// Connections carry TCP timeouts (tcp_user_timeout, keepalives), so that a statement to a
// server that has become unreachable fails within seconds instead of waiting on TCP's
// retransmissions for minutes.
//
// Thread-safety: a Postgres connection belongs to one thread at a time (its user serialises it).
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tessera {

// The parameters of a statement, in order ($1, $2, ...), as text (what PostgreSQL parses).
class PgParams {
 public:
  PgParams& Add(int64_t v) { return Add(std::to_string(v)); }
  PgParams& Add(std::string_view v) {
    values_.emplace_back(v);
    null_.push_back(false);
    return *this;
  }
  PgParams& Add(const char* v) { return Add(std::string_view(v)); }
  PgParams& Add(const std::optional<int64_t>& v) { return v ? Add(*v) : AddNull(); }
  PgParams& AddNull() {
    values_.emplace_back();
    null_.push_back(true);
    return *this;
  }
  int size() const { return static_cast<int>(values_.size()); }
  // libpq's array of values (null for SQL NULL): valid while this object is unchanged.
  std::vector<const char*> Pointers() const;

 private:
  std::vector<std::string> values_;
  std::vector<bool> null_;
};

// A result's rows; columns are read as text, the way libpq returns them.
class PgResult {
 public:
  explicit PgResult(PGresult* r) : r_(r) {}
  PgResult(PgResult&& o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  PgResult& operator=(PgResult&& o) noexcept;
  PgResult(const PgResult&) = delete;
  PgResult& operator=(const PgResult&) = delete;
  ~PgResult();

  int rows() const { return PQntuples(r_); }
  // Rows changed by an INSERT, UPDATE or DELETE.
  int64_t affected() const;
  bool IsNull(int row, int col) const { return PQgetisnull(r_, row, col) == 1; }
  // 0 for NULL; a column that is not an integer reads as 0.
  int64_t Int(int row, int col) const;
  std::optional<int64_t> OptInt(int row, int col) const {
    if (IsNull(row, col)) return std::nullopt;
    return Int(row, col);
  }
  // "" for NULL. View: without a copy, valid while the result lives.
  std::string Text(int row, int col) const { return std::string(View(row, col)); }
  std::string_view View(int row, int col) const {
    return {PQgetvalue(r_, row, col), static_cast<size_t>(PQgetlength(r_, row, col))};
  }

 private:
  PGresult* r_ = nullptr;
};

class Postgres {
 public:
  // Connects to `url` (postgres://USER[:PASSWORD]@HOST[:PORT]/DB[?...], or libpq's key=value
  // form) as `application` (what pg_stat_activity shows). Unavailable, naming the database,
  // when it cannot be reached; InvalidArgument when the URL is malformed.
  static Result<std::unique_ptr<Postgres>> Connect(const std::string& url,
                                                   const std::string& application);
  ~Postgres();
  Postgres(const Postgres&) = delete;
  Postgres& operator=(const Postgres&) = delete;

  // One or more statements without parameters.
  Status Exec(std::string_view sql);
  // One statement with parameters: its rows (none for a command).
  Result<PgResult> Query(const std::string& sql, const PgParams& params = {});
  // A query's rows one at a time as they arrive (libpq's single-row mode), each a result of
  // one row (row 0): the server goes on sending while `row` runs, and no result holds them
  // all. An error may come after some rows.
  Status Stream(const std::string& sql, const PgParams& params,
                const std::function<void(const PgResult& row)>& row);
  // Prepares `sql` as `name` on this connection (again after each reconnect).
  Status Prepare(const std::string& name, const std::string& sql);
  // Pipelined statements (libpq's pipeline mode: a batch's statements sent without waiting for
  // each answer, one round trip for them all). EnterPipeline starts; Send queues a prepared
  // statement, SendSql one of its own, each tagged with `tag()` at the time; Sync sends them,
  // reads every answer and leaves pipeline mode: the first failure, and in `failed_tag` the tag
  // of the statement that failed (the server skips the rest). Exec and Query are for
  // outside a pipeline (prepared statements run only in one); AbandonPipeline leaves one that
  // failed on the way (for a ROLLBACK).
  Status EnterPipeline();
  Status Send(const std::string& name, const PgParams& params);
  Status SendSql(const std::string& sql, const PgParams& params = {});
  void set_tag(int tag) { tag_ = tag; }
  Status Sync(int* failed_tag);
  void AbandonPipeline();

  // Whether the connection is lost; Reconnect tries once to get it back (with its statements).
  bool Broken() const { return PQstatus(conn_) != CONNECTION_OK; }
  Status Reconnect();

  // The database's URL without its password: what messages name.
  const std::string& name() const { return name_; }

 private:
  Postgres(PGconn* conn, std::string name) : conn_(conn), name_(std::move(name)) {}
  // The Status of a finished command: Ok, or the server's error mapped to a code.
  Result<PgResult> Check(PGresult* r, std::string_view what) const;

  PGconn* conn_;
  std::string name_;
  std::vector<std::pair<std::string, std::string>> prepared_;  // re-prepared on Reconnect
  int tag_ = 0;
  std::vector<int> sent_tags_;  // of each statement sent in the pipeline, in order
  bool synced_ = false;         // the pipeline's sync is sent
};

// `url` with its password, if any, replaced by "***".
std::string RedactedUrl(const std::string& url);

// Whether `store` names a PostgreSQL database (postgres:// or postgresql://).
bool IsPostgresUrl(std::string_view store);

}  // namespace tessera
