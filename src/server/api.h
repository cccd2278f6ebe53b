// The HTTP/JSON API under /v1/ (docs/api.md, docs/api/openapi.yaml) over cpp-httplib: routes,
// authentication, the JSON error shape {code, message, field}, body limits, and the audit
// record of every mutating call.
//
// Thread-safety: the server's worker threads call the daemon, which is thread-safe.
#pragma once

#include <httplib.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "server/daemon.h"

namespace tessera {

struct ApiOptions {
  size_t max_body_bytes = 1 << 20;
  int threads = 128;  // workers; submissions wait on the store's group commit
  // The workers' CPU priority below the engine's thread (Linux nice, 0-19): when the cores are
  // busy, the scheduling cycle runs first and requests take what is left.
  int worker_nice = 10;
  // When set, called after every request with {method, path, route, status, ms, remote}
  // (from the worker thread that answered it).
  std::function<void(nlohmann::ordered_json)> request_log;
};

class Api;

// Registers every route of the API on `server`. The handlers use the returned object: keep it
// for as long as the server runs.
std::shared_ptr<Api> InstallApi(httplib::Server& server, Daemon& daemon, const ApiOptions& options);

}  // namespace tessera
