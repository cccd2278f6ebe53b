#include "cli/client_common.h"

#include <chrono>
#include <ctime>
#include <random>
#include <sstream>

#include "cli/app.h"
#include "cli/output.h"
#include "common/quantity.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

void AddCommon(CLI::App* cmd, Common& c, bool output) {
  cmd->add_option("--server", c.server,
                  "The daemon's URL, or several daemons' comma-separated (one leads; the "
                  "others stand by) (else TESSERA_SERVER, the config file)");
  cmd->add_option("--token", c.token, "Bearer token (else TESSERA_TOKEN, the config file)");
  cmd->add_option("--ca-cert", c.ca_cert,
                  "https: the CA certificate to trust (else TESSERA_CA_CERT, the config file)");
  if (output) {
    cmd->add_option("-o,--output", c.output, "Output format")
        ->check(CLI::IsMember({"table", "json", "yaml"}))
        ->capture_default_str();
  }
}

std::string NewRequestId() {
  std::random_device rd;
  std::ostringstream s;
  s << std::hex << rd() << rd() << rd() << rd();
  return s.str();
}

void Print(const json& doc, const std::string& format, std::ostream& out,
           const std::function<void()>& table) {
  if (format == "json") {
    out << doc.dump(2) << "\n";
  } else if (format == "yaml") {
    WriteYaml(doc, out);
  } else {
    table();
  }
}

std::string Str(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

std::string DecidedBy(const json& decision) {
  if (!decision.contains("detail") || !decision["detail"].is_object()) return "";
  const std::string policy = Str(decision["detail"], "policy");
  const std::string placement = Str(decision["detail"], "placement");
  return policy.empty() ? "" : policy + "/" + placement;
}

std::string DeadlineLine(const json& d) {
  const std::string state = Str(d, "state");
  const bool start = d.contains("start_ms") && d["start_ms"].is_number_integer();
  const bool end = d.contains("end_ms") && d["end_ms"].is_number_integer();
  std::string line = Time(d["at_ms"]) + ", ";
  if (state == "met" || state == "missed") {
    line += state + (end ? ": ended " + Time(d["end_ms"]) : "");
  } else if (state == "on-track" || state == "at-risk") {
    line += state == "on-track" ? "on track" : "at risk";
    if (start && end) {
      line += ": start " + Time(d["start_ms"]) + ", end " + Time(d["end_ms"]) + " (estimated";
      line += state == "at-risk" ? ", past it)" : ")";
    } else if (state == "at-risk") {
      line += ": even a start now would end past it";
    }
  } else {
    line += "no estimate (no runtime, or no running job's estimate says when room frees up)";
  }
  return line;
}

std::string Encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::optional<ClientConfig> Config(const Common& c, Ctx& x) {
  auto cfg = ResolveClientConfig(c.server, c.token, c.ca_cert);
  if (!cfg.ok()) {
    x.err << "error: " << cfg.status().message() << "\n";
    x.code = kExitInvalidInput;
    return std::nullopt;
  }
  return *cfg;
}

std::string Time(const json& ms) {
  if (!ms.is_number_integer()) return "-";
  auto t = std::chrono::system_clock::time_point(std::chrono::milliseconds(ms.get<int64_t>()));
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&tt));
  return buf;
}
std::optional<int64_t> SinceMs(const std::string& since, Ctx& x) {
  auto d = ParseDuration(since);
  if (!d.ok()) {
    x.err << "error: --since: expected a duration such as 30m, 24h or 7d, got \"" << since
          << "\"\n";
    x.code = kExitInvalidInput;
    return std::nullopt;
  }
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  return std::max<int64_t>(0, now - *d);
}

}  // namespace tessera::cli
