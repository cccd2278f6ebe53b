// A TCP proxy on loopback for tests that need a connection to fail at a chosen moment: it
// passes bytes both ways between its clients and an upstream port, and once armed, when a
// client sends bytes holding a given text, it passes them upstream and then hangs up on that
// client without passing the answer back (the upstream side is kept open and drained for a
// while, so that the server does what it was sent): a request that took, its answer lost.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tessera::testing {

class TcpProxy {
 public:
  // Listens on a free loopback port, forwarding to 127.0.0.1:`upstream`.
  explicit TcpProxy(int upstream);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  int port() const { return port_; }
  // The next client bytes that hold `text` are passed on and their answer lost (once).
  void LoseTheAnswerTo(const std::string& text);
  // How many answers were lost so far.
  int lost() const { return lost_; }

 private:
  void Accept();
  void Pump(int client, int server);
  // Client to server: passes bytes on, and hangs up on the client at the armed text.
  void Up(int client, int server, std::atomic<bool>* cut);

  int upstream_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::string armed_;  // under mu_: "" = none
  std::atomic<int> lost_{0};
  std::vector<std::thread> threads_;  // under mu_
  std::vector<int> sockets_;          // under mu_: closed at the end
  std::thread acceptor_;
};

}  // namespace tessera::testing
