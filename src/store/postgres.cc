#include "store/postgres.h"

#include <array>
#include <charconv>

namespace tessera {

namespace {

// Whether a failure with this SQLSTATE may pass by itself, so that the writer retries what
// nobody waits for: a connection exception (08), an operator intervention such as a shutdown
// (57), insufficient resources (53), a system error (58), a serialisation failure or deadlock.
bool Transient(std::string_view state) {
  if (state.size() != 5) return true;  // no state: the connection failed
  std::string_view cls = state.substr(0, 2);
  return cls == "08" || cls == "57" || cls == "53" || cls == "58" || state == "40001" ||
         state == "40P01";
}

// libpq's messages end in a newline; ours do not.
std::string Trimmed(const char* msg) {
  std::string s = msg != nullptr ? msg : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

// The connection's own settings, after the URL's: bounded waits on an unreachable server.
constexpr std::array<std::pair<const char*, const char*>, 6> kSettings = {{
    {"connect_timeout", "5"},
    {"tcp_user_timeout", "5000"},  // ms: unacknowledged data fails the connection
    {"keepalives", "1"},
    {"keepalives_idle", "5"},
    {"keepalives_interval", "2"},
    {"keepalives_count", "2"},
}};

void IgnoreNotice(void*, const char*) {}  // "relation exists, skipping" and the like

}  // namespace

std::vector<const char*> PgParams::Pointers() const {
  std::vector<const char*> p;
  p.reserve(values_.size());
  for (size_t i = 0; i < values_.size(); ++i)
    p.push_back(null_[i] ? nullptr : values_[i].c_str());
  return p;
}

PgResult& PgResult::operator=(PgResult&& o) noexcept {
  if (this != &o) {
    if (r_ != nullptr) PQclear(r_);
    r_ = std::exchange(o.r_, nullptr);
  }
  return *this;
}

PgResult::~PgResult() {
  if (r_ != nullptr) PQclear(r_);
}

int64_t PgResult::affected() const {
  std::string_view n = PQcmdTuples(r_);
  int64_t v = 0;
  std::from_chars(n.data(), n.data() + n.size(), v);
  return v;
}

int64_t PgResult::Int(int row, int col) const {
  std::string_view s = View(row, col);
  int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

bool IsPostgresUrl(std::string_view store) {
  return store.rfind("postgres://", 0) == 0 || store.rfind("postgresql://", 0) == 0;
}

std::string RedactedUrl(const std::string& url) {
  // scheme://user:password@host...: the password is between the first ':' after the scheme
  // and the '@' that ends the user part.
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  size_t at = url.find('@', scheme + 3);
  if (at == std::string::npos) return url;
  size_t colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

Result<std::unique_ptr<Postgres>> Postgres::Connect(const std::string& url,
                                                    const std::string& application) {
  const std::string name = RedactedUrl(url);
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &error);
  if (parsed == nullptr) {
    std::string msg = Trimmed(error);
    PQfreemem(error);
    return InvalidArgument("store " + name + ": not a PostgreSQL URL: " + msg);
  }
  bool own_options = false;  // the URL's server options (?options=...) are kept as they are
  for (PQconninfoOption* o = parsed; o->keyword != nullptr; ++o)
    own_options |= std::string_view(o->keyword) == "options" && o->val != nullptr;
  PQconninfoFree(parsed);
  std::vector<const char*> keys = {"dbname", "application_name"};
  std::vector<const char*> values = {url.c_str(), application.c_str()};
  for (const auto& [k, v] : kSettings) {
    keys.push_back(k);
    values.push_back(v);
  }
  if (!own_options) {
    // The store's statements are short; PostgreSQL's JIT is for long analytical queries (a
    // restart's profile showed its LLVM being loaded into the readers' server processes).
    keys.push_back("options");
    values.push_back("-c jit=off");
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1);
  if (conn == nullptr) return Unavailable("store " + name + ": out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string msg = Trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    return Unavailable("store " + name + ": cannot connect: " + msg);
  }
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  return std::unique_ptr<Postgres>(new Postgres(conn, name));
}

Postgres::~Postgres() {
  PQfinish(conn_);
}

Result<PgResult> Postgres::Check(PGresult* r, std::string_view what) const {
  PgResult result(r);
  if (r == nullptr) {
    return Unavailable(name_ + ": " + std::string(what) + ": " + Trimmed(PQerrorMessage(conn_)));
  }
  ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY) return result;
  const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  std::string_view code = state != nullptr ? state : "";
  const char* primary = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
  std::string msg = name_ + ": " + std::string(what) + ": " +
                    Trimmed(primary != nullptr ? primary : PQresultErrorMessage(r));
  if (code == "TS001") return Status(StatusCode::kFailedPrecondition, msg);
  if (Transient(code) || Broken()) return Unavailable(msg);
  return Internal(msg);
}

Status Postgres::Exec(std::string_view sql) {
  std::string text(sql);
  return Check(PQexec(conn_, text.c_str()), "exec").status();
}

Result<PgResult> Postgres::Query(const std::string& sql, const PgParams& params) {
  std::vector<const char*> values = params.Pointers();
  return Check(
      PQexecParams(conn_, sql.c_str(), params.size(), nullptr, values.data(), nullptr, nullptr, 0),
      "query");
}

Status Postgres::Stream(const std::string& sql, const PgParams& params,
                        const std::function<void(const PgResult& row)>& row) {
  std::vector<const char*> values = params.Pointers();
  if (PQsendQueryParams(conn_, sql.c_str(), params.size(), nullptr, values.data(), nullptr, nullptr,
                        0) != 1) {
    return Unavailable(name_ + ": query: " + Trimmed(PQerrorMessage(conn_)));
  }
  (void)PQsetSingleRowMode(conn_);  // refused only when not right after the send
  Status status = Status::Ok();
  // A result per row, then one of none (or the error), then the null that ends the query.
  while (PGresult* r = PQgetResult(conn_)) {
    if (!status.ok()) {
      PQclear(r);
      continue;
    }
    if (PQresultStatus(r) == PGRES_SINGLE_TUPLE) {
      PgResult one(r);
      row(one);
      continue;
    }
    status = Check(r, "query").status();  // Check takes r
  }
  return status;
}

Status Postgres::Prepare(const std::string& name, const std::string& sql) {
  Status s =
      Check(PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr), "prepare " + name).status();
  if (s.ok()) prepared_.emplace_back(name, sql);
  return s;
}

Status Postgres::EnterPipeline() {
  sent_tags_.clear();
  if (PQenterPipelineMode(conn_) != 1) {
    return Unavailable(name_ + ": pipeline: " + Trimmed(PQerrorMessage(conn_)));
  }
  return Status::Ok();
}

Status Postgres::Send(const std::string& name, const PgParams& params) {
  std::vector<const char*> values = params.Pointers();
  if (PQsendQueryPrepared(conn_, name.c_str(), params.size(), values.data(), nullptr, nullptr, 0) !=
      1) {
    return Unavailable(name_ + ": " + name + ": " + Trimmed(PQerrorMessage(conn_)));
  }
  sent_tags_.push_back(tag_);
  return Status::Ok();
}

Status Postgres::SendSql(const std::string& sql, const PgParams& params) {
  std::vector<const char*> values = params.Pointers();
  if (PQsendQueryParams(conn_, sql.c_str(), params.size(), nullptr, values.data(), nullptr, nullptr,
                        0) != 1) {
    return Unavailable(name_ + ": " + Trimmed(PQerrorMessage(conn_)));
  }
  sent_tags_.push_back(tag_);
  return Status::Ok();
}

Status Postgres::Sync(int* failed_tag) {
  Status first = Status::Ok();
  auto fail = [&](Status failure, int tag) {
    if (!first.ok()) return;
    first = std::move(failure);
    *failed_tag = tag;
  };
  if (PQpipelineSync(conn_) != 1) {
    fail(Unavailable(name_ + ": sync: " + Trimmed(PQerrorMessage(conn_))), -1);
  } else {
    synced_ = true;
    // Each statement's result, then the null that ends it; the server skips (aborts) what
    // follows a failure up to the sync.
    for (int tag : sent_tags_) {
      PGresult* r = PQgetResult(conn_);
      if (r == nullptr) {
        fail(Unavailable(name_ + ": no answer: " + Trimmed(PQerrorMessage(conn_))), tag);
        break;
      }
      const ExecStatusType st = PQresultStatus(r);
      if (st == PGRES_PIPELINE_ABORTED || st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        PQclear(r);
      } else {
        fail(Check(r, "pipeline").status(), tag);  // Check takes r
      }
      while ((r = PQgetResult(conn_)) != nullptr)
        PQclear(r);
    }
  }
  AbandonPipeline();
  return first;
}

void Postgres::AbandonPipeline() {
  if (PQpipelineStatus(conn_) != PQ_PIPELINE_OFF) {
    if (!synced_) (void)PQpipelineSync(conn_);
    // Up to the sync's own result: then the pipeline is idle and may be left.
    for (int nulls = 0; nulls < 2 && !Broken();) {
      PGresult* r = PQgetResult(conn_);
      if (r == nullptr) {
        ++nulls;
        continue;
      }
      nulls = 0;
      const bool sync = PQresultStatus(r) == PGRES_PIPELINE_SYNC;
      PQclear(r);
      if (sync) break;
    }
    (void)PQexitPipelineMode(conn_);
  }
  sent_tags_.clear();
  synced_ = false;
}

Status Postgres::Reconnect() {
  PQreset(conn_);
  if (Broken()) return Unavailable(name_ + ": cannot connect: " + Trimmed(PQerrorMessage(conn_)));
  PQsetNoticeProcessor(conn_, IgnoreNotice, nullptr);
  for (const auto& [name, sql] : prepared_) {
    if (Status s = Check(PQprepare(conn_, name.c_str(), sql.c_str(), 0, nullptr), "prepare " + name)
                       .status();
        !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

}  // namespace tessera
