#include "cli/client.h"

#include <httplib.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>

#include "cli/app.h"
#include "cli/client_common.h"
#include "common/server_list.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

Result<ClientConfig> ResolveClientConfig(const std::string& server_flag,
                                         const std::string& token_flag,
                                         const std::string& ca_flag) {
  ClientConfig c;
  std::string file_server, file_token, file_ca;
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  std::filesystem::path file;
  if (xdg != nullptr && *xdg != '\0') {
    file = std::filesystem::path(xdg) / "tessera" / "config.yaml";
  } else if (home != nullptr) {
    file = std::filesystem::path(home) / ".config" / "tessera" / "config.yaml";
  }
  std::error_code ec;
  if (!file.empty() && std::filesystem::exists(file, ec)) {
    try {
      YAML::Node doc = YAML::LoadFile(file.string());
      if (!doc.IsMap() && !doc.IsNull()) {
        return InvalidArgument(file.string() + ": expected a mapping {server, token}");
      }
      for (const auto& kv : doc) {
        std::string key = kv.first.as<std::string>();
        std::string where = file.string() + ":" + std::to_string(kv.first.Mark().line + 1);
        if (!kv.second.IsScalar())
          return InvalidArgument(where + ": " + key + ": expected a string");
        if (key == "server") {
          file_server = kv.second.Scalar();
        } else if (key == "token") {
          file_token = kv.second.Scalar();
        } else if (key == "caCert") {
          file_ca = kv.second.Scalar();
        } else {
          return InvalidArgument(where + ": unknown field \"" + key +
                                 "\"; expected server, token or caCert");
        }
      }
    } catch (const YAML::Exception& e) {
      return InvalidArgument(file.string() + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
  }
  auto pick = [](const std::string& flag, const char* env, const std::string& from_file) {
    if (!flag.empty()) return flag;
    if (const char* v = std::getenv(env); v != nullptr && *v != '\0') return std::string(v);
    return from_file;
  };
  c.server = pick(server_flag, "TESSERA_SERVER", file_server);
  if (c.server.empty()) c.server = "http://127.0.0.1:7400";
  c.token = pick(token_flag, "TESSERA_TOKEN", file_token);
  c.ca_cert = pick(ca_flag, "TESSERA_CA_CERT", file_ca);
  if (auto servers = ServerList::Parse(c.server, "server"); !servers.ok()) return servers.status();
  return c;
}

namespace {

// One call to one daemon.
HttpReply CallOne(const ClientConfig& c, const std::string& server, const std::string& method,
                  const std::string& path, const std::string& body,
                  const std::vector<std::pair<std::string, std::string>>& headers) {
  httplib::Client client(server);
  client.set_connection_timeout(5);
  client.set_tcp_nodelay(true);
  if (!c.ca_cert.empty()) client.set_ca_cert_path(c.ca_cert);
  client.set_read_timeout(30);
  httplib::Headers h;
  if (!c.token.empty()) h.emplace("Authorization", "Bearer " + c.token);
  for (const auto& [k, v] : headers)
    h.emplace(k, v);
  httplib::Result r = method == "POST"     ? client.Post(path, h, body, "application/json")
                      : method == "DELETE" ? client.Delete(path, h)
                                           : client.Get(path, h);
  HttpReply out;
  if (!r) {
    out.error = httplib::to_string(r.error());
    return out;
  }
  out.status = r->status;
  out.body = json::parse(r->body, nullptr, false);
  if (out.body.is_discarded()) out.body = json{{"message", r->body}};
  return out;
}

// The daemon this process reached last, for each list of daemons it was given.
std::mutex servers_mu;
std::map<std::string, std::shared_ptr<ServerList>>& KnownServers() {
  static std::map<std::string, std::shared_ptr<ServerList>> known;
  return known;
}

std::shared_ptr<ServerList> ServersOf(const std::string& list) {
  std::lock_guard<std::mutex> lock(servers_mu);
  auto& known = KnownServers();
  if (auto it = known.find(list); it != known.end()) return it->second;
  auto parsed = ServerList::Parse(list, "server");
  if (!parsed.ok()) return nullptr;
  return known[list] = std::make_shared<ServerList>(*parsed);
}

}  // namespace

HttpReply Call(const ClientConfig& c, const std::string& method, const std::string& path,
               const std::string& body,
               const std::vector<std::pair<std::string, std::string>>& headers) {
  std::shared_ptr<ServerList> servers = ServersOf(c.server);
  if (!servers) return CallOne(c, c.server, method, path, body, headers);  // says what is wrong
  // Several daemons: from the one reached last, on to the leader a standby names (a 307 or a
  // 503 with `leader`), or to the next when one cannot be reached or does not lead. A call
  // that may have been taken before its answer was lost is safe to send again: submissions
  // carry an Idempotency-Key.
  std::string server = servers->Current();
  HttpReply r;
  for (size_t tries = 0; tries < servers->size() + 2; ++tries) {
    r = CallOne(c, server, method, path, body, headers);
    const std::string leader = r.body.is_object() ? Str(r.body, "leader") : "";
    const bool elsewhere = r.status == 0 || r.status == 503 || (r.status == 307 && !leader.empty());
    if (!elsewhere || (servers->size() == 1 && leader.empty())) break;
    std::string next = servers->Failed(server, leader);
    if (next == server) break;
    server = next;
  }
  return r;
}

int ReportFailure(const HttpReply& r, std::ostream& err) {
  if (r.status == 0) {
    err << "error: cannot reach the server: " << r.error << "\n";
    return kExitUnavailable;
  }
  // Read as text whatever the server answered (a proxy's error page may not be ours).
  std::string message = Str(r.body, "message");
  std::string field = Str(r.body, "field");
  err << "error (" << r.status << "): " << message;
  if (!field.empty() && message.find(field) == std::string::npos) err << " [field " << field << "]";
  err << "\n";
  if (r.status == 401 || r.status == 403) return kExitDenied;
  if (r.status == 404) return kExitNotFound;
  if (r.status >= 500) return r.status == 503 ? kExitUnavailable : kExitFailure;
  return kExitInvalidInput;
}

}  // namespace tessera::cli
