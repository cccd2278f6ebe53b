// A real `tessera serve` for end-to-end tests: started as a child process on a free loopback
// port with its own store file, stopped (SIGTERM) or killed (SIGKILL) by the test.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tessera::testing {

// Sends `sig` to child `pid`, reaps it and sets `pid` to -1; its exit status (-1 when it
// did not exit, or when there was no child).
int SignalAndReap(pid_t& pid, int sig);
// In a forked child: runs the tessera binary with `args` (args[0] is its path), standard error
// appended to `log`. Never returns.
[[noreturn]] void ExecTessera(const std::string& log, std::vector<std::string> args);

class DaemonProcess {
 public:
  // `dir` holds the store (dir/tessera.db), the ready file and the logs.
  DaemonProcess(std::filesystem::path dir, std::string config,
                std::string admin_token = "test-admin-token");
  ~DaemonProcess();  // kills it if still running

  // Starts the daemon and waits (up to 60 s) until it accepts requests. False on failure,
  // with the log in `error()`.
  bool Start();
  // Starts the daemon without waiting: a standby (several daemons on one PostgreSQL store)
  // answers only once it leads. WaitReady waits up to `seconds` for it to lead.
  void Launch();
  bool WaitReady(int seconds = 60);
  void Kill9();
  // SIGTERM and wait; returns the exit status.
  int Stop();
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // Flags added to `tessera serve` from the next Start on (e.g. --tls-cert F --tls-key K).
  void set_extra_args(std::vector<std::string> args) { extra_ = std::move(args); }
  // The next Start listens on the port the last one got (clients such as agents keep it).
  void KeepPort();
  // The store (`--store`) from the next Start on, instead of sqlite:DIR/tessera.db; and the
  // address to listen on (HOST:PORT), instead of a free port.
  void set_store(std::string flag) { store_flag_ = std::move(flag); }
  void set_listen(std::string listen) { listen_ = std::move(listen); }

  const std::string& url() const { return url_; }
  const std::string& admin_token() const { return token_; }
  std::filesystem::path store() const { return dir_ / "tessera.db"; }
  std::string log() const;
  // The environment prefix that points the CLI at this daemon as admin.
  std::string CliEnv(const std::string& token = "") const;

 private:
  std::filesystem::path dir_;
  std::string config_;
  std::string token_;
  std::string url_;
  std::vector<std::string> extra_;
  std::string listen_ = "127.0.0.1:0";
  std::string store_flag_;  // "" = sqlite:store()
  pid_t pid_ = -1;
  int starts_ = 0;
};

}  // namespace tessera::testing
