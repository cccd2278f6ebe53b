#include "server/standby_api.h"

#include <cctype>
#include <nlohmann/json.hpp>

namespace tessera {

namespace {

void SendStandbyJson(HttpResponse& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.SetContent(body.dump() + "\n", "application/json");
}

// Unreserved characters (RFC 3986) and '/' stay; every other byte is %XX.
void AppendEncoded(std::string& out, const std::string& s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
}

void Refuse(const StandbyLeader& leader, HttpResponse& res) {
  std::string message = "this daemon is a standby: ";
  if (leader.name.empty()) {
    message += "no daemon leads the store now (a standby takes over within the lease)";
  } else {
    message += leader.name + " leads the store";
    if (!leader.url.empty()) message += " at " + leader.url;
  }
  nlohmann::json body = {{"code", "unavailable"}, {"message", message}};
  if (!leader.url.empty()) body["leader"] = leader.url;
  res.SetHeader("Retry-After", "1");
  SendStandbyJson(res, 503, body);
}

}  // namespace

std::string TargetOf(const HttpRequest& req) {
  std::string target;
  AppendEncoded(target, req.path, /*keep_slash=*/true);
  char sep = '?';
  for (const auto& [k, v] : req.params) {
    target += sep;
    AppendEncoded(target, k, false);
    target += '=';
    AppendEncoded(target, v, false);
    sep = '&';
  }
  return target;
}

void InstallStandbyApi(HttpServer& server, std::function<StandbyLeader()> leader) {
  server.Get("/healthz", [](const HttpRequest&, HttpResponse& res) {
    SendStandbyJson(res, 200, {{"status", "ok"}});
  });
  server.Get("/readyz", [leader](const HttpRequest&, HttpResponse& res) {
    StandbyLeader l = leader();
    SendStandbyJson(
        res, 503,
        {{"status", "standby"}, {"leader", l.name}, {"leader_url", l.url}, {"term", l.term}});
  });
  server.Get(".*", [leader](const HttpRequest& req, HttpResponse& res) {
    StandbyLeader l = leader();
    if (l.url.empty()) return Refuse(l, res);
    res.status = 307;
    res.SetHeader("Location", l.url + TargetOf(req));
    SendStandbyJson(res, 307, {{"leader", l.url}});
  });
  auto refuse = [leader](const HttpRequest&, HttpResponse& res) { Refuse(leader(), res); };
  server.Post(".*", refuse);
  server.Delete(".*", refuse);
}

}  // namespace tessera
