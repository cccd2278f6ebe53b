// tessera serve's side of a control plane of several daemons on one PostgreSQL store: the stop
// signals, watched from the start (a standby stops as a leader does), and the wait as a
// standby — answering on its address where the leader is (server/standby_api.h) — until this
// daemon takes the store's lease.
#pragma once

#include <signal.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/status.h"
#include "store/postgres_store.h"

namespace tessera::cli {

// serve's log: whole JSON lines from any thread.
using LogLine = std::function<void(const std::string& level, const std::string& msg,
                                   const nlohmann::ordered_json& fields)>;

// Waits for SIGINT or SIGTERM (`signals`, blocked in every thread) on a thread of its own;
// then, or at Stop, runs what OnStop set last. Thread-safety: every method from any thread.
class StopWatch {
 public:
  StopWatch(const sigset_t& signals, LogLine log);
  ~StopWatch();
  StopWatch(const StopWatch&) = delete;
  StopWatch& operator=(const StopWatch&) = delete;

  // Runs `stop` at the stop (at once when it came already); null: nothing.
  void OnStop(std::function<void()> stop);
  // Stops as a signal would, for `why` (logged).
  void Stop(const std::string& why);
  bool stopped() const { return stopped_; }

 private:
  void Fire();

  sigset_t signals_;
  LogLine log_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> exiting_{false};  // the destructor wakes the thread
  std::mutex mu_;
  std::function<void()> on_stop_;
  std::thread thread_;
};

struct StandbyArgs {
  std::string store;  // postgres://...
  std::string host;   // where the standby answers (the daemon's --listen)
  int port = 0;
  std::string tls_cert, tls_key;
  std::chrono::milliseconds lease{3000};
};

// Opens the store, taking its lease; while another daemon holds it, answers on host:port as a
// standby and says so in the log (once per leader). Unavailable or FailedPrecondition as
// PostgresStore::Open; Unavailable when stopped while waiting (stop.stopped() says so).
Result<std::unique_ptr<PostgresStore>> OpenLeading(const StandbyArgs& args, StopWatch& stop,
                                                   const LogLine& log);

}  // namespace tessera::cli
