// `tessera get decisions` (docs/cli.md): the scheduler's decision log across the jobs the
// caller may see — what started, was preempted, requeued, finished — newest last.
#include "cli/client_common.h"
#include "cli/commands.h"
#include "cli/output.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

void GetDecisions(const Common& c, const std::string& since, const std::string& kind, int limit,
                  Ctx& x) {
  auto cfg = Config(c, x);
  if (!cfg) return;
  std::string base = "/v1/decisions?limit=" + std::to_string(std::clamp(limit, 1, 1000));
  if (!since.empty()) {
    std::optional<int64_t> ms = SinceMs(since, x);
    if (!ms) return;
    base += "&since_ms=" + std::to_string(*ms);
  }
  if (!kind.empty()) base += "&kind=" + Encode(kind);
  json all = json::array();
  int64_t after = 0;
  for (;;) {
    HttpReply r = Call(*cfg, "GET", base + (after ? "&after=" + std::to_string(after) : ""));
    if (r.status != 200) {
      x.code = ReportFailure(r, x.err);
      return;
    }
    for (const json& d : r.body["items"])
      all.push_back(d);
    if (!r.body.contains("next") || static_cast<int>(all.size()) >= limit) break;
    after = r.body["next"].get<int64_t>();
  }
  Print(json{{"items", all}}, c.output, x.out, [&] {
    Table t({"TIME", "KIND", "JOB", "TENANT", "REASON", "POLICY"});
    for (const json& d : all) {
      std::string reason = Str(d, "reason");
      if (reason.size() > 80) reason = reason.substr(0, 77) + "...";
      t.Add({Time(d["time_ms"]), Str(d, "kind"), Str(d["job"], "id") + " " + Str(d["job"], "name"),
             Str(d["job"], "tenant"), reason, DecidedBy(d)});
    }
    t.Write(x.out);
  });
}

}  // namespace

void RegisterDecisionClient(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto ctx = std::make_shared<Ctx>(Ctx{out, err, code});
  auto c = std::make_shared<Common>();
  auto since = std::make_shared<std::string>();
  auto kind = std::make_shared<std::string>();
  auto limit = std::make_shared<int>(100);
  auto* cmd = app.get_subcommand("get")->add_subcommand(
      "decisions", "The scheduler's decisions across the jobs you may see, oldest first");
  AddCommon(cmd, *c);
  cmd->add_option("--since", *since, "Only decisions of the last 30m, 24h, 7d, ...");
  cmd->add_option("--kind", *kind,
                  "start, preempt, requeue, migrate, grow, shrink, finish, fail, cancel or idle");
  cmd->add_option("--limit", *limit, "At most this many")->capture_default_str();
  cmd->callback([=] { GetDecisions(*c, *since, *kind, *limit, *ctx); });
}

}  // namespace tessera::cli
