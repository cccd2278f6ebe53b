// A real Slurm cluster for end-to-end tests, started with scripts/slurm-cluster (the shared
// recipe, several slurmd nodes on this host, fake GPUs as GRES): its controller can be stopped
// and started again, its nodes set down and resumed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tessera::testing {

class SlurmCluster {
 public:
  // `nodes` become the Slurm nodes' names (the fleet's generated names, e.g. east-gpu-0000),
  // each with `gpus` GPUs; the controller listens on `port`, node i on port + 1 + i.
  SlurmCluster(std::filesystem::path dir, std::string name, int port,
               std::vector<std::string> nodes, int gpus);
  ~SlurmCluster();  // stops every daemon
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // Starts the cluster and waits until its nodes are idle; false (with the output in
  // `error`) when it did not come up.
  bool Up(std::string* error);
  // Stops only the controller (slurmctld); the nodes' daemons and their jobs go on.
  void StopController();
  // Starts the controller again (with its saved state).
  bool StartController(std::string* error);
  // Runs a Slurm command (`scontrol ...`, `squeue ...`) against this cluster: its output.
  std::string Run(const std::string& command, int* status = nullptr) const;

  std::string conf() const { return (dir_ / "etc" / "slurm.conf").string(); }
  const std::filesystem::path& dir() const { return dir_; }
  const std::string& name() const { return name_; }

 private:
  std::filesystem::path dir_;
  std::string name_;
  int port_;
  std::vector<std::string> nodes_;
  int gpus_;
};

// A base port for this test process's Slurm clusters (parallel tests do not collide).
int SlurmPortBase();

}  // namespace tessera::testing
