// A `tessera agent` child process for end-to-end tests: started against a daemon's URL with
// an agent token, its work directory and log under `dir`.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace tessera::testing {

class AgentProcess {
 public:
  AgentProcess(std::filesystem::path dir, std::string node, std::string address);
  ~AgentProcess();  // kills it if still running
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  // `extra`: more flags of `tessera agent` (e.g. --devices 1,0).
  void Start(const std::string& url, const std::string& token, std::vector<std::string> extra = {});
  void Kill9();
  // SIGTERM and wait; returns the exit status.
  int Stop();
  bool running() const { return pid_ > 0; }
  const std::string& node() const { return node_; }
  const std::filesystem::path& work_dir() const { return work_; }
  std::string log() const;

 private:
  std::filesystem::path dir_, work_;
  std::string node_, address_;
  pid_t pid_ = -1;
};

}  // namespace tessera::testing
