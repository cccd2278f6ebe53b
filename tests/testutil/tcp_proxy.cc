#include "testutil/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string_view>

namespace tessera::testing {
namespace {

bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, data, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

sockaddr_in Loopback(int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

}  // namespace

TcpProxy::TcpProxy(int upstream) : upstream_(upstream) {
  listener_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = Loopback(0);  // a free port, the kernel's choice
  if (bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(listener_, 64) != 0)
    return;
  socklen_t len = sizeof a;
  getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  acceptor_ = std::thread([this] { Accept(); });
}

TcpProxy::~TcpProxy() {
  stopping_ = true;
  shutdown(listener_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int s : sockets_)
      shutdown(s, SHUT_RDWR);
    threads.swap(threads_);
  }
  for (std::thread& t : threads)
    t.join();
  for (int s : sockets_)
    close(s);
  close(listener_);
}

void TcpProxy::LoseTheAnswerTo(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = text;
}

void TcpProxy::Accept() {
  while (!stopping_) {
    int client = accept(listener_, nullptr, nullptr);
    if (client < 0) return;
    int server = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = Loopback(upstream_);
    std::lock_guard<std::mutex> lock(mu_);
    sockets_.push_back(client);
    sockets_.push_back(server);
    if (connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      shutdown(client, SHUT_RDWR);
      continue;
    }
    threads_.emplace_back([this, client, server] { Pump(client, server); });
  }
}

void TcpProxy::Pump(int client, int server) {
  std::atomic<bool> cut{false};
  std::thread up([&] { Up(client, server, &cut); });
  // Server to client; after the cut, what the server answers is read and dropped.
  char buf[65536];
  for (;;) {
    ssize_t n = recv(server, buf, sizeof buf, 0);
    if (n <= 0) break;
    if (!cut && !WriteAll(client, buf, static_cast<size_t>(n))) break;
  }
  shutdown(client, SHUT_RDWR);
  up.join();
}

void TcpProxy::Up(int client, int server, std::atomic<bool>* cut) {
  char buf[65536];
  for (;;) {
    ssize_t n = recv(client, buf, sizeof buf, 0);
    if (n <= 0) break;
    bool lose = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!armed_.empty() &&
          std::string_view(buf, static_cast<size_t>(n)).find(armed_) != std::string_view::npos) {
        armed_.clear();
        lose = true;
      }
    }
    if (lose) *cut = true;  // before the bytes go: no byte of their answer reaches the client
    if (!WriteAll(server, buf, static_cast<size_t>(n))) break;
    if (lose) {
      ++lost_;
      // The client sees its connection end; the server finishes what it was sent (its
      // answer drained and dropped) before its side is closed too.
      shutdown(client, SHUT_RDWR);
      for (int i = 0; i < 20 && !stopping_; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      break;
    }
  }
  shutdown(server, SHUT_RDWR);
}

}  // namespace tessera::testing
