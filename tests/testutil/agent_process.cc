#include "testutil/agent_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
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
  // The token in a file only its owner reads, as docs/operations.md has it: never on the
  // agent's command line.
  std::string token_file = (dir_ / (node_ + ".token")).string();
  {
    std::ofstream(token_file, std::ios::trunc) << token << "\n";
    std::filesystem::permissions(
        token_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  }
  pid_ = fork();
  if (pid_ == 0) {
    FILE* o = freopen(log_path.c_str(), "a", stdout);
    (void)o;
    std::vector<std::string> args = {
        TESSERA_BINARY, "agent",     "--server", url,          "--token-file", token_file, "--node",
        node_,          "--address", address_,   "--work-dir", work_.string(), "--grace",  "2s"};
    // CI runs as root, and the fleets the tests use name no runAs user: their tasks (the tests'
    // own commands) run as root. The user switch has its own test (RunAs in agents_test.cc).
    if (geteuid() == 0) args.push_back("--allow-root-tasks");
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
