// What the daemon's client commands share (client_cmd.cc, service_cmd.cc): the connection
// flags, output in table/json/yaml, and small formatting helpers.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "cli/client.h"

namespace tessera::cli {

// --server, --token, --ca-cert and -o of every client command.
struct Common {
  std::string server, token, ca_cert, output = "table";
};

// Where a client command writes, and its exit code.
struct Ctx {
  std::ostream& out;
  std::ostream& err;
  int& code;
};

void AddCommon(CLI::App* cmd, Common& c, bool output = true);

// A random id (hex): idempotency keys.
std::string NewRequestId();

// `doc` as JSON or YAML, or `table()` for the default format.
void Print(const nlohmann::ordered_json& doc, const std::string& format, std::ostream& out,
           const std::function<void()>& table);

// The field as text: strings as they are, other values as JSON, "" when absent or null.
std::string Str(const nlohmann::ordered_json& j, const char* key);

// The scheduler a decision names (its detail's policy and placement): "las/best-fit", or ""
// for one no policy made (a run adopted after a restart).
std::string DecidedBy(const nlohmann::ordered_json& decision);

// An explanation's deadline as a sentence: "2026-12-10T08:00:00Z, at risk: start ..., end ...
// (estimated, past it)".
std::string DeadlineLine(const nlohmann::ordered_json& deadline);

// Percent-encodes a path segment or query value.
std::string Encode(const std::string& s);

// Resolves the client's config, or reports and sets the exit code.
std::optional<ClientConfig> Config(const Common& c, Ctx& x);

// `--since D` (30m, 24h, 7d) as milliseconds since the epoch, or reports and sets the exit
// code.
std::optional<int64_t> SinceMs(const std::string& since, Ctx& x);

// Milliseconds since the epoch as an ISO 8601 UTC time; "-" when not a number.
std::string Time(const nlohmann::ordered_json& ms);

}  // namespace tessera::cli
