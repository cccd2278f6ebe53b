#include "testutil/slurm_cluster.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "testutil/run_tessera.h"

namespace tessera::testing {

namespace {

std::string Script() {
  return std::string(TESSERA_SOURCE_DIR) + "/scripts/slurm-cluster";
}

int Shell(const std::string& command, std::string* out) {
  out->clear();
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    out->append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

int SlurmPortBase() {
  // Below the ephemeral range (32768 and up), where the daemons and clients get their ports.
  return 20000 + static_cast<int>(getpid() % 600) * 20;
}

SlurmCluster::SlurmCluster(std::filesystem::path dir, std::string name, int port,
                           std::vector<std::string> nodes, int gpus)
    : dir_(std::move(dir)),
      name_(std::move(name)),
      port_(port),
      nodes_(std::move(nodes)),
      gpus_(gpus) {}

SlurmCluster::~SlurmCluster() {
  std::string out;
  Shell(Script() + " down " + dir_.string(), &out);
}

bool SlurmCluster::Up(std::string* error) {
  std::string list;
  for (const std::string& n : nodes_)
    list += (list.empty() ? "" : ",") + n;
  std::string out;
  int rc = Shell("timeout 90 " + Script() + " up " + dir_.string() + " " + name_ + " " +
                     std::to_string(port_) + " " + std::to_string(port_ + 1) + " " + list + " " +
                     std::to_string(gpus_),
                 &out);
  if (rc != 0) *error = out;
  return rc == 0;
}

void SlurmCluster::StopController() {
  std::string pid = ReadText(dir_ / "run" / "slurmctld.pid");
  if (pid.empty()) return;
  pid_t p = std::stoi(pid);
  kill(p, SIGTERM);
  for (int i = 0; i < 100 && kill(p, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

bool SlurmCluster::StartController(std::string* error) {
  std::string out;
  int rc = Shell("SLURM_CONF=" + conf() + " /usr/sbin/slurmctld -f " + conf(), &out);
  if (rc != 0) {
    *error = out;
    return false;
  }
  for (int i = 0; i < 100; ++i) {
    if (Run("sinfo -h -o %T", &rc).find("idle") != std::string::npos && rc == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  *error = "the controller did not answer again";
  return false;
}

std::string SlurmCluster::Run(const std::string& command, int* status) const {
  std::string out;
  int rc = Shell("SLURM_CONF=" + conf() + " timeout 20 " + command, &out);
  if (status != nullptr) *status = rc;
  return out;
}

}  // namespace tessera::testing
