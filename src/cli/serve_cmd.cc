// tessera serve --config DIR [--store sqlite:PATH] [--listen HOST:PORT] [--ready-file F]:
// the daemon. Loads and validates the configuration, opens (or creates) the store, rebuilds
// its state from it, and answers the HTTP/JSON API until SIGINT or SIGTERM.
//
// Logs are JSON lines on standard error; standard output says where it listens and, on the
// first start with an empty store, the admin's token (once).
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cli/app.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "common/quantity.h"
#include "common/text.h"
#include "server/api.h"
#include "server/daemon.h"
#include "store/sqlite_store.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

struct ServeArgs {
  std::vector<std::string> config;
  std::string store;
  std::string listen = "127.0.0.1:7400";
  std::string ready_file;
  std::string tls_cert, tls_key;  // both or neither: HTTPS
  std::string scale_interval = "30s";
  std::string agent_heartbeat = "2s", agent_lost_after = "10s";
  std::string cycle_interval = "5ms";
  std::string policy, placement;  // "" = the configuration's scheduler section
  bool log_requests = false;
};

void Log(std::ostream& err, const std::string& level, const std::string& msg, json fields = {}) {
  json line = {{"ts_ms", SystemClock().Now()}, {"level", level}, {"msg", msg}};
  if (fields.is_object())
    for (auto& [k, v] : fields.items())
      line[k] = v;
  err << line.dump() << std::endl;
}

// The store's file: --store sqlite:PATH, else tessera.db beside the configuration.
Result<std::string> StorePath(const ServeArgs& a) {
  if (!a.store.empty()) {
    constexpr std::string_view kScheme = "sqlite:";
    if (a.store.rfind(kScheme, 0) != 0 || a.store.size() == kScheme.size()) {
      return InvalidArgument("--store: expected sqlite:PATH, got \"" + a.store +
                             "\" (the embedded SQLite store is the only one built so far)");
    }
    return a.store.substr(kScheme.size());
  }
  namespace fs = std::filesystem;
  fs::path first(a.config.front());
  std::error_code ec;
  fs::path dir = fs::is_directory(first, ec) ? first : first.parent_path();
  return (dir / "tessera.db").string();
}

Result<std::pair<std::string, int>> ParseListen(const std::string& s) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument("--listen: expected HOST:PORT, got \"" + s + "\"");
  }
  std::string host = s.substr(0, colon);
  int port = -1;
  try {
    size_t used = 0;
    port = std::stoi(s.substr(colon + 1), &used);
    if (used != s.size() - colon - 1) port = -1;
  } catch (...) {
  }
  if (port < 0 || port > 65535) {
    return InvalidArgument("--listen: the port must be 0-65535, got \"" + s.substr(colon + 1) +
                           "\"");
  }
  return std::make_pair(host, port);
}

// The daemon's timings from the flags; nullopt after saying which is wrong.
std::optional<DaemonOptions> DaemonOptionsOf(const ServeArgs& a, std::ostream& err) {
  Result<Millis> scale_interval = ParseDuration(a.scale_interval);
  if (!scale_interval.ok() || *scale_interval < 1000) {
    err << "error: --scale-interval: expected a duration of at least 1s (e.g. 30s), got \""
        << a.scale_interval << "\"\n";
    return std::nullopt;
  }
  Result<Millis> heartbeat = ParseDuration(a.agent_heartbeat);
  Result<Millis> lost_after = ParseDuration(a.agent_lost_after);
  if (!heartbeat.ok() || *heartbeat < 100) {
    err << "error: --agent-heartbeat: expected a duration of at least 100ms, got \""
        << a.agent_heartbeat << "\"\n";
    return std::nullopt;
  }
  if (!lost_after.ok() || *lost_after <= *heartbeat) {
    err << "error: --agent-lost-after: expected a duration longer than the heartbeat, got \""
        << a.agent_lost_after << "\"\n";
    return std::nullopt;
  }
  Result<Millis> cycle_interval = ParseDuration(a.cycle_interval);
  if (!cycle_interval.ok() || *cycle_interval > 10000) {
    err << "error: --cycle-interval: expected a duration from 0 to 10s (e.g. 5ms), got \""
        << a.cycle_interval << "\"\n";
    return std::nullopt;
  }
  if (!a.policy.empty() && FindSchedulingPolicy(a.policy) == nullptr) {
    err << "error: --policy: expected one of " << JoinNames(SchedulingPolicyNames()) << ", got \""
        << a.policy << "\"\n";
    return std::nullopt;
  }
  const auto& scorers = BuiltinScorerNames();
  if (!a.placement.empty() &&
      std::find(scorers.begin(), scorers.end(), a.placement) == scorers.end()) {
    err << "error: --placement: expected one of " << JoinNames(scorers) << ", got \"" << a.placement
        << "\"\n";
    return std::nullopt;
  }
  DaemonOptions options;
  options.config_paths = a.config;
  options.scheduler = {a.policy, a.placement};
  options.scale_interval = *scale_interval;
  options.agent_heartbeat = *heartbeat;
  options.agent_lost_after = *lost_after;
  options.cycle_interval = *cycle_interval;
  return options;
}

// The API's server: TLS when asked, and a worker more for each node agent, which holds a
// sync open beside the clients' requests.
Result<std::unique_ptr<HttpServer>> ApiServer(const ServeArgs& a, Daemon& daemon) {
  HttpServerOptions server_options = ApiServerOptions();
  server_options.tls_cert = a.tls_cert;
  server_options.tls_key = a.tls_key;
  for (const Cluster& c : daemon.spec()->clusters) {
    if (c.backend == BackendKind::kLocal) {
      server_options.workers += static_cast<int>(c.node_count);
    }
  }
  return HttpServer::Create(server_options);
}

// Says where the daemon listens (and the admin's token, on a first start), then writes
// --ready-file.
void Announce(const ServeArgs& a, const std::string& url, const std::string& store,
              const std::string& new_token, std::ostream& out) {
  out << "tessera serve: listening on " << url << " (store " << store << ")\n";
  if (!new_token.empty()) {
    out << "admin token (shown once; set TESSERA_ADMIN_TOKEN to choose it): " << new_token << "\n";
  }
  out.flush();
  if (!a.ready_file.empty()) {
    std::ofstream(a.ready_file + ".tmp") << url << "\n";
    std::filesystem::rename(a.ready_file + ".tmp", a.ready_file);
  }
}

// serve's log: whole lines from any thread (the daemon's, the API's, the main one).
using LogLine =
    std::function<void(const std::string& level, const std::string& msg, const json& fields)>;

LogLine SerialLog(std::ostream& err) {
  auto mu = std::make_shared<std::mutex>();
  return [&err, mu](const std::string& level, const std::string& msg, const json& fields) {
    std::lock_guard<std::mutex> lock(*mu);
    Log(err, level, msg, fields);
  };
}

// SIGINT and SIGTERM are taken by a thread of ours (sigwait), so they stop the server
// cleanly; they are blocked before any thread starts (the store's writer is one), since a
// thread that does not block them would die of them.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

// The daemon's start, as its log line says it: the jobs read and queued again, and how long.
void LogStart(const LogLine& log, const std::string& store, const Daemon& daemon, double ms) {
  const Daemon::StartTimes& start = daemon.start_times();
  log("info", "state restored",
      {{"store", store},
       {"jobs", start.jobs},
       {"queued", start.active},
       {"rechecked", start.rechecked},
       {"ms", std::round(ms * 10) / 10},
       {"load_ms", std::round(start.load_ms)},
       {"restore_ms", std::round(start.restore_ms)}});
  const SchedulerSettings scheduler = daemon.scheduler();
  log("info", "scheduler", {{"policy", scheduler.ordering}, {"placement", scheduler.placement}});
}

// The API over `daemon` on `listen` until SIGINT or SIGTERM (`stop_signals`, blocked): the
// exit code.
int ServeApi(const ServeArgs& a, Daemon& daemon, const std::pair<std::string, int>& listen,
             const std::string& store, const std::string& new_token, const sigset_t& stop_signals,
             const LogLine& log, std::ostream& out, std::ostream& err) {
  auto server = ApiServer(a, daemon);
  if (!server.ok()) {
    err << "error: --tls-cert " << a.tls_cert << " / --tls-key " << a.tls_key << ": "
        << server.status().message() << "\n";
    return kExitInvalidInput;
  }
  HttpServer& http = **server;
  ApiOptions api_options;
  if (a.log_requests) {
    api_options.request_log = [log](json fields) { log("info", "request", fields); };
  }
  auto api = InstallApi(http, daemon, api_options);
  auto port = http.Bind(listen.first, listen.second);
  if (!port.ok()) {
    err << "error: --listen " << a.listen << ": " << port.status().message() << "\n";
    return kExitFailure;
  }
  std::string url =
      fmt::format("{}://{}:{}", a.tls_cert.empty() ? "http" : "https", listen.first, *port);
  log("info", "listening", {{"url", url}});
  Announce(a, url, store, new_token, out);  // the ready file last: all is said by then
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    log("info", "stopping", {{"signal", sig}});
    daemon.agents().Shutdown();  // the agents' open syncs answer now
    http.Stop();
  });
  http.Run();
  // Run returned: by our signal thread.
  if (stopper.joinable()) {
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
  }
  return kExitOk;
}

int RunServe(const ServeArgs& a, std::ostream& out, std::ostream& err) {
  if (a.tls_cert.empty() != a.tls_key.empty()) {
    err << "error: --tls-cert and --tls-key go together\n";
    return kExitInvalidInput;
  }
  const sigset_t stop_signals = BlockStopSignals();
  auto listen = ParseListen(a.listen);
  if (!listen.ok()) {
    err << "error: " << listen.status().message() << "\n";
    return kExitInvalidInput;
  }
  std::optional<DaemonOptions> options = DaemonOptionsOf(a, err);
  if (!options) return kExitInvalidInput;
  auto path = StorePath(a);
  if (!path.ok()) {
    err << "error: " << path.status().message() << "\n";
    return kExitInvalidInput;
  }
  std::optional<Spec> spec = LoadOrReport(a.config, err);
  if (!spec) return kExitInvalidInput;
  auto store = SqliteStore::Open(*path);
  if (!store.ok()) {
    // In use by another daemon, not a store, read-only, from a newer tessera: the operator's
    // to fix (exit 2); anything else (a disk error) is a failure.
    err << "error: " << store.status().message() << "\n";
    return store.status().code() == StatusCode::kFailedPrecondition ? kExitInvalidInput
                                                                    : kExitFailure;
  }

  static SystemClock clock;
  options->work_dir = std::filesystem::path(*path).parent_path().string();
  if (options->work_dir.empty()) options->work_dir = ".";
  if (const char* t = std::getenv("TESSERA_ADMIN_TOKEN")) options->admin_token = t;
  const LogLine log = SerialLog(err);
  options->log = log;
  auto t0 = std::chrono::steady_clock::now();
  auto started = Daemon::Start(std::move(*spec), std::move(*store), clock, *options);
  if (!started.ok()) {
    err << "error: " << started.status().message() << "\n";
    return kExitFailure;
  }
  std::unique_ptr<Daemon> daemon = std::move(started->daemon);
  LogStart(
      log, *path, *daemon,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  const int code =
      ServeApi(a, *daemon, *listen, *path, started->admin_token, stop_signals, log, out, err);
  daemon.reset();
  if (code == kExitOk) log("info", "stopped", json::object());
  return code;
}

}  // namespace

void RegisterServe(CLI::App& app, std::ostream& out, std::ostream& err, int& code) {
  auto* cmd = app.add_subcommand("serve", "Run the daemon: the API, the store and the engine");
  auto a = std::make_shared<ServeArgs>();
  cmd->add_option("--config", a->config,
                  "Configuration files or directories (fleet, tenants, "
                  "policies)")
      ->required();
  cmd->add_option("--store", a->store,
                  "The store: sqlite:PATH (default: tessera.db beside the configuration)");
  cmd->add_option("--listen", a->listen, "Address to listen on, HOST:PORT (port 0: any free)")
      ->capture_default_str();
  cmd->add_option("--tls-cert", a->tls_cert, "Serve HTTPS with this certificate (PEM)");
  cmd->add_option("--tls-key", a->tls_key, "The certificate's private key (PEM)");
  cmd->add_flag("--log-requests", a->log_requests,
                "Log every request as a JSON line: method, path, status, milliseconds, remote");
  cmd->add_option("--scale-interval", a->scale_interval,
                  "How often services are scaled to their load (at least 1s)")
      ->capture_default_str();
  cmd->add_option("--agent-heartbeat", a->agent_heartbeat, "How often node agents sync at least")
      ->capture_default_str();
  cmd->add_option("--agent-lost-after", a->agent_lost_after,
                  "Silence after which an agent's node is lost and its runs requeued")
      ->capture_default_str();
  cmd->add_option("--cycle-interval", a->cycle_interval,
                  "The least time between two scheduling cycles (0: a cycle at every change)")
      ->capture_default_str();
  cmd->add_option("--policy", a->policy,
                  "The queue's policy in place of the configuration's scheduler section: fifo, "
                  "backfill, las or hetero");
  cmd->add_option(
      "--placement", a->placement,
      "The placement scorer in place of the configuration's: " + PlacementPolicyNames());
  cmd->add_option("--ready-file", a->ready_file,
                  "Write the server's URL to this file once it accepts requests");
  cmd->callback([a, &out, &err, &code] { code = RunServe(*a, out, err); });
}

}  // namespace tessera::cli
