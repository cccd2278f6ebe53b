#include "cli/client.h"

#include <httplib.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "cli/app.h"
#include "cli/client_common.h"

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
  if (c.server.rfind("http://", 0) != 0 && c.server.rfind("https://", 0) != 0) {
    return InvalidArgument("server \"" + c.server + "\": expected http://HOST:PORT or https://");
  }
  return c;
}

HttpReply Call(const ClientConfig& c, const std::string& method, const std::string& path,
               const std::string& body,
               const std::vector<std::pair<std::string, std::string>>& headers) {
  httplib::Client client(c.server);
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
