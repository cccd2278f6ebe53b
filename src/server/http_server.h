// The API's HTTP/1.1 server, event-driven over Boost.Beast and Asio: a few I/O threads accept,
// read and write every connection without blocking (keep-alive connections wait in epoll, with
// no timer of their own while requests keep coming), and a pool of workers runs the handlers,
// which may block (a submission waits for the store's durable commit). TLS through OpenSSL
// when a certificate is configured.
//
// Per connection: read a request (headers, then a body of at most `max_body_bytes`), hand it to
// a worker, write its answer, and read the next one. A body over the limit is answered 413
// (read and dropped first when it is not much larger, so the client sees the answer); bytes
// that are not HTTP are answered 400; both close the connection. A connection idle for
// `idle_timeout`, or a request that takes longer than that to arrive, is closed.
//
// Thread-safety: routes and hooks are set before Bind; Stop may be called from any thread.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "server/http_message.h"

namespace tessera {

struct HttpServerOptions {
  size_t max_body_bytes = 1 << 20;
  int io_threads = 1;
  int workers = 128;
  // The workers' and the I/O threads' CPU priority (Linux nice, 0-19), applied as each first
  // runs.
  int nice = 0;
  int io_nice = 0;
  int backlog = 4096;  // the listening socket's queue (the kernel caps it at somaxconn)
  std::chrono::milliseconds idle_timeout{60'000};
  std::string tls_cert, tls_key;  // PEM files; both or neither
};

class HttpServer {
 public:
  using Handler = std::function<void(const HttpRequest&, HttpResponse&)>;
  using ExceptionHandler =
      std::function<void(const HttpRequest&, HttpResponse&, std::exception_ptr)>;
  using Logger = std::function<void(const HttpRequest&, const HttpResponse&)>;
  // Fills in the body of an error answer from what went wrong, in words.
  using ErrorHandler =
      std::function<void(const HttpRequest&, HttpResponse&, const std::string& message)>;

  // Fails when the TLS certificate or key cannot be loaded.
  static Result<std::unique_ptr<HttpServer>> Create(HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // A route: the method and a regular expression the whole decoded path must match; its
  // groups are the request's `matches`. The first route that matches answers.
  void Get(std::string pattern, Handler handler);
  void Post(std::string pattern, Handler handler);
  void Delete(std::string pattern, Handler handler);
  // Called for an answer of status >= 400 that has no body yet: no route ("no such route",
  // 404), a request the transport refused (400, 413), a handler that set only a status.
  void SetErrorHandler(ErrorHandler handler);
  // Called when a handler throws; the answer is 500 unless it sets another.
  void SetExceptionHandler(ExceptionHandler handler);
  // Called once each answer is written (or failed to be), from the thread that wrote it.
  void SetLogger(Logger logger);

  // Binds and listens; returns the port (the one chosen when `port` is 0).
  Result<int> Bind(const std::string& host, int port);
  // Serves until Stop; returns once every handler that started has finished.
  void Run();
  void Stop();

  struct Impl;  // the server's state, for its connections (http_server.cc)

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Reads one request from `raw` as the server does (the same limits, target decoding and
// header handling) without a socket: for the fuzz target and tests. An error names what is
// wrong; a body over `max_body_bytes` is an error.
Result<HttpRequest> ParseHttpRequest(std::string_view raw, size_t max_body_bytes);

}  // namespace tessera
