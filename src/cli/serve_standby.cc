#include "cli/serve_standby.h"

#include <pthread.h>

#include "server/api.h"
#include "server/standby_api.h"

namespace tessera::cli {

StopWatch::StopWatch(const sigset_t& signals, LogLine log)
    : signals_(signals), log_(std::move(log)), thread_([this] {
        int sig = 0;
        sigwait(&signals_, &sig);
        if (exiting_) return;  // woken by the destructor
        log_("info", "stopping", {{"signal", sig}});
        Fire();
      }) {}

StopWatch::~StopWatch() {
  // The thread waits for a signal still, unless one came: this one ends its wait.
  exiting_ = true;
  pthread_kill(thread_.native_handle(), SIGTERM);
  thread_.join();
}

void StopWatch::Fire() {
  stopped_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  if (on_stop_) on_stop_();
}

void StopWatch::OnStop(std::function<void()> stop) {
  std::lock_guard<std::mutex> lock(mu_);
  on_stop_ = std::move(stop);
  if (stopped_ && on_stop_) on_stop_();
}

void StopWatch::Stop(const std::string& why) {
  if (stopped_) return;
  log_("error", "stopping", {{"why", why}});
  Fire();
}

Result<std::unique_ptr<PostgresStore>> OpenLeading(const StandbyArgs& args, StopWatch& stop,
                                                   const LogLine& log) {
  // The standby's answers: who leads, as the last look at the lease said.
  std::mutex mu;
  StandbyLeader leader;
  bool looked = false;  // the lease was looked at (leader says what was seen)
  std::unique_ptr<HttpServer> server;
  std::thread serving;
  auto stop_serving = [&] {
    if (!server) return;
    server->Stop();
    if (serving.joinable()) serving.join();
    server.reset();
  };
  PostgresOptions options;
  options.lease = args.lease;
  Status failed = Status::Ok();
  options.standby = [&](const LeaseHolder& holder) {
    {
      std::lock_guard<std::mutex> lock(mu);
      const bool news = !looked || holder.holder != leader.name || holder.term != leader.term ||
                        holder.address != leader.url;
      looked = true;
      leader = {holder.holder, holder.address, holder.term};
      if (news && holder.holder.empty()) {
        log("warn", "standby: the store cannot be reached; waiting for it", {});
      } else if (news) {
        log("info", "standby",
            {{"leader", holder.holder}, {"leader_url", holder.address}, {"term", holder.term}});
      }
    }
    if (!server && failed.ok()) {
      // The first look found another leader: answer as a standby from now on.
      HttpServerOptions o = ApiServerOptions();
      o.workers = 4;
      o.tls_cert = args.tls_cert;
      o.tls_key = args.tls_key;
      auto created = HttpServer::Create(o);
      if (!created.ok()) {
        failed = created.status();
        return false;
      }
      server = std::move(*created);
      InstallStandbyApi(*server, [&] {
        std::lock_guard<std::mutex> lock(mu);
        return leader;
      });
      auto port = server->Bind(args.host, args.port);
      if (!port.ok()) {
        failed =
            Status(port.status().code(), "--listen " + args.host + ":" + std::to_string(args.port) +
                                             ": " + port.status().message());
        server.reset();
        return false;
      }
      serving = std::thread([&] { server->Run(); });
      log("info", "standing by",
          {{"url", (args.tls_cert.empty() ? "http://" : "https://") + args.host + ":" +
                       std::to_string(*port)}});
    }
    return !stop.stopped();
  };
  auto store = PostgresStore::Open(args.store, options);
  stop_serving();  // the leader's API takes the address
  if (!failed.ok()) return failed;
  if (!store.ok() && stop.stopped()) return Unavailable("stopped while standing by");
  return store;
}

}  // namespace tessera::cli
