// The daemon's client commands (docs/cli.md): submit, get, describe, explain, cancel, audit,
// principal create, token create. Each is one or a few API calls; tables by default,
// -o json|yaml for the API's own documents.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "cli/app.h"
#include "cli/client.h"
#include "cli/client_common.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "common/file.h"
#include "common/quantity.h"
#include "config/yaml_json.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

std::string Why(const json& job) {
  std::string state = Str(job, "state");
  if (state == "pending") {
    std::string why = Str(job, "reason");
    std::string detail = Str(job, "detail");
    return detail.empty() ? why : why + ": " + detail;
  }
  if (state == "running" && job["placement"].is_array() && !job["placement"].empty()) {
    const json& first = job["placement"][0];
    std::string where = Str(first, "cluster") + "/" + Str(first, "node");
    if (job["placement"].size() > 1) {
      where += " +" + std::to_string(job["placement"].size() - 1) + " tasks";
    }
    return where;
  }
  return "";
}

void JobTable(const json& items, std::ostream& out) {
  Table t({"ID", "NAME", "TENANT", "CLASS", "STATE", "WHY / WHERE"});
  for (const json& j : items) {
    std::string why = Why(j);
    if (why.size() > 90) why = why.substr(0, 87) + "...";
    t.Add({Str(j, "id"), Str(j, "name"), Str(j, "tenant"), Str(j, "class"), Str(j, "state"), why});
  }
  t.Write(out);
}

// What a file submits: one job mapping, or a document with a `jobs:` list, a `services:`
// list, or both.
struct Work {
  std::vector<json> jobs, services;
};

Result<Work> WorkOf(const std::string& path) {
  Result<std::string> text = ReadFileBounded(path, 16 << 20);
  if (!text.ok()) return text.status();
  YAML::Node doc;
  try {
    doc = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  Work work;
  if (doc.IsMap() && (doc["jobs"] || doc["services"])) {
    for (const auto& kv : doc) {
      std::string key = kv.first.Scalar();
      if (key != "jobs" && key != "services") {
        return InvalidArgument(path + ":" + std::to_string(kv.first.Mark().line + 1) +
                               ": the daemon takes jobs and services only; \"" + key +
                               "\" belongs in the configuration it serves");
      }
      if (!kv.second.IsSequence()) return InvalidArgument(path + ": " + key + ": expected a list");
      for (const auto& item : kv.second)
        (key == "jobs" ? work.jobs : work.services).push_back(YamlToJson(item));
    }
  } else if (doc.IsMap()) {
    work.jobs.push_back(YamlToJson(doc));
  } else {
    return InvalidArgument(path + ": expected a job (a mapping), or `jobs:` and `services:` lists");
  }
  return work;
}

// POSTs `body`, retrying while the daemon cannot be reached or the store refuses (503): three
// times (1.4 s) for one daemon, for 10 s for several (a standby takes over within seconds).
HttpReply PostRetried(const ClientConfig& cfg, const std::string& path, const json& body,
                      const std::vector<std::pair<std::string, std::string>>& headers) {
  const bool several = cfg.server.find(',') != std::string::npos;
  HttpReply r;
  int waited_ms = 0;
  for (int attempt = 0;; ++attempt) {
    r = Call(cfg, "POST", path, body.dump(), headers);
    if (r.status != 0 && r.status != 503) break;
    const int wait_ms = std::min(200 << attempt, 1600);
    if (several ? waited_ms + wait_ms > 10000 : attempt == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    waited_ms += wait_ms;
  }
  return r;
}

void Submit(const Common& c, const std::string& file, const std::string& key, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  auto work = WorkOf(file);
  if (!work.ok()) {
    x.err << "error: " << work.status().message() << "\n";
    x.code = kExitInvalidInput;
    return;
  }
  const std::vector<json>& jobs = work->jobs;
  // One key per job: a retried `submit` (after a lost answer) never submits twice.
  std::string base = key.empty() ? NewRequestId() : key;
  json results = json::array();
  int worst = kExitOk;
  auto failed = [&](const char* list, size_t i, const json& item, const HttpReply& r) {
    std::string name = item.is_object() ? Str(item, "name") : "";
    x.err << file << ": " << list << "[" << i << "]" << (name.empty() ? "" : " (" + name + ")")
          << ": ";
    worst = std::max(worst, ReportFailure(r, x.err));
  };
  for (size_t i = 0; i < jobs.size(); ++i) {
    std::string k = jobs.size() == 1 ? base : base + "-" + std::to_string(i);
    HttpReply r = PostRetried(*cfg, "/v1/jobs", jobs[i], {{"Idempotency-Key", k}});
    if (r.status != 200 && r.status != 201) {
      failed("jobs", i, jobs[i], r);
      continue;
    }
    results.push_back(r.body);
  }
  // A service's name makes its resubmission a replay: no key needed.
  json services = json::array();
  for (size_t i = 0; i < work->services.size(); ++i) {
    HttpReply r = PostRetried(*cfg, "/v1/services", work->services[i], {});
    if (r.status != 200 && r.status != 201) {
      failed("services", i, work->services[i], r);
      continue;
    }
    services.push_back(r.body);
  }
  json doc = results;
  if (!work->services.empty()) doc = {{"jobs", results}, {"services", services}};
  Print(doc, c.output, x.out, [&] {
    for (const json& j : results)
      x.out << "job " << Str(j, "id") << " " << Str(j, "name") << " submitted (" << Str(j, "tenant")
            << ")\n";
    for (const json& v : services)
      x.out << "service " << Str(v, "name") << " submitted (" << Str(v, "tenant") << ")\n";
  });
  x.code = worst;
}

// Under a newest-first list that does not show everything: "2 of 5 shown, newest first; older:
// --after N" (`next`: the cursor of the older page, null when none).
void ListFooter(int64_t shown, int64_t total, const json& next, std::ostream& out) {
  if (shown >= total && !next.is_number_integer()) return;
  out << Thousands(shown) << " of " << Thousands(total) << " shown, newest first";
  if (next.is_number_integer()) out << "; older: --after " << next.get<int64_t>();
  out << "\n";
}

void GetJobs(const Common& c, const std::map<std::string, std::string>& filters, int limit,
             int64_t after, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  json all = json::array();
  json next = nullptr;
  int64_t total = 0;
  for (;;) {
    std::string q =
        "/v1/jobs?limit=" + std::to_string(std::min(limit - static_cast<int>(all.size()), 1000));
    for (const auto& [k, v] : filters)
      if (!v.empty()) q += "&" + k + "=" + Encode(v);
    if (after != 0) q += "&after=" + std::to_string(after);
    HttpReply r = Call(*cfg, "GET", q);
    if (r.status != 200) {
      x.code = ReportFailure(r, x.err);
      return;
    }
    for (const json& j : r.body["items"])
      all.push_back(j);
    total = r.body.value("total", static_cast<int64_t>(all.size()));
    next = r.body.contains("next") ? r.body["next"] : json(nullptr);
    if (!next.is_number_integer() || static_cast<int>(all.size()) >= limit) break;
    after = next.get<int64_t>();
  }
  // Newest first; what was left out is said, with the cursor that shows it.
  Print(json{{"items", all}, {"total", total}, {"next", next}}, c.output, x.out, [&] {
    JobTable(all, x.out);
    ListFooter(static_cast<int64_t>(all.size()), total, next, x.out);
  });
}

std::string JobPath(const std::string& ref, const std::string& tenant, const std::string& tail) {
  std::string p = "/v1/jobs/" + Encode(ref) + tail;
  if (!tenant.empty()) p += "?tenant=" + Encode(tenant);
  return p;
}

void Describe(const Common& c, const std::string& ref, const std::string& tenant, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "GET", JobPath(ref, tenant, ""));
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  const json& j = r.body;
  Print(j, c.output, x.out, [&] {
    x.out << "Job:        " << Str(j, "id") << " " << Str(j, "name") << "\n"
          << "Tenant:     " << Str(j, "tenant") << "\n"
          << "Class:      " << Str(j, "class") << "\n"
          << "State:      " << Str(j, "state") << "\n"
          << "Submitted:  " << Time(j["submitted_ms"]) << " by " << Str(j, "submitted_by") << "\n"
          << "Started:    " << Time(j["first_start_ms"]) << "\n"
          << "Finished:   " << Time(j["finished_ms"]) << "\n"
          << "Restarts:   " << Str(j, "restarts") << "\n";
    std::string why = Why(j);
    if (!why.empty())
      x.out << (Str(j, "state") == "pending" ? "Pending:    " : "Where:      ") << why << "\n";
    if (j["placement"].is_array() && !j["placement"].empty()) {
      Table t({"TASK", "CLUSTER", "NODE", "MODEL", "DEVICES"});
      size_t i = 0;
      for (const json& p : j["placement"]) {
        std::string devs;
        for (const json& d : p["devices"])
          devs += (devs.empty() ? "" : ",") + Str(d, "index");
        t.Add({std::to_string(i++), Str(p, "cluster"), Str(p, "node"), Str(p, "model"), devs});
      }
      x.out << "Tasks:\n";
      t.Write(x.out, "  ");
    }
  });
}

void Explain(const Common& c, const std::string& ref, const std::string& tenant, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "GET", JobPath(ref, tenant, "/explain"));
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  const json& e = r.body;
  Print(e, c.output, x.out, [&] {
    x.out << "Job " << Str(e, "id") << " " << Str(e, "name") << " (" << Str(e, "tenant") << ") is "
          << Str(e, "state") << "\n";
    if (e.contains("scheduler")) {
      x.out << "Scheduler: " << Str(e["scheduler"], "policy") << ", placement "
            << Str(e["scheduler"], "placement") << "\n";
    }
    if (e.contains("why_pending")) {
      x.out << "Why pending: " << Str(e["why_pending"], "code");
      std::string d = Str(e["why_pending"], "detail");
      if (!d.empty()) x.out << ": " << d;
      x.out << "\n";
    }
    if (e.contains("why_here")) x.out << "Why here: " << Str(e, "why_here") << "\n";
    if (e.contains("deadline")) x.out << "Deadline: " << DeadlineLine(e["deadline"]) << "\n";
    if (!e["decisions"].empty()) {
      Table t({"TIME", "DECISION", "REASON", "NODES", "POLICY"});
      for (const json& d : e["decisions"]) {
        std::string nodes;
        if (d.contains("detail") && d["detail"].contains("nodes")) {
          for (const json& n : d["detail"]["nodes"])
            nodes += (nodes.empty() ? "" : ",") + n.get<std::string>();
        }
        t.Add({Time(d["time_ms"]), Str(d, "kind"), Str(d, "reason"), nodes, DecidedBy(d)});
      }
      x.out << "Decisions:\n";
      t.Write(x.out, "  ");
    }
  });
}

void Cancel(const Common& c, const std::string& ref, const std::string& tenant, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "POST", JobPath(ref, tenant, "/cancel"));
  if (r.status != 202) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out, [&] {
    x.out << "job " << Str(r.body, "id") << " " << Str(r.body, "name") << " cancelled\n";
  });
}

void Audit(const Common& c, const std::string& since, const std::string& principal, int limit,
           int64_t after, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  std::string q = "/v1/audit?limit=" + std::to_string(std::clamp(limit, 1, 1000));
  if (after > 0) q += "&after=" + std::to_string(after);
  if (!since.empty()) {
    std::optional<int64_t> ms = SinceMs(since, x);
    if (!ms) return;
    q += "&since_ms=" + std::to_string(*ms);
  }
  if (!principal.empty()) q += "&principal=" + Encode(principal);
  HttpReply r = Call(*cfg, "GET", q);
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out, [&] {
    Table t({"TIME", "WHO", "FROM", "CALL", "STATUS", "DETAIL"});
    for (const json& a : r.body["items"]) {
      std::string detail = Str(a, "detail");
      if (detail.size() > 80) detail = detail.substr(0, 77) + "...";
      t.Add({Time(a["time_ms"]), Str(a, "principal"), Str(a, "remote"),
             Str(a, "method") + " " + Str(a, "path"), Str(a, "status"), detail});
    }
    t.Write(x.out);
    const int64_t shown = static_cast<int64_t>(r.body["items"].size());
    ListFooter(shown, r.body.value("total", shown),
               r.body.contains("next") ? r.body["next"] : json(nullptr), x.out);
  });
}

void GetClusters(const Common& c, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "GET", "/v1/clusters");
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out, [&] {
    Table t({"CLUSTER", "REGION", "TIER", "BACKEND", "NODES", "READY", "CORDONED", "DOWN",
             "DEVICES (allocated/total)"});
    for (const json& cl : r.body["items"]) {
      std::string devices;
      for (const json& d : cl["devices"]) {
        devices += (devices.empty() ? "" : " ") + Str(d, "model") + " " +
                   FormatMilli(static_cast<Milli>(d["allocated"].get<double>() * 1000)) + "/" +
                   Str(d, "count");
      }
      t.Add({Str(cl, "name"), Str(cl, "region"), Str(cl, "tier"), Str(cl, "backend"),
             Str(cl, "nodes"), Str(cl, "ready"), Str(cl, "cordoned"), Str(cl, "down"), devices});
    }
    t.Write(x.out);
  });
}

void GetNodes(const Common& c, const std::string& cluster, int limit, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  json all = json::array();
  int64_t after = 0;
  for (;;) {
    std::string q = "/v1/nodes?limit=1000";
    if (!cluster.empty()) q += "&cluster=" + Encode(cluster);
    if (after != 0) q += "&after=" + std::to_string(after);
    HttpReply r = Call(*cfg, "GET", q);
    if (r.status != 200) {
      x.code = ReportFailure(r, x.err);
      return;
    }
    for (const json& n : r.body["items"])
      if (static_cast<int>(all.size()) < limit) all.push_back(n);
    if (!r.body.contains("next") || static_cast<int>(all.size()) >= limit) break;
    after = r.body["next"].get<int64_t>();
  }
  Print(json{{"items", all}}, c.output, x.out, [&] {
    Table t({"NODE", "CLUSTER", "STATE", "CPU FREE", "DEVICES FREE", "JOBS"});
    for (const json& n : all) {
      std::string devices;
      for (const json& d : n["devices"]) {
        devices += (devices.empty() ? "" : " ") + Str(d, "model") + " " +
                   FormatMilli(static_cast<Milli>(d["free"].get<double>() * 1000)) + "/" +
                   Str(d, "count");
      }
      std::string jobs;
      for (const json& j : n["jobs"])
        jobs += (jobs.empty() ? "" : ",") + Str(j, "name");
      t.Add({Str(n, "name"), Str(n, "cluster"), Str(n, "state"),
             FormatMilli(static_cast<Milli>(n["cpu_free"].get<double>() * 1000)) + "/" +
                 FormatMilli(static_cast<Milli>(n["cpu"].get<double>() * 1000)),
             devices, jobs});
    }
    t.Write(x.out);
  });
}

void HoldNode(const Common& c, const std::string& action, const std::string& node, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "POST", "/v1/nodes/" + Encode(node) + "/" + action);
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out,
        [&] { x.out << "node " << node << " " << Str(r.body, "state") << "\n"; });
}

std::string Number(const json& v) {
  if (v.is_null()) return "-";
  double d = v.get<double>();
  return FormatMilli(static_cast<Milli>(std::llround(d * 1000)));
}

void Quota(const Common& c, const std::string& tenant, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "GET", "/v1/tenants");
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  json items = json::array();
  for (const json& t : r.body["items"]) {
    std::string path = Str(t, "tenant");
    if (!tenant.empty() && path != tenant && path.rfind(tenant + "/", 0) != 0) continue;
    items.push_back(t);
  }
  Print(json{{"items", items}}, c.output, x.out, [&] {
    Table t({"TENANT", "MODEL", "USED", "GUARANTEED", "LIMIT", "BORROWING"});
    for (const json& tn : items) {
      for (const json& q : tn["quotas"]) {
        t.Add({Str(tn, "tenant"), Str(q, "model"), Number(q["used"]), Number(q["guaranteed"]),
               Number(q["limit"]), q["borrowing"].get<bool>() ? "yes" : ""});
      }
    }
    t.Write(x.out);
  });
}

void Cost(const Common& c, const std::string& by, const std::string& since, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  auto d = ParseDuration(since);
  if (!d.ok()) {
    x.err << "error: --since: expected a duration such as 24h or 7d, got \"" << since << "\"\n";
    x.code = kExitInvalidInput;
    return;
  }
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  HttpReply r = Call(
      *cfg, "GET",
      "/v1/costs?by=" + Encode(by) + "&since_ms=" + std::to_string(std::max<int64_t>(0, now - *d)));
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out, [&] {
    std::string currency = Str(r.body, "currency");
    std::string header = by;
    std::transform(header.begin(), header.end(), header.begin(), ::toupper);
    Table t({header, "COST (" + currency + ")"});
    for (const json& i : r.body["items"])
      t.Add({Str(i, by.c_str()), fmt::format("{:.2f}", i["amount"].get<double>())});
    t.Add({"total", fmt::format("{:.2f}", r.body["total"].get<double>())});
    t.Write(x.out);
  });
}

// POST /v1/policies/validate or /reload: the errors by file and line, or the changes and
// what a reload did to the jobs.
void Policies(const Common& c, const std::string& verb, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  auto errors = [](const json& body, std::ostream& out) {
    for (const json& e : body.value("errors", json::array()))
      out << Str(e, "file") << ":" << Str(e, "line") << ":" << Str(e, "column") << ": "
          << Str(e, "field") << ": " << Str(e, "message") << "\n";
  };
  HttpReply r = Call(*cfg, "POST", "/v1/policies/" + verb);
  if (r.status != 200) {
    errors(r.body, x.err);
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out, [&] {
    if (!r.body["ok"].get<bool>()) {
      errors(r.body, x.out);
      return;
    }
    for (const auto& [what, d] : r.body["changes"].items()) {
      for (const json& n : d["added"])
        x.out << "+ " << what << " " << n.get<std::string>() << "\n";
      for (const json& n : d["removed"])
        x.out << "- " << what << " " << n.get<std::string>() << "\n";
    }
    if (r.body["applied"].get<bool>()) {
      const json& j = r.body["jobs"];
      x.out << "reloaded: " << Str(j, "resumed") << " running jobs went on, " << Str(j, "requeued")
            << " requeued, " << Str(j, "queued") << " queued again, " << Str(j, "failed")
            << " no longer valid\n";
    } else {
      x.out << "valid\n";
    }
  });
  if (!r.body["ok"].get<bool>()) x.code = kExitInvalidInput;
}

// The fields of `principal create`: name, role, tenant, node.
struct PrincipalFields {
  std::string name, role, tenant, node;
};

void CreatePrincipal(const Common& c, const PrincipalFields& p, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  json body = {{"name", p.name}, {"role", p.role}};
  if (!p.tenant.empty()) body["tenant"] = p.tenant;
  if (!p.node.empty()) body["node"] = p.node;
  HttpReply r = Call(*cfg, "POST", "/v1/principals", body.dump());
  if (r.status != 201) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out,
        [&] { x.out << "principal " << p.name << " (" << p.role << ")\n"; });
}

void DeletePrincipal(const Common& c, const std::string& who, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "DELETE", "/v1/principals/" + Encode(who));
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out,
        [&] { x.out << "principal " << who << " deleted, with its tokens\n"; });
}

void RevokeTokens(const Common& c, const std::string& who, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "DELETE", "/v1/principals/" + Encode(who) + "/tokens");
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out,
        [&] { x.out << "revoked " << Str(r.body, "revoked") << " token(s) of " << who << "\n"; });
}

void CreateToken(const Common& c, const std::string& who, const std::string& expires, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  json body = json::object();
  if (!expires.empty()) {
    auto d = ParseDuration(expires);
    if (!d.ok() || *d < 1000) {
      x.err << "error: --expires-in: expected a duration of at least 1s, got \"" << expires
            << "\"\n";
      x.code = kExitInvalidInput;
      return;
    }
    body["expires_in_s"] = *d / 1000;
  }
  HttpReply r = Call(*cfg, "POST", "/v1/principals/" + Encode(who) + "/tokens", body.dump());
  if (r.status != 201) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out, [&] { x.out << Str(r.body, "token") << "\n"; });
}

// The commands' registration, one function per command (or family): options bound to values
// the callbacks share, each callback one of the functions above.
using CtxPtr = std::shared_ptr<Ctx>;

void RegisterSubmit(CLI::App& app, const CtxPtr& ctx) {
  auto* cmd = app.add_subcommand("submit", "Submit jobs and services to the daemon");
  auto c = std::make_shared<Common>();
  auto file = std::make_shared<std::string>();
  auto key = std::make_shared<std::string>();
  AddCommon(cmd, *c);
  cmd->add_option("-f,--file", *file,
                  "A job (YAML or JSON), or a file with `jobs:` and `services:` lists")
      ->required();
  cmd->add_option("--idempotency-key", *key,
                  "Reuse to make a retried submission safe (default: a fresh one per run)");
  cmd->callback([=] { Submit(*c, *file, *key, *ctx); });
}

void RegisterGet(CLI::App& app, const CtxPtr& ctx) {
  auto* get = app.add_subcommand("get", "List jobs, or show one");
  get->require_subcommand(1);
  auto c = std::make_shared<Common>();
  auto f = std::make_shared<std::map<std::string, std::string>>();
  auto limit = std::make_shared<int>(1000);
  auto after = std::make_shared<int64_t>(0);
  auto* jobs = get->add_subcommand("jobs", "List the jobs you may see, newest first");
  AddCommon(jobs, *c);
  jobs->add_option("--tenant", (*f)["tenant"], "Only this tenant's subtree");
  jobs->add_option("--state", (*f)["state"],
                   "pending, running, succeeded, failed, cancelled, or active");
  jobs->add_option("--class", (*f)["class"], "training, finetune, batch or eval");
  jobs->add_option("--name", (*f)["name"], "Only jobs of this name");
  jobs->add_option("--limit", *limit, "At most this many")->capture_default_str();
  jobs->add_option("--after", *after, "Only jobs older than this id (the footer's cursor)");
  jobs->callback([=] { GetJobs(*c, *f, *limit, *after, *ctx); });

  auto cc = std::make_shared<Common>();
  auto* clusters = get->add_subcommand("clusters", "The clusters: nodes, devices, allocation");
  AddCommon(clusters, *cc);
  clusters->callback([=] { GetClusters(*cc, *ctx); });

  auto nc = std::make_shared<Common>();
  auto cluster = std::make_shared<std::string>();
  auto node_limit = std::make_shared<int>(100000);
  auto* nodes = get->add_subcommand("nodes", "Nodes: state, free CPU and devices, jobs");
  AddCommon(nodes, *nc);
  nodes->add_option("--cluster", *cluster, "Only this cluster's nodes");
  nodes->add_option("--limit", *node_limit, "At most this many");
  nodes->callback([=] { GetNodes(*nc, *cluster, *node_limit, *ctx); });
}

void RegisterNodeHolds(CLI::App& app, const CtxPtr& ctx) {
  for (const char* action : {"cordon", "drain", "uncordon"}) {
    std::string a = action;
    auto* cmd = app.add_subcommand(
        a, a == "cordon"  ? "Keep new work off a node; what runs there goes on (operators)"
           : a == "drain" ? "Cordon a node and requeue its running jobs elsewhere (operators)"
                          : "Let a cordoned or drained node take work again (operators)");
    auto c = std::make_shared<Common>();
    auto node = std::make_shared<std::string>();
    AddCommon(cmd, *c);
    cmd->add_option("NODE", *node, "The node's name")->required();
    cmd->callback([=] { HoldNode(*c, a, *node, *ctx); });
  }
}

void RegisterJobCommands(CLI::App& app, const CtxPtr& ctx) {
  for (const char* verb : {"describe", "explain"}) {
    const bool describe = std::string(verb) == "describe";
    auto* cmd =
        app.add_subcommand(verb, describe ? "Show a job in full"
                                          : "Why a job is pending, or why it runs where it does");
    cmd->require_subcommand(1);
    auto* job = cmd->add_subcommand("job", "A job by id or name");
    auto c = std::make_shared<Common>();
    auto ref = std::make_shared<std::string>();
    auto tenant = std::make_shared<std::string>();
    AddCommon(job, *c);
    job->add_option("JOB", *ref, "The job's id or name")->required();
    job->add_option("--tenant", *tenant, "The tenant, when several use the name");
    job->callback([=] {
      if (describe) {
        Describe(*c, *ref, *tenant, *ctx);
      } else {
        Explain(*c, *ref, *tenant, *ctx);
      }
    });
  }
  auto* cmd = app.add_subcommand("cancel", "Cancel a job");
  auto c = std::make_shared<Common>();
  auto args = std::make_shared<std::vector<std::string>>();
  auto tenant = std::make_shared<std::string>();
  AddCommon(cmd, *c);
  cmd->add_option("JOB", *args, "[job] ID-OR-NAME")->required()->expected(1, 2);
  cmd->add_option("--tenant", *tenant, "The tenant, when several use the name");
  cmd->callback([=] {
    std::vector<std::string> a = *args;
    if (a.size() == 2 && a[0] == "job") a.erase(a.begin());
    if (a.size() != 1) {
      ctx->err << "error: cancel takes one job: tessera cancel [job] ID-OR-NAME\n";
      ctx->code = kExitInvalidInput;
      return;
    }
    Cancel(*c, a[0], *tenant, *ctx);
  });
}

void RegisterPolicies(CLI::App& app, const CtxPtr& ctx) {
  auto* cmd = app.add_subcommand(
      "policies", "Check or reload the daemon's configuration files (admins, operators)");
  cmd->require_subcommand(1);
  for (const char* verb : {"validate", "reload"}) {
    std::string v = verb;
    auto* sub = cmd->add_subcommand(
        v, v == "validate" ? "Read the configuration files again and check them (dry run)"
                           : "Check them and put them in force; running jobs go on");
    auto c = std::make_shared<Common>();
    AddCommon(sub, *c);
    sub->callback([=] { Policies(*c, v, *ctx); });
  }
}

void RegisterMoney(CLI::App& app, const CtxPtr& ctx) {
  {
    auto* cmd = app.add_subcommand("quota", "Quotas per tenant and model against what is used");
    auto c = std::make_shared<Common>();
    auto tenant = std::make_shared<std::string>();
    AddCommon(cmd, *c);
    cmd->add_option("--tenant", *tenant, "Only this tenant's subtree");
    cmd->callback([=] { Quota(*c, *tenant, *ctx); });
  }
  auto* cmd = app.add_subcommand("cost", "Spending by tenant, project, cluster or model");
  auto c = std::make_shared<Common>();
  auto by = std::make_shared<std::string>("tenant");
  auto since = std::make_shared<std::string>("7d");
  AddCommon(cmd, *c);
  cmd->add_option("--by", *by, "tenant (organisation), project (tenant path), cluster, model")
      ->check(CLI::IsMember({"tenant", "project", "cluster", "model"}))
      ->capture_default_str();
  cmd->add_option("--since", *since, "The period: this long until now")->capture_default_str();
  cmd->callback([=] { Cost(*c, *by, *since, *ctx); });
}

void RegisterAudit(CLI::App& app, const CtxPtr& ctx) {
  auto* cmd = app.add_subcommand(
      "audit", "The audit log of mutating calls, newest first (admins, operators)");
  auto c = std::make_shared<Common>();
  auto since = std::make_shared<std::string>();
  auto principal = std::make_shared<std::string>();
  auto limit = std::make_shared<int>(100);
  auto after = std::make_shared<int64_t>(0);
  AddCommon(cmd, *c);
  cmd->add_option("--since", *since, "Only calls within this long (e.g. 24h, 7d)");
  cmd->add_option("--principal", *principal, "Only calls by this principal");
  cmd->add_option("--limit", *limit, "At most this many")->capture_default_str();
  cmd->add_option("--after", *after, "Only calls older than this seq (the footer's cursor)");
  cmd->callback([=] { Audit(*c, *since, *principal, *limit, *after, *ctx); });
}

void RegisterPrincipals(CLI::App& app, const CtxPtr& ctx) {
  auto* cmd = app.add_subcommand("principal", "Manage principals (admins)");
  cmd->require_subcommand(1);
  auto* create = cmd->add_subcommand("create", "Create or update a principal");
  auto c = std::make_shared<Common>();
  auto p = std::make_shared<PrincipalFields>();
  AddCommon(create, *c);
  create->add_option("NAME", p->name, "The principal's name")->required();
  create->add_option("--role", p->role, "admin, operator, member, viewer or agent")->required();
  create->add_option("--tenant", p->tenant, "For members and viewers: their tenant subtree");
  create->add_option("--node", p->node,
                     "For an agent (required): the one node its tokens answer for");
  create->callback([=] { CreatePrincipal(*c, *p, *ctx); });
  auto* del = cmd->add_subcommand("delete", "Delete a principal and its tokens");
  auto dc = std::make_shared<Common>();
  auto who = std::make_shared<std::string>();
  AddCommon(del, *dc);
  del->add_option("NAME", *who, "The principal's name")->required();
  del->callback([=] { DeletePrincipal(*dc, *who, *ctx); });
}

void RegisterTokens(CLI::App& app, const CtxPtr& ctx) {
  auto* cmd = app.add_subcommand("token", "Issue tokens (admins)");
  cmd->require_subcommand(1);
  auto* revoke = cmd->add_subcommand("revoke", "Revoke every token of a principal");
  auto rc = std::make_shared<Common>();
  auto rwho = std::make_shared<std::string>();
  AddCommon(revoke, *rc);
  revoke->add_option("PRINCIPAL", *rwho, "Whose tokens")->required();
  revoke->callback([=] { RevokeTokens(*rc, *rwho, *ctx); });
  auto* create = cmd->add_subcommand("create", "A new token for a principal, shown once");
  auto c = std::make_shared<Common>();
  auto who = std::make_shared<std::string>();
  auto expires = std::make_shared<std::string>();
  AddCommon(create, *c);
  create->add_option("PRINCIPAL", *who, "Whose token")->required();
  create->add_option("--expires-in", *expires, "Lifetime (e.g. 24h, 30d); default: none");
  create->callback([=] { CreateToken(*c, *who, *expires, *ctx); });
}

}  // namespace

void RegisterClient(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto ctx = std::make_shared<Ctx>(Ctx{out, err, code});
  RegisterSubmit(app, ctx);
  RegisterGet(app, ctx);
  RegisterNodeHolds(app, ctx);
  RegisterJobCommands(app, ctx);
  RegisterPolicies(app, ctx);
  RegisterMoney(app, ctx);
  RegisterAudit(app, ctx);
  RegisterPrincipals(app, ctx);
  RegisterTokens(app, ctx);
}

}  // namespace tessera::cli
