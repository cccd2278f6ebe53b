// tessera serve --config DIR [--store sqlite:PATH | postgres://...] [--listen HOST:PORT]
// [--ready-file F]: the daemon. Loads and validates the configuration, opens (or creates) the
// store, rebuilds its state from it, and answers the HTTP/JSON API until SIGINT or SIGTERM.
// On a PostgreSQL store it first takes the store's lease, standing by while another daemon
// holds it (serve_standby.h), and stops once another daemon took it.
//
// Logs are JSON lines on standard error; standard output says where it listens and, on the
// first start with an empty store, the admin's token (once).
#include <fmt/format.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
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
#include "cli/serve_standby.h"
#include "common/quantity.h"
#include "common/text.h"
#include "server/api.h"
#include "server/daemon.h"
#include "store/postgres.h"
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
  std::string lease = "3s";       // PostgreSQL: how long the leader's lease lasts unrenewed
  std::string advertise_url;      // PostgreSQL: the URL standbys name ("" = the listen address)
  bool log_requests = false;
};

void Log(std::ostream& err, const std::string& level, const std::string& msg, json fields = {}) {
  json line = {{"ts_ms", SystemClock().Now()}, {"level", level}, {"msg", msg}};
  if (fields.is_object())
    for (auto& [k, v] : fields.items())
      line[k] = v;
  err << line.dump() << std::endl;
}

// The configuration's folder: where the default store and the Slurm work folders go.
std::filesystem::path ConfigDir(const ServeArgs& a) {
  namespace fs = std::filesystem;
  fs::path first(a.config.front());
  std::error_code ec;
  return fs::is_directory(first, ec) ? first : first.parent_path();
}

// The store: --store sqlite:PATH or postgres://USER@HOST:PORT/DB, else sqlite:tessera.db
// beside the configuration.
struct StoreChoice {
  bool postgres = false;
  std::string location;  // the file, or the database's URL
  std::string shown;     // as the log names it (a URL without its password)
};

Result<StoreChoice> StoreOf(const ServeArgs& a) {
  if (IsPostgresUrl(a.store)) return StoreChoice{true, a.store, RedactedUrl(a.store)};
  if (!a.store.empty()) {
    constexpr std::string_view kScheme = "sqlite:";
    if (a.store.rfind(kScheme, 0) != 0 || a.store.size() == kScheme.size()) {
      return InvalidArgument(
          "--store: expected sqlite:PATH or postgres://USER@HOST:PORT/DB, got \"" +
          RedactedUrl(a.store) + "\"");
    }
    std::string path = a.store.substr(kScheme.size());
    return StoreChoice{false, path, path};
  }
  std::string path = (ConfigDir(a) / "tessera.db").string();
  return StoreChoice{false, path, path};
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
             const std::string& store, const std::string& new_token, StopWatch& stop,
             PostgresStore* leading, const LogLine& log, std::ostream& out, std::ostream& err) {
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
  if (leading != nullptr) {
    // The standbys name this address to clients.
    if (Status s = leading->Advertise(a.advertise_url.empty() ? url : a.advertise_url); !s.ok()) {
      log("warn", "the leader's address is not in the store", {{"error", s.message()}});
    }
    log("info", "leading", {{"term", leading->term()}, {"url", url}});
  }
  Announce(a, url, store, new_token, out);  // the ready file last: all is said by then
  stop.OnStop([&] {
    daemon.agents().Shutdown();  // the agents' open syncs answer now
    http.Stop();
  });
  http.Run();
  stop.OnStop(nullptr);
  return kExitOk;
}

// Why a PostgreSQL store's daemon does not lead now ("" = it leads).
std::string NotLeading(const PostgresStore& store) {
  if (store.deposed()) return "deposed: another daemon took the store's lease";
  if (!store.leading()) return "the store's lease could not be renewed in time (see the log)";
  return "";
}

// Watches a leading daemon's lease: says in the log when it stops and starts leading, and
// stops the daemon once another took the lease (it cannot lead again in this process: its
// state is the old term's; restarted, it stands by).
class LeaseWatch {
 public:
  LeaseWatch(const PostgresStore& store, StopWatch& stop, const LogLine& log)
      : thread_([&store, &stop, log, this] {
          std::string was;
          std::unique_lock<std::mutex> lock(mu_);
          while (!done_) {
            cv_.wait_for(lock, std::chrono::milliseconds(100));
            std::string why = NotLeading(store);
            if (why != was) {
              if (why.empty()) {
                log("info", "leading again", {{"term", store.term()}});
              } else {
                log("error", "not leading", {{"term", store.term()}, {"reason", why}});
              }
              was = why;
            }
            if (store.deposed() && !deposed_) {
              deposed_ = true;
              stop.Stop("deposed: another daemon leads the store; restarted, this one stands by");
            }
          }
        }) {}
  ~LeaseWatch() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  bool deposed() {
    std::lock_guard<std::mutex> lock(mu_);
    return deposed_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, deposed_ = false;
  std::thread thread_;
};

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
  auto choice = StoreOf(a);
  if (!choice.ok()) {
    err << "error: " << choice.status().message() << "\n";
    return kExitInvalidInput;
  }
  Result<Millis> lease = ParseDuration(a.lease);
  if (!lease.ok() || *lease < 500 || *lease > 60000) {
    err << "error: --lease: expected a duration from 500ms to 60s (e.g. 3s), got \"" << a.lease
        << "\"\n";
    return kExitInvalidInput;
  }
  std::optional<Spec> spec = LoadOrReport(a.config, err);
  if (!spec) return kExitInvalidInput;
  const LogLine log = SerialLog(err);
  StopWatch stop(stop_signals, log);
  std::unique_ptr<DurableStore> store;
  PostgresStore* postgres = nullptr;  // the same store, when it is PostgreSQL's
  Status opened = Status::Ok();
  if (choice->postgres) {
    StandbyArgs standby{choice->location, listen->first, listen->second,
                        a.tls_cert,       a.tls_key,     std::chrono::milliseconds(*lease)};
    auto pg = OpenLeading(standby, stop, log);
    if (pg.ok()) {
      postgres = pg->get();
      store = std::move(*pg);
    } else if (stop.stopped()) {
      log("info", "stopped", json::object());
      return kExitOk;
    } else {
      opened = pg.status();
    }
  } else {
    auto sqlite = SqliteStore::Open(choice->location);
    if (sqlite.ok()) {
      store = std::move(*sqlite);
    } else {
      opened = sqlite.status();
    }
  }
  if (!opened.ok()) {
    // In use by another daemon, not a store, read-only, from a newer tessera: the operator's
    // to fix (exit 2); anything else (a disk error, a database out of reach) is a failure.
    err << "error: " << opened.message() << "\n";
    return opened.code() == StatusCode::kFailedPrecondition ||
                   opened.code() == StatusCode::kInvalidArgument
               ? kExitInvalidInput
               : kExitFailure;
  }

  static SystemClock clock;
  options->work_dir = choice->postgres
                          ? ConfigDir(a).string()
                          : std::filesystem::path(choice->location).parent_path().string();
  if (options->work_dir.empty()) options->work_dir = ".";
  if (const char* t = std::getenv("TESSERA_ADMIN_TOKEN")) options->admin_token = t;
  options->log = log;
  if (postgres != nullptr) options->not_leading = [postgres] { return NotLeading(*postgres); };
  auto t0 = std::chrono::steady_clock::now();
  auto started = Daemon::Start(std::move(*spec), std::move(store), clock, *options);
  if (!started.ok()) {
    err << "error: " << started.status().message() << "\n";
    return kExitFailure;
  }
  std::unique_ptr<Daemon> daemon = std::move(started->daemon);
  LogStart(
      log, choice->shown, *daemon,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  std::optional<LeaseWatch> watch;
  if (postgres != nullptr) watch.emplace(*postgres, stop, log);
  int code = ServeApi(a, *daemon, *listen, choice->shown, started->admin_token, stop, postgres, log,
                      out, err);
  if (watch && watch->deposed()) code = kExitFailure;
  watch.reset();
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
                  "The store: sqlite:PATH (default: tessera.db beside the configuration), or "
                  "postgres://USER@HOST:PORT/DB, which several daemons share: one leads, the "
                  "others stand by");
  cmd->add_option("--lease", a->lease,
                  "PostgreSQL store: how long the leader's lease lasts unrenewed (a standby "
                  "takes over after it)")
      ->capture_default_str();
  cmd->add_option("--advertise-url", a->advertise_url,
                  "PostgreSQL store: where clients reach this daemon when it leads, as the "
                  "standbys name it (default: the --listen address)");
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
