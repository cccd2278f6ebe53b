#include "server/api.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <variant>

#include "common/check.h"
#include "config/loader.h"
#include "model/job.h"
#include "server/api_views.h"
#include "server/openapi.h"

namespace tessera {

using json = nlohmann::ordered_json;

namespace {

int HttpStatus(StatusCode c) {
  switch (c) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

std::string ErrorCode(int http) {
  switch (http) {
    case 400:
      return "invalid_argument";
    case 401:
      return "unauthenticated";
    case 403:
      return "permission_denied";
    case 404:
      return "not_found";
    case 405:
      return "method_not_allowed";
    case 409:
      return "conflict";
    case 413:
      return "payload_too_large";
    case 415:
      return "unsupported_media_type";
    case 503:
      return "unavailable";
    default:
      return http >= 500 ? "internal" : "bad_request";
  }
}

// The route of a path, as /metrics labels it: names and ids become placeholders, so the
// label's values stay few.
std::string RouteOf(const std::string& path) {
  static const std::vector<std::pair<std::string, std::string>> kPrefixes = {
      {"/v1/jobs/", "/v1/jobs/{job}"},
      {"/v1/services/", "/v1/services/{service}"},
      {"/v1/principals/", "/v1/principals/{name}"},
      {"/v1/nodes/", "/v1/nodes/{node}"},
      {"/v1/agents/", "/v1/agents/{node}"},
  };
  for (const auto& [prefix, route] : kPrefixes) {
    if (path.rfind(prefix, 0) != 0) continue;
    size_t slash = path.find('/', prefix.size());
    return slash == std::string::npos ? route : route + path.substr(slash);
  }
  static const std::set<std::string> kKnown = {"/healthz",
                                               "/readyz",
                                               "/metrics",
                                               "/openapi.json",
                                               "/v1/jobs",
                                               "/v1/audit",
                                               "/v1/principals",
                                               "/v1/whoami",
                                               "/v1/regions",
                                               "/v1/clusters",
                                               "/v1/nodes",
                                               "/v1/tenants",
                                               "/v1/costs",
                                               "/v1/policies/validate",
                                               "/v1/policies/reload",
                                               "/v1/services",
                                               "/v1/decisions"};
  return kKnown.count(path) ? path : "other";
}

void SendJson(HttpResponse& res, int status, const json& body) {
  res.status = status;
  res.SetContent(body.dump() + "\n", "application/json");
}

void SendError(HttpResponse& res, int status, const std::string& message,
               const std::string& field = "") {
  json e = {{"code", ErrorCode(status)}, {"message", message}};
  if (!field.empty()) e["field"] = field;
  SendJson(res, status, e);
}

// The error's own field (Status::field) unless the caller names one.
void SendStatus(HttpResponse& res, const Status& s, const std::string& field = "") {
  SendError(res, HttpStatus(s.code()), s.message(), field.empty() ? s.field() : field);
}

// A non-negative integer query parameter; `fallback` when absent.
Result<int64_t> IntParam(const HttpRequest& req, const char* name, int64_t fallback) {
  if (!req.HasParam(name)) return fallback;
  std::string v = req.Param(name);
  int64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p != v.data() + v.size() || out < 0) {
    return InvalidArgument(std::string("query parameter \"") + name +
                           "\" must be a non-negative integer, got \"" + v + "\"");
  }
  return out;
}

}  // namespace

class Api {
 public:
  Api(Daemon& d, const ApiOptions& o) : d_(d), options_(o) {}

  // The error shape, the metrics and request log of every request, then the route table.
  void Install(HttpServer& s) {
    s.SetErrorHandler([](const HttpRequest&, HttpResponse& res, const std::string& message) {
      SendError(res, res.status, message);
    });
    s.SetExceptionHandler([](const HttpRequest&, HttpResponse& res, std::exception_ptr ep) {
      std::string what = "internal error";
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = std::string("internal error: ") + e.what();
      } catch (...) {
      }
      SendError(res, 500, what);
    });
    s.SetLogger([this](const HttpRequest& req, const HttpResponse& res) { Log(req, res); });
    for (const Route& r : Routes())
      Add(s, r);
  }

 private:
  // The three kinds of handler: open to anyone (health, metrics); reading, for an
  // authenticated caller; changing something, for an authenticated caller and audited (the
  // handler answers and returns the audit record's detail).
  using Open = void (Api::*)(const HttpRequest&, HttpResponse&);
  using Read = void (Api::*)(const Caller&, const HttpRequest&, HttpResponse&);
  using Change = std::string (Api::*)(const Caller&, const HttpRequest&, HttpResponse&);
  struct Route {
    const char* method;   // GET, POST or DELETE
    const char* pattern;  // the path, a regular expression whose groups are req.matches
    std::variant<Open, Read, Change> handler;
  };

  // Every route of the API (docs/api.md), in the order the server tries them.
  static const std::vector<Route>& Routes() {
    static const std::vector<Route> kRoutes = {
        {"GET", "/metrics", Open{&Api::Metrics}},
        {"GET", "/openapi.json", Open{&Api::OpenApi}},
        {"GET", "/healthz", Open{&Api::Healthz}},
        {"GET", "/readyz", Open{&Api::Readyz}},
        {"GET", "/v1/whoami", Read{&Api::WhoAmI}},
        {"POST", "/v1/jobs", Change{&Api::SubmitJob}},
        {"GET", "/v1/jobs", Read{&Api::ListJobs}},
        {"GET", R"(/v1/jobs/([^/]+))", Read{&Api::GetJob}},
        {"GET", R"(/v1/jobs/([^/]+)/explain)", Read{&Api::ExplainJob}},
        {"GET", R"(/v1/jobs/([^/]+)/events)", Read{&Api::JobEvents}},
        {"POST", R"(/v1/jobs/([^/]+)/cancel)", Change{&Api::CancelJob}},
        {"GET", R"(/v1/jobs/([^/]+)/logs)", Read{&Api::TaskLog}},
        // Node agents' heartbeats are not audited (one every few seconds per node); the nodes
        // they bring into service and lose are in the decision log's requeues and the fleet
        // view.
        {"POST", R"(/v1/agents/([^/]+)/sync)", Read{&Api::AgentSync}},
        {"POST", "/v1/services", Change{&Api::SubmitService}},
        {"GET", "/v1/services", Read{&Api::ListServices}},
        {"GET", R"(/v1/services/([^/]+))", Read{&Api::GetService}},
        {"DELETE", R"(/v1/services/([^/]+))", Change{&Api::DeleteService}},
        {"POST", R"(/v1/services/([^/]+)/load)", Change{&Api::ReportLoad}},
        {"GET", "/v1/tenants", Read{&Api::Tenants}},
        {"GET", "/v1/costs", Read{&Api::Costs}},
        {"GET", "/v1/regions", Read{&Api::Regions}},
        {"GET", "/v1/clusters", Read{&Api::Clusters}},
        {"GET", "/v1/nodes", Read{&Api::ListNodes}},
        {"GET", R"(/v1/nodes/([^/]+))", Read{&Api::GetNode}},
        {"POST", R"(/v1/nodes/([^/]+)/(cordon|drain|uncordon))", Change{&Api::HoldNode}},
        {"POST", "/v1/policies/validate", Change{&Api::ValidatePolicies}},
        {"POST", "/v1/policies/reload", Change{&Api::ReloadPolicies}},
        {"GET", "/v1/decisions", Read{&Api::Decisions}},
        {"GET", "/v1/audit", Read{&Api::Audit}},
        {"POST", "/v1/principals", Change{&Api::PutPrincipal}},
        {"GET", "/v1/principals", Read{&Api::ListPrincipals}},
        {"DELETE", R"(/v1/principals/([^/]+))", Change{&Api::DeletePrincipal}},
        {"DELETE", R"(/v1/principals/([^/]+)/tokens)", Change{&Api::RevokeTokens}},
        {"POST", R"(/v1/principals/([^/]+)/tokens)", Change{&Api::IssueToken}},
    };
    return kRoutes;
  }

  void Add(HttpServer& s, const Route& r) {
    HttpServer::Handler h;
    if (const Open* open = std::get_if<Open>(&r.handler)) {
      h = [this, f = *open](const HttpRequest& req, HttpResponse& res) { (this->*f)(req, res); };
    } else if (const Read* read = std::get_if<Read>(&r.handler)) {
      h = [this, f = *read](const HttpRequest& req, HttpResponse& res) {
        if (auto caller = Authenticate(req, res)) (this->*f)(*caller, req, res);
      };
    } else {
      h = [this, f = std::get<Change>(r.handler)](const HttpRequest& req, HttpResponse& res) {
        Mutating(req, res, [&](const Caller& c) { return (this->*f)(c, req, res); });
      };
    }
    const std::string method = r.method;
    if (method != "GET") {
      // A daemon that does not lead its store changes nothing: the client goes to the leader.
      h = [this, inner = std::move(h)](const HttpRequest& req, HttpResponse& res) {
        if (std::string why = d_.NotLeading(); !why.empty()) {
          res.SetHeader("Retry-After", "1");
          SendError(res, 503, "this daemon does not lead the store now: " + why);
          return;
        }
        inner(req, res);
      };
    }
    if (method == "GET") {
      s.Get(r.pattern, std::move(h));
    } else if (method == "POST") {
      s.Post(r.pattern, std::move(h));
    } else {
      CHECK(method == "DELETE") << "route " << r.pattern << ": method " << method;
      s.Delete(r.pattern, std::move(h));
    }
  }

  // Every request's metrics, and its line in the request log.
  void Log(const HttpRequest& req, const HttpResponse& res) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - req.received).count();
    const std::string route = RouteOf(req.path);
    d_.metrics().ObserveRequest(route, req.method, res.status, seconds);
    if (options_.request_log) {
      options_.request_log({{"method", req.method},
                            {"path", req.path},
                            {"route", route},
                            {"status", res.status},
                            {"ms", std::round(seconds * 1e5) / 100},
                            {"remote", req.remote_addr}});
    }
  }

  std::optional<Caller> Authenticate(const HttpRequest& req, HttpResponse& res) {
    auto caller = d_.auth().Authenticate(req.Header("Authorization"), d_.clock().Now());
    if (!caller.ok()) {
      res.SetHeader("WWW-Authenticate", "Bearer");
      SendStatus(res, caller.status());
      return std::nullopt;
    }
    return *caller;
  }

  // Authenticates, runs `act` (which answers and returns a line for the audit log), then
  // records the call in the audit log, durably, before the answer leaves.
  template <typename Act>
  void Mutating(const HttpRequest& req, HttpResponse& res, Act&& act) {
    auto caller = d_.auth().Authenticate(req.Header("Authorization"), d_.clock().Now());
    std::string who = caller.ok() ? caller->name : "";
    std::string detail;
    if (!caller.ok()) {
      res.SetHeader("WWW-Authenticate", "Bearer");
      SendStatus(res, caller.status());
      detail = caller.status().message();
    } else {
      detail = act(*caller);
    }
    AuditEntry a{0,          d_.clock().Now(), who,        req.remote_addr,
                 req.method, req.path,         res.status, detail};
    d_.store().AppendAudit(std::move(a));
  }

  // A changing call's answer: the value as JSON with `status`, and `detail` for the audit
  // log; or the error (its message, at most 500 characters, for the audit log).
  template <typename T>
  static std::string Answer(HttpResponse& res, const Result<T>& out, int status,
                            const std::string& detail) {
    if (!out.ok()) {
      SendStatus(res, out.status());
      return out.status().message().substr(0, 500);
    }
    SendJson(res, status, ToJson(*out));
    return detail;
  }

  // --- open to anyone ---

  void Metrics(const HttpRequest&, HttpResponse& res) {
    res.SetContent(d_.metrics().Render(d_.Gauges()), "text/plain; version=0.0.4");
  }

  void OpenApi(const HttpRequest&, HttpResponse& res) {
    res.SetContent(OpenApiJson(), "application/json");
  }

  void Healthz(const HttpRequest&, HttpResponse& res) { SendJson(res, 200, {{"status", "ok"}}); }

  void Readyz(const HttpRequest&, HttpResponse& res) {
    if (std::string why = d_.NotLeading(); !why.empty()) {
      SendJson(res, 503, {{"status", "not-leading"}, {"reason", why}});
      return;
    }
    Daemon::Counts c = d_.counts();
    SendJson(res, 200,
             {{"status", "ready"},
              {"jobs", c.total},
              {"pending", c.pending},
              {"running", c.running},
              {"store_degraded", d_.store().degraded()}});
  }

  // --- jobs ---

  void WhoAmI(const Caller& caller, const HttpRequest&, HttpResponse& res) {
    json out = {{"name", caller.name}, {"role", std::string(RoleName(caller.role))}};
    if (!caller.tenant.empty()) out["tenant"] = caller.tenant;
    SendJson(res, 200, out);
  }

  std::string SubmitJob(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    std::string key = req.Header("Idempotency-Key");
    if (key.size() > 255) {
      SendError(res, 400, "the Idempotency-Key header is longer than 255 characters");
      return "bad idempotency key";
    }
    auto out = d_.Submit(c, req.body, key);
    if (!out.ok()) {
      SendStatus(res, out.status());
      return out.status().message().substr(0, 500);
    }
    if (out->replayed) res.SetHeader("Idempotent-Replayed", "true");
    res.SetHeader("Location", "/v1/jobs/" + std::to_string(out->job.id));
    SendJson(res, out->replayed ? 200 : 201, ToJson(out->job, false));
    return "job " + std::to_string(out->job.id) + " " + out->job.name;
  }

  void ListJobs(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    JobFilter f;
    auto after = IntParam(req, "after", 0);
    auto limit = IntParam(req, "limit", 100);
    if (!after.ok()) return SendStatus(res, after.status());
    if (!limit.ok()) return SendStatus(res, limit.status());
    f.after = *after;
    f.limit = static_cast<int>(std::min<int64_t>(*limit, 1000));
    f.tenant = req.Param("tenant");
    f.state = req.Param("state");
    f.job_class = req.Param("class");
    f.name = req.Param("name");
    JobPage page = d_.ListJobs(c, f);
    json items = json::array();
    for (const StoredJob& j : page.jobs)
      items.push_back(ToJson(j, false));
    json out = {{"items", items}, {"total", page.total}};
    out["next"] = page.next != 0 ? json(page.next) : json(nullptr);
    SendJson(res, 200, out);
  }

  void GetJob(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    auto job = d_.GetJob(caller, req.matches[1], req.Param("tenant"));
    if (!job.ok()) return SendStatus(res, job.status());
    SendJson(res, 200, ToJson(*job, true));
  }

  void ExplainJob(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    auto out = d_.Explain(caller, req.matches[1], req.Param("tenant"));
    if (!out.ok()) return SendStatus(res, out.status());
    SendJson(res, 200, ToJson(*out));
  }

  void JobEvents(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    auto out = d_.Explain(caller, req.matches[1], req.Param("tenant"));
    if (!out.ok()) return SendStatus(res, out.status());
    SendJson(res, 200, {{"events", ToJson(*out)["decisions"]}});
  }

  std::string CancelJob(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    auto job = d_.Cancel(c, req.matches[1], req.Param("tenant"));
    if (!job.ok()) {
      SendStatus(res, job.status());
      return job.status().message();
    }
    SendJson(res, 202, {{"id", job->id}, {"name", job->name}, {"cancelling", true}});
    return "job " + std::to_string(job->id);
  }

  void TaskLog(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    auto task = IntParam(req, "task", 0);
    if (!task.ok()) return SendStatus(res, task.status(), "task");
    auto run = IntParam(req, "run", -1);
    if (!run.ok()) return SendStatus(res, run.status(), "run");
    if (*task > 100000 || *run > 1000000) return SendError(res, 400, "task or run out of range");
    std::optional<int> which;
    if (*run >= 0) which = static_cast<int>(*run);
    auto out =
        d_.TaskLog(caller, req.matches[1], req.Param("tenant"), static_cast<int>(*task), which);
    if (!out.ok()) return SendStatus(res, out.status());
    SendJson(res, 200, ToJson(*out));
  }

  void AgentSync(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    auto out = d_.AgentSync(caller, req.matches[1], req.body);
    if (!out.ok()) return SendStatus(res, out.status());
    res.status = 200;
    res.SetContent(*out + "\n", "application/json");
  }

  // --- services ---

  std::string SubmitService(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    auto out = d_.SubmitService(c, req.body);
    if (!out.ok()) {
      SendStatus(res, out.status());
      return out.status().message().substr(0, 500);
    }
    if (out->replayed) res.SetHeader("Idempotent-Replayed", "true");
    const std::string& name = out->service.name;
    res.SetHeader("Location", "/v1/services/" + name);
    SendJson(res, out->replayed ? 200 : 201, ToJson(out->service));
    return "service " + name;
  }

  void ListServices(const Caller& caller, const HttpRequest&, HttpResponse& res) {
    SendJson(res, 200, {{"items", ToJsonArray(d_.ListServices(caller))}});
  }

  void GetService(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    auto out = d_.GetService(caller, req.matches[1]);
    if (!out.ok()) return SendStatus(res, out.status());
    SendJson(res, 200, ToJson(*out));
  }

  std::string DeleteService(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    return Answer(res, d_.DeleteService(c, req.matches[1]), 200,
                  "service " + std::string(req.matches[1]));
  }

  std::string ReportLoad(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    return Answer(res, d_.ReportLoad(c, req.matches[1], req.body), 200,
                  "service " + std::string(req.matches[1]) + " load");
  }

  // --- tenants, costs and the fleet ---

  void Tenants(const Caller& caller, const HttpRequest&, HttpResponse& res) {
    SendJson(res, 200, {{"items", ToJsonArray(d_.Tenants(caller))}});
  }

  void Costs(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    TimeMs now = d_.clock().Now();
    auto since = IntParam(req, "since_ms", 0);
    auto until = IntParam(req, "until_ms", now);
    if (!since.ok()) return SendStatus(res, since.status(), "since_ms");
    if (!until.ok()) return SendStatus(res, until.status(), "until_ms");
    std::string by = req.HasParam("by") ? req.Param("by") : "tenant";
    auto out = d_.Costs(caller, by, *since, *until);
    if (!out.ok()) return SendStatus(res, out.status(), "by");
    SendJson(res, 200, ToJson(*out));
  }

  void Regions(const Caller&, const HttpRequest&, HttpResponse& res) {
    std::shared_ptr<const Spec> in_force = d_.spec();
    const Spec& spec = *in_force;
    json items = json::array();
    for (size_t r = 0; r < spec.regions.size(); ++r) {
      json clusters = json::array();
      for (const Cluster& c : spec.clusters)
        if (c.region.value() == r) clusters.push_back(c.name);
      items.push_back({{"name", spec.regions[r].name}, {"clusters", clusters}});
    }
    SendJson(res, 200, {{"items", items}});
  }

  void Clusters(const Caller&, const HttpRequest&, HttpResponse& res) {
    SendJson(res, 200, {{"items", ToJsonArray(d_.Clusters())}});
  }

  void ListNodes(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    auto after = IntParam(req, "after", 0);
    auto limit = IntParam(req, "limit", 100);
    if (!after.ok()) return SendStatus(res, after.status());
    if (!limit.ok()) return SendStatus(res, limit.status());
    NodePage page = d_.ListNodes(caller, req.Param("cluster"), *after,
                                 static_cast<int>(std::clamp<int64_t>(*limit, 1, 1000)));
    json out = {{"items", ToJsonArray(page.items)}};
    if (page.next != 0) out["next"] = page.next;
    SendJson(res, 200, out);
  }

  void GetNode(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    auto node = d_.GetNode(caller, req.matches[1]);
    if (!node.ok()) return SendStatus(res, node.status());
    SendJson(res, 200, ToJson(*node));
  }

  std::string HoldNode(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    std::string action = req.matches[2];
    auto node = d_.HoldNode(c, req.matches[1], action);
    if (!node.ok()) {
      SendStatus(res, node.status());
      return node.status().message();
    }
    SendJson(res, 200, ToJson(*node));
    return action + " " + std::string(req.matches[1]);
  }

  // --- the configuration ---

  std::string ValidatePolicies(const Caller& c, const HttpRequest&, HttpResponse& res) {
    return Policies(c, res, /*apply=*/false);
  }

  std::string ReloadPolicies(const Caller& c, const HttpRequest&, HttpResponse& res) {
    return Policies(c, res, /*apply=*/true);
  }

  std::string Policies(const Caller& c, HttpResponse& res, bool apply) {
    auto report = d_.Reload(c, apply);
    if (!report.ok()) {
      SendStatus(res, report.status());
      return report.status().message();
    }
    const json out = ToJson(*report);
    const bool ok = report->ok;
    if (!ok && apply) {
      // Nothing changed: the configuration in force stays.
      const json& first = out["errors"][0];
      json e = {{"code", "invalid_argument"},
                {"message", first["file"].get<std::string>() + ":" +
                                std::to_string(first["line"].get<int>()) + ": " +
                                first["message"].get<std::string>()},
                {"field", first["field"]},
                {"errors", out["errors"]}};
      SendJson(res, 400, e);
      return "refused: " + e["message"].get<std::string>();
    }
    SendJson(res, 200, out);
    return ok ? (apply ? "reloaded" : "valid") : "invalid";
  }

  // --- the logs ---

  void Decisions(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    DecisionQuery q;
    auto after = IntParam(req, "after", 0);
    auto limit = IntParam(req, "limit", 100);
    auto since = IntParam(req, "since_ms", 0);
    if (!after.ok()) return SendStatus(res, after.status(), "after");
    if (!limit.ok()) return SendStatus(res, limit.status(), "limit");
    if (!since.ok()) return SendStatus(res, since.status(), "since_ms");
    q.after = *after;
    q.limit = static_cast<int>(std::clamp<int64_t>(*limit, 1, 1000));
    q.since = *since;
    q.kind = req.Param("kind");
    static const std::set<std::string> kKinds = {"",        "start",  "preempt", "requeue",
                                                 "migrate", "grow",   "shrink",  "finish",
                                                 "fail",    "cancel", "idle"};
    if (!kKinds.count(q.kind)) {
      return SendError(res, 400,
                       "kind must be one of start, preempt, requeue, migrate, grow, shrink, "
                       "finish, fail, cancel, idle; got \"" +
                           q.kind + "\"",
                       "kind");
    }
    auto out = d_.Decisions(caller, q);
    if (!out.ok()) return SendStatus(res, out.status());
    SendJson(res, 200, ToJson(*out));
  }

  void Audit(const Caller& caller, const HttpRequest& req, HttpResponse& res) {
    if (caller.role != Role::kAdmin && caller.role != Role::kOperator) {
      return SendError(res, 403, "only admins and operators read the audit log");
    }
    AuditQuery q;
    auto after = IntParam(req, "after", 0);
    auto limit = IntParam(req, "limit", 100);
    auto since = IntParam(req, "since_ms", 0);
    for (const auto* r : {&after, &limit, &since})
      if (!r->ok()) return SendStatus(res, r->status());
    q.after = *after;
    q.limit = static_cast<int>(std::clamp<int64_t>(*limit, 1, 1000));
    q.since = *since;
    q.principal = req.Param("principal");
    // Audit records are committed as the writer gets to them; read after everything queued.
    if (Status flushed = d_.store().Flush().get(); !flushed.ok()) {
      return SendStatus(res, flushed);
    }
    auto rows = d_.store().QueryAudit(q);
    if (!rows.ok()) return SendStatus(res, rows.status());
    json items = json::array();
    for (const AuditEntry& a : *rows) {
      items.push_back({{"seq", a.seq},
                       {"time_ms", a.time},
                       {"principal", a.principal},
                       {"remote", a.remote},
                       {"method", a.method},
                       {"path", a.path},
                       {"status", a.status},
                       {"detail", a.detail}});
    }
    auto total = d_.store().CountAudit(q);
    if (!total.ok()) return SendStatus(res, total.status());
    // Newest first; `next` is the cursor of the older page, when there may be one.
    json out = {{"items", items}, {"total", *total}};
    out["next"] = static_cast<int>(rows->size()) == q.limit && !rows->empty()
                      ? json(rows->back().seq)
                      : json(nullptr);
    SendJson(res, 200, out);
  }

  // --- principals and tokens ---

  std::string PutPrincipal(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    auto body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      SendError(res, 400, "the body must be a JSON object {name, role, tenant, node}");
      return "bad body";
    }
    for (const auto& [k, v] : body.items()) {
      if (k != "name" && k != "role" && k != "tenant" && k != "node") {
        SendError(res, 400, "unknown field \"" + k + "\"", k);
        return "bad body";
      }
      if (!v.is_string()) {
        SendError(res, 400, "\"" + k + "\" must be a string", k);
        return "bad body";
      }
    }
    Principal p{body.value("name", ""), body.value("role", ""), body.value("tenant", ""), 0,
                body.value("node", "")};
    if (p.name.empty() || p.name.size() > 63 ||
        p.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_.@") != std::string::npos) {
      SendError(res, 400, "\"name\" must be 1-63 of a-z 0-9 - _ . @", "name");
      return "bad name";
    }
    if (Status st = d_.PutPrincipal(c, p); !st.ok()) {
      SendStatus(res, st);
      return st.message();
    }
    SendJson(res, 201,
             {{"name", p.name}, {"role", p.role}, {"tenant", p.tenant}, {"node", p.node}});
    return "principal " + p.name + " (" + p.role + ")";
  }

  void ListPrincipals(const Caller& caller, const HttpRequest&, HttpResponse& res) {
    if (caller.role != Role::kAdmin) return SendError(res, 403, "only admins list principals");
    json items = json::array();
    for (const Principal& p : d_.auth().Principals())
      items.push_back({{"name", p.name}, {"role", p.role}, {"tenant", p.tenant}, {"node", p.node}});
    SendJson(res, 200, {{"items", items}});
  }

  std::string DeletePrincipal(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    const std::string name = req.matches[1];
    if (Status done = d_.DeletePrincipal(c, name); !done.ok()) {
      SendStatus(res, done);
      return done.message();
    }
    SendJson(res, 200, {{"name", name}, {"deleted", true}});
    return "deleted principal " + name;
  }

  std::string RevokeTokens(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    auto n = d_.RevokeTokens(c, req.matches[1]);
    if (!n.ok()) {
      SendStatus(res, n.status());
      return n.status().message();
    }
    SendJson(res, 200, {{"principal", std::string(req.matches[1])}, {"revoked", *n}});
    return "revoked " + std::to_string(*n) + " token(s) of " + std::string(req.matches[1]);
  }

  std::string IssueToken(const Caller& c, const HttpRequest& req, HttpResponse& res) {
    auto body = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
      SendError(res, 400, "the body must be a JSON object {expires_in_s}");
      return "bad body";
    }
    std::optional<TimeMs> expires;
    for (const auto& [k, v] : body.items()) {
      if (k != "expires_in_s" || !v.is_number_integer() || v.get<int64_t>() <= 0) {
        SendError(res, 400, "the only field is \"expires_in_s\", a positive integer", k);
        return "bad body";
      }
      expires = d_.clock().Now() + v.get<int64_t>() * 1000;
    }
    auto token = d_.IssueToken(c, req.matches[1], expires);
    if (!token.ok()) {
      SendStatus(res, token.status());
      return token.status().message();
    }
    json out = {{"principal", std::string(req.matches[1])}, {"token", *token}};
    out["expires_ms"] = expires ? json(*expires) : json(nullptr);
    SendJson(res, 201, out);
    return "token for " + std::string(req.matches[1]);
  }

  Daemon& d_;
  ApiOptions options_;
};

HttpServerOptions ApiServerOptions() {
  HttpServerOptions o;
  o.max_body_bytes = 1 << 20;
  o.workers = 128;
  o.nice = 10;
  // The I/O thread too, below the engine's thread as the workers are: at nice 0 it gave the
  // same paced p99s at 2,000/s (22-32 ms against 23-34, 3 runs each, 2026-12-05).
  o.io_nice = 10;
  return o;
}

std::shared_ptr<Api> InstallApi(HttpServer& server, Daemon& daemon, const ApiOptions& options) {
  auto api = std::make_shared<Api>(daemon, options);
  api->Install(server);
  return api;
}

}  // namespace tessera
