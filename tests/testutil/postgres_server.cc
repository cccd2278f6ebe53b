#include "testutil/postgres_server.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "testutil/run_tessera.h"

namespace tessera::testing {

namespace {

std::string PgClusterScript() {
  return std::string(TESSERA_SOURCE_DIR) + "/scripts/pg-cluster";
}

// `s` as one word for the shell.
std::string Quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Whether nothing listens on loopback port `port` now.
bool PortFree(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool free = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return free;
}

}  // namespace

int FreeLoopbackPort(int after) {
  for (int i = 0; i < 4900; ++i) {
    int port = 15000 + static_cast<int>((getpid() * 7 + i) % 4900);
    if (port > after && PortFree(port)) return port;
  }
  return after + 1;
}

PostgresServer::PostgresServer(std::filesystem::path dir, bool durable)
    : dir_(std::move(dir)), durable_(durable), port_(FreeLoopbackPort()) {}

PostgresServer::~PostgresServer() {
  Crash();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

bool PostgresServer::Up(std::string* error) {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  std::string out;
  int rc = RunShell("timeout 60 " + PgClusterScript() + " up " + dir_.string() + " " +
                        std::to_string(port_) + " tessera" + (durable_ ? "" : " --fast"),
                    &out);
  if (rc != 0) *error = out;
  return rc == 0;
}

void PostgresServer::Crash() {
  // The server's pid before it goes: pg_ctl waits for it, and should it not, it is killed, so
  // that no test leaves a server behind.
  const std::string pid_line = ReadText(dir_ / "data" / "postmaster.pid");
  std::string out;
  RunShell(PgClusterScript() + " stop " + dir_.string(), &out);
  const pid_t pid = static_cast<pid_t>(std::atoi(pid_line.c_str()));
  if (pid <= 0) return;
  // Still this server (its command line names its folder), not a process that took its pid.
  std::string cmdline = ReadText("/proc/" + std::to_string(pid) + "/cmdline");
  if (cmdline.find(dir_.string()) != std::string::npos) kill(pid, SIGKILL);
}

bool PostgresServer::Start(std::string* error) {
  std::string out;
  int rc = RunShell("timeout 60 " + PgClusterScript() + " start " + dir_.string(), &out);
  if (rc != 0) *error = out;
  return rc == 0;
}

std::string PostgresServer::Sql(const std::string& sql, int* status) const {
  std::string out;
  int rc = RunShell(
      "timeout 20 psql -X -q -A -t -v ON_ERROR_STOP=1 " + Quoted(url()) + " -c " + Quoted(sql),
      &out);
  if (status != nullptr) *status = rc;
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  return out;
}

std::string PostgresServer::url() const {
  return "postgres://postgres@127.0.0.1:" + std::to_string(port_) + "/tessera";
}

}  // namespace tessera::testing
