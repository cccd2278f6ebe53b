// The client's service commands (docs/cli.md#services): `get services`, `describe service`,
// `delete service`. Services are submitted with `tessera submit -f` (a `services:` list).
#include <fmt/format.h>

#include "cli/client_common.h"
#include "cli/commands.h"
#include "cli/output.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

std::string Replicas(const json& v) {
  const json& r = v["replicas"];
  return Str(r, "running") + "/" + Str(r, "wanted") + " (" + Str(r, "min") + "-" + Str(r, "max") +
         ")";
}

std::string Load(const json& v) {
  const json& l = v["load"];
  auto rps = l.is_object() ? l.find("rps") : l.end();  // a const json's [] must not miss
  return fmt::format("{:g} rps ({})", rps != l.end() && rps->is_number() ? rps->get<double>() : 0.0,
                     Str(l, "source"));
}

std::string Attainment(const json& v) {
  const json& a = v["slo"]["attainment"];
  return a.is_number() ? fmt::format("{:.2f}%", a.get<double>() * 100) : "-";
}

void GetServices(const Common& c, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "GET", "/v1/services");
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out, [&] {
    Table t({"NAME", "TENANT", "STATE", "RUNNING/WANTED (MIN-MAX)", "PENDING", "LOAD", "SLO MET"});
    for (const json& v : r.body["items"]) {
      t.Add({Str(v, "name"), Str(v, "tenant"), Str(v, "state"), Replicas(v),
             Str(v["replicas"], "pending"), Load(v), Attainment(v)});
    }
    t.Write(x.out);
  });
}

void DescribeService(const Common& c, const std::string& name, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "GET", "/v1/services/" + Encode(name));
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  const json& v = r.body;
  Print(v, c.output, x.out, [&] {
    x.out << "Service:    " << Str(v, "name") << "\n"
          << "Tenant:     " << Str(v, "tenant") << "\n"
          << "State:      " << Str(v, "state") << "\n"
          << "Submitted:  " << Time(v["created_ms"]) << " by " << Str(v, "submitted_by") << "\n"
          << "Replicas:   " << Replicas(v) << ", " << Str(v["replicas"], "pending") << " pending\n"
          << "Load:       " << Load(v) << "\n"
          << "SLO:        " << Str(v["slo"], "latency_ms") << " ms, met for " << Attainment(v)
          << " of requests\n";
    if (v.contains("error")) x.out << "Error:      " << Str(v, "error") << "\n";
    std::string jobs;
    for (const json& id : v["replica_jobs"])
      jobs += (jobs.empty() ? "" : " ") + id.dump();
    x.out << "Jobs:       " << (jobs.empty() ? "-" : jobs) << "\n";
  });
}

void DeleteService(const Common& c, const std::string& name, Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  HttpReply r = Call(*cfg, "DELETE", "/v1/services/" + Encode(name));
  if (r.status != 200) {
    x.code = ReportFailure(r, x.err);
    return;
  }
  Print(r.body, c.output, x.out, [&] {
    x.out << "service " << Str(r.body, "name") << " deleted; its replicas are cancelled\n";
  });
}

}  // namespace

void RegisterServiceClient(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto ctx = std::make_shared<Ctx>(Ctx{out, err, code});
  {
    auto c = std::make_shared<Common>();
    auto* cmd = app.get_subcommand("get")->add_subcommand(
        "services", "Services: replicas running and wanted, load, SLO attainment");
    AddCommon(cmd, *c);
    cmd->callback([=] { GetServices(*c, *ctx); });
  }
  {
    auto c = std::make_shared<Common>();
    auto name = std::make_shared<std::string>();
    auto* cmd = app.get_subcommand("describe")->add_subcommand("service", "A service in full");
    AddCommon(cmd, *c);
    cmd->add_option("SERVICE", *name, "The service's name")->required();
    cmd->callback([=] { DescribeService(*c, *name, *ctx); });
  }
  {
    auto* del = app.add_subcommand("delete", "Delete a service (its replicas are cancelled)");
    del->require_subcommand(1);
    auto c = std::make_shared<Common>();
    auto name = std::make_shared<std::string>();
    auto* cmd = del->add_subcommand("service", "Stop a service");
    AddCommon(cmd, *c);
    cmd->add_option("SERVICE", *name, "The service's name")->required();
    cmd->callback([=] { DeleteService(*c, *name, *ctx); });
  }
}

}  // namespace tessera::cli
