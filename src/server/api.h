// The HTTP/JSON API under /v1/ (docs/api.md, docs/api/openapi.yaml) over HttpServer: routes,
// authentication, the JSON error shape {code, message, field}, body limits, and the audit
// record of every mutating call.
//
// Thread-safety: the server's worker threads call the daemon, which is thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "server/daemon.h"
#include "server/http_server.h"

namespace tessera {

struct ApiOptions {
  // When set, called after every request with {method, path, route, status, ms, remote}
  // (from the worker thread that answered it).
  std::function<void(nlohmann::ordered_json)> request_log;
};

class Api;

// The server's settings for the API: the body limit, 128 workers (submissions wait on the
// store's group commit) and a CPU priority below the engine's thread (nice 10: when the cores
// are busy, the scheduling cycle runs first and requests take what is left).
HttpServerOptions ApiServerOptions();

// Registers every route of the API on `server`. The handlers use the returned object: keep it
// for as long as the server runs.
std::shared_ptr<Api> InstallApi(HttpServer& server, Daemon& daemon, const ApiOptions& options);

}  // namespace tessera
