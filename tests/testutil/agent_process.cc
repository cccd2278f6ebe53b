#include "testutil/agent_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "testutil/daemon_process.h"
#include "testutil/run_tessera.h"

namespace tessera::testing {

AgentProcess::AgentProcess(std::filesystem::path dir, std::string node, std::string address)
    : dir_(std::move(dir)),
      work_(dir_ / node),
      node_(std::move(node)),
      address_(std::move(address)) {
  std::filesystem::create_directories(work_);
}

AgentProcess::~AgentProcess() {
  if (pid_ > 0) Kill9();
}

void AgentProcess::Start(const std::string& url, const std::string& token,
                         std::vector<std::string> extra) {
  std::string log_path = (dir_ / (node_ + ".log")).string();
  pid_ = fork();
  if (pid_ == 0) {
    FILE* o = freopen(log_path.c_str(), "a", stdout);
    (void)o;
    std::vector<std::string> args = {
        TESSERA_BINARY, "agent",     "--server", url,          "--token",      token,     "--node",
        node_,          "--address", address_,   "--work-dir", work_.string(), "--grace", "2s"};
    args.insert(args.end(), extra.begin(), extra.end());
    ExecTessera(log_path, args);
  }
}

void AgentProcess::Kill9() {
  SignalAndReap(pid_, SIGKILL);
}

int AgentProcess::Stop() {
  return SignalAndReap(pid_, SIGTERM);
}

std::string AgentProcess::log() const {
  return ReadText(dir_ / (node_ + ".log"));
}

}  // namespace tessera::testing
