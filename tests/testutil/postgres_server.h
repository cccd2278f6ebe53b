// A real PostgreSQL 15 for end-to-end tests, started with scripts/pg-cluster (the shared
// recipe) in a folder of its own on a free loopback port, and stopped when destroyed. It can
// be crashed (an immediate shutdown, as a kill -9 of the server would) and started again.
#pragma once

#include <filesystem>
#include <string>

namespace tessera::testing {

// A loopback port above `after` that nothing listens on now: below the ephemeral range and
// apart from the Slurm tests' (20000 and up), chosen by the process id so that parallel tests
// start apart.
int FreeLoopbackPort(int after = 0);

class PostgresServer {
 public:
  // `durable`: fsync and synchronous commit on (what a crash test needs); off is faster.
  PostgresServer(std::filesystem::path dir, bool durable);
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Starts a new cluster; false (with the script's output in `error`) when it did not come up.
  bool Up(std::string* error);
  // Stops the server at once (immediate shutdown: no checkpoint, as after a crash).
  void Crash();
  // Starts it again on the same folder and port.
  bool Start(std::string* error);
  // Runs SQL through psql: its output (unaligned, tuples only).
  std::string Sql(const std::string& sql, int* status = nullptr) const;

  // postgres://postgres@127.0.0.1:PORT/tessera
  std::string url() const;
  int port() const { return port_; }

 private:
  std::filesystem::path dir_;
  bool durable_;
  int port_;
};

}  // namespace tessera::testing
