// What a standby daemon answers while another daemon leads the store (PostgreSQL, HA): it
// schedules nothing and holds no state, so it answers only where the leader is.
//
//   GET /healthz   200 {"status": "ok"}: the process lives
//   GET /readyz    503 {"status": "standby", "leader": NAME, "leader_url": URL, "term": N}
//   GET other      307 to the same path and query at the leader, once the leader has said
//                  where it answers; else 503 as a write
//   POST, DELETE   503 {"code": "unavailable", "message": ..., "leader": URL} and Retry-After:
//                  a write goes to the leader, never through a standby
//
// Thread-safety: `leader` is called from the server's workers, at every request.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "server/http_server.h"

namespace tessera {

// The leader as the store's lease names it.
struct StandbyLeader {
  std::string name;  // the lease's holder ("" = nobody leads now)
  std::string url;   // where it answers ("" = not said yet)
  int64_t term = 0;
};

void InstallStandbyApi(HttpServer& server, std::function<StandbyLeader()> leader);

// `path` and its query as a target ("/v1/jobs?state=running"), each part percent-encoded.
std::string TargetOf(const HttpRequest& req);

}  // namespace tessera
