// The daemon's client: where the server is, the caller's token, and one HTTP call.
//
// The server, token and CA certificate come from, in order: the flags (--server, --token,
// --ca-cert), the environment (TESSERA_SERVER, TESSERA_TOKEN, TESSERA_CA_CERT), then
// ~/.config/tessera/config.yaml ({server, token, caCert}), else http://127.0.0.1:7400, no
// token and the system's CAs.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::cli {

// Client exit codes (docs/cli.md): beyond 0, 1 and 2 of every command.
inline constexpr int kExitDenied = 4;       // 401/403: no valid token, or not allowed
inline constexpr int kExitNotFound = 5;     // 404
inline constexpr int kExitUnavailable = 6;  // the server cannot be reached, or 503

struct ClientConfig {
  std::string server;
  std::string token;
  std::string ca_cert;  // https: the CA certificate (PEM) to verify the server with; "" = system's
};

// Resolves the configuration; errors name the config file, line and field.
Result<ClientConfig> ResolveClientConfig(const std::string& server_flag,
                                         const std::string& token_flag,
                                         const std::string& ca_flag = "");

struct HttpReply {
  int status = 0;  // 0: no answer (connection failed)
  nlohmann::ordered_json body;
  std::string error;  // the transport's error when status is 0
};

HttpReply Call(const ClientConfig& c, const std::string& method, const std::string& path,
               const std::string& body = "",
               const std::vector<std::pair<std::string, std::string>>& headers = {});

// The exit code for a reply that is not 2xx, after printing its error to `err`.
int ReportFailure(const HttpReply& r, std::ostream& err);

}  // namespace tessera::cli
