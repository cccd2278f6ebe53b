// A real `tessera serve` for end-to-end tests: started as a child process on a free loopback
// port with its own store file, stopped (SIGTERM) or killed (SIGKILL) by the test.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tessera::testing {

class DaemonProcess {
 public:
  // `dir` holds the store (dir/tessera.db), the ready file and the logs.
  DaemonProcess(std::filesystem::path dir, std::string config,
                std::string admin_token = "test-admin-token");
  ~DaemonProcess();  // kills it if still running

  // Starts the daemon and waits (up to 60 s) until it accepts requests. False on failure,
  // with the log in `error()`.
  bool Start();
  void Kill9();
  // SIGTERM and wait; returns the exit status.
  int Stop();
  bool running() const { return pid_ > 0; }
  // Flags added to `tessera serve` from the next Start on (e.g. --tls-cert F --tls-key K).
  void set_extra_args(std::vector<std::string> args) { extra_ = std::move(args); }

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
  pid_t pid_ = -1;
  int starts_ = 0;
};

}  // namespace tessera::testing
