// Helpers of the daemon's end-to-end tests: a scratch directory, an HTTP client with a bearer
// token, JSON bodies, and principals with tokens.
#pragma once

#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tessera::testing {

inline std::filesystem::path FreshDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tessera-serve-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

struct Http {
  httplib::Client client;
  std::string token;
  explicit Http(const std::string& url, std::string t = "") : client(url), token(std::move(t)) {
    client.set_read_timeout(30);
  }
  httplib::Headers Headers(std::vector<std::pair<std::string, std::string>> extra = {}) const {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    for (auto& [k, v] : extra)
      h.emplace(k, v);
    return h;
  }
  httplib::Result Get(const std::string& path) { return client.Get(path, Headers()); }
  httplib::Result Post(const std::string& path, const std::string& body,
                       std::vector<std::pair<std::string, std::string>> extra = {}) {
    return client.Post(path, Headers(std::move(extra)), body, "application/json");
  }
  httplib::Result Delete(const std::string& path) { return client.Delete(path, Headers()); }
};

inline nlohmann::json Body(const httplib::Result& r) {
  return r ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
}

// Creates principal `name` (role, tenant) as `admin` and returns a new token of it; "" when
// either call fails.
inline std::string TokenOf(Http& admin, const std::string& name, const std::string& role,
                           const std::string& tenant) {
  nlohmann::json p = {{"name", name}, {"role", role}};
  if (!tenant.empty()) p["tenant"] = tenant;
  auto r = admin.Post("/v1/principals", p.dump());
  if (!r || r->status != 201) return "";
  r = admin.Post("/v1/principals/" + name + "/tokens", "{}");
  if (!r || r->status != 201) return "";
  return Body(r)["token"].get<std::string>();
}

// The token of node `node`'s agent: principal "agent-NODE", role agent, bound to that node
// (every agent credential is); "" when a call fails.
inline std::string AgentTokenOf(Http& admin, const std::string& node) {
  nlohmann::json p = {{"name", "agent-" + node}, {"role", "agent"}, {"node", node}};
  auto r = admin.Post("/v1/principals", p.dump());
  if (!r || r->status != 201) return "";
  r = admin.Post("/v1/principals/agent-" + node + "/tokens", "{}");
  if (!r || r->status != 201) return "";
  return Body(r)["token"].get<std::string>();
}

}  // namespace tessera::testing
