#include "testutil/daemon_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "testutil/run_tessera.h"

namespace tessera::testing {

DaemonProcess::DaemonProcess(std::filesystem::path dir, std::string config, std::string admin_token)
    : dir_(std::move(dir)), config_(std::move(config)), token_(std::move(admin_token)) {
  std::filesystem::create_directories(dir_);
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) Kill9();
}

bool DaemonProcess::Start() {
  Launch();
  return WaitReady(60);
}

void DaemonProcess::Launch() {
  std::filesystem::path ready = dir_ / "url";
  std::filesystem::remove(ready);
  ++starts_;
  std::string out = (dir_ / ("out." + std::to_string(starts_))).string();
  std::string err = (dir_ / ("log." + std::to_string(starts_))).string();
  std::string store_flag = store_flag_.empty() ? "sqlite:" + store().string() : store_flag_;
  pid_ = fork();
  if (pid_ == 0) {
    setenv("TESSERA_ADMIN_TOKEN", token_.c_str(), 1);
    FILE* o = freopen(out.c_str(), "w", stdout);
    (void)o;
    std::vector<std::string> args = {TESSERA_BINARY, "serve",       "--config", config_,
                                     "--store",      store_flag,    "--listen", listen_,
                                     "--ready-file", ready.string()};
    args.insert(args.end(), extra_.begin(), extra_.end());
    ExecTessera(err, args);
  }
}

bool DaemonProcess::WaitReady(int seconds) {
  std::filesystem::path ready = dir_ / "url";
  for (int i = 0; i < seconds * 10 && pid_ > 0; ++i) {
    std::string url = ReadText(ready);
    if (!url.empty()) {
      while (!url.empty() && (url.back() == '\n' || url.back() == '\r'))
        url.pop_back();
      url_ = url;
      return true;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

void ExecTessera(const std::string& log, std::vector<std::string> args) {
  FILE* e = freopen(log.c_str(), "a", stderr);
  (void)e;
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(TESSERA_BINARY, argv.data());
  _exit(127);
}

int SignalAndReap(pid_t& pid, int sig) {
  if (pid <= 0) return -1;
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void DaemonProcess::Kill9() {
  SignalAndReap(pid_, SIGKILL);
}

int DaemonProcess::Stop() {
  return SignalAndReap(pid_, SIGTERM);
}

void DaemonProcess::KeepPort() {
  listen_ = url_.substr(url_.find("://") + 3);
}

std::string DaemonProcess::log() const {
  return ReadText(dir_ / ("out." + std::to_string(starts_))) +
         ReadText(dir_ / ("log." + std::to_string(starts_)));
}

std::string DaemonProcess::CliEnv(const std::string& token) const {
  return "TESSERA_SERVER=" + url_ + " TESSERA_TOKEN=" + (token.empty() ? token_ : token) +
         " HOME=" + dir_.string() + " ";
}

}  // namespace tessera::testing
