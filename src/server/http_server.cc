#include "server/http_server.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <limits>
#include <optional>
#include <thread>
#include <variant>
#include <vector>

namespace tessera {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using Parser = http::request_parser<http::string_body>;
using Message = http::response<http::string_body>;

constexpr uint32_t kHeaderLimit = 16 << 10;
// A body over the limit is read and dropped before the 413 leaves (a client still sending would
// otherwise see its connection reset, not the answer) when it is at most this many times the
// limit; a larger one is refused at once.
constexpr uint64_t kDrainFactor = 16;

// A request the transport refuses before any handler sees it.
struct Refusal {
  int status;  // 400 or 413
  std::string message;
};

// Names the calling thread and lowers its priority, once per thread.
void SetUpThread(const char* name, int nice) {
  static thread_local bool set_up = false;
  if (set_up) return;
  pthread_setname_np(pthread_self(), name);
  // Linux: a thread's priority is set by its id; failing leaves it as it was.
  if (nice > 0) setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), nice);
  set_up = true;
}

void PrepareParser(Parser& p) {
  p.header_limit(kHeaderLimit);
  // The body's limit is checked once the header is read (CheckHeader), so that an oversized
  // body can be told from bytes that are not HTTP.
  p.body_limit(std::numeric_limits<uint64_t>::max());
}

Refusal TooLarge() {
  return Refusal{413, "the request body exceeds the size limit"};
}

// What a read that failed with `ec` is answered; none for a peer that went away, or was idle
// too long.
std::optional<Refusal> RefusalOf(beast::error_code ec) {
  if (ec == http::error::body_limit) return TooLarge();
  if (ec.category() == http::make_error_code(http::error::end_of_stream).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    return Refusal{400, "the request is not valid HTTP/1.1: " + ec.message()};
  }
  return std::nullopt;
}

// After the header: a declared body over the limit is refused; a chunked one is held to it.
std::optional<Refusal> CheckHeader(Parser& p, size_t max_body_bytes) {
  if (p.content_length() && *p.content_length() > max_body_bytes) return TooLarge();
  p.body_limit(max_body_bytes);
  return std::nullopt;
}

// The handlers' view of a request read whole; a refusal when its target is not valid.
std::variant<HttpRequest, Refusal> ToRequest(http::request<http::string_body>&& m,
                                             std::string remote) {
  HttpRequest r;
  r.method = std::string(m.method_string());
  if (Status s =
          ParseTarget(std::string_view(m.target().data(), m.target().size()), &r.path, &r.params);
      !s.ok()) {
    return Refusal{400, s.message()};
  }
  for (const auto& field : m) {
    r.headers.emplace(std::string(field.name_string()), std::string(field.value()));
  }
  r.body = std::move(m.body());
  r.remote_addr = std::move(remote);
  r.received = std::chrono::steady_clock::now();
  return r;
}

struct Route {
  std::string method;
  std::regex pattern;
  HttpServer::Handler handler;
};

}  // namespace

struct HttpServer::Impl {
  explicit Impl(HttpServerOptions o)
      : options(std::move(o)), pool(static_cast<size_t>(std::max(1, options.workers))) {}

  HttpServerOptions options;
  std::optional<ssl::context> tls;  // before io: the streams that use it die with io
  net::io_context io;
  tcp::acceptor acceptor{io};
  net::steady_timer accept_retry{io};
  net::thread_pool pool;
  std::vector<Route> routes;
  ErrorHandler error_handler;
  ExceptionHandler exception_handler;
  Logger logger;

  void Accept();
  // Runs the route's handler and the hooks: the whole answer but its transport.
  HttpResponse Answer(HttpRequest& req);
  // The answer to a request refused before routing.
  HttpResponse Refuse(const Refusal& r, HttpRequest& req);
};

namespace {

// One connection: reads requests one at a time, hands each to a worker, writes its answer.
// Everything but the handler runs on the connection's strand.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  template <class... Args>
  Session(HttpServer::Impl& server, std::string remote, Args&&... args)
      : server_(server), remote_(std::move(remote)), stream_(std::forward<Args>(args)...) {}

  void Start() {
    if constexpr (kTls) {
      Lowest().expires_after(server_.options.idle_timeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->Close();
                                self->ReadHeader();
                              });
    } else {
      ReadHeader();
    }
  }

 private:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void ReadHeader() {
    parser_.emplace();
    PrepareParser(*parser_);
    Lowest().expires_after(server_.options.idle_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    if (auto refusal = CheckHeader(*parser_, server_.options.max_body_bytes)) {
      return Drain(*refusal);
    }
    if (parser_->is_done()) return Dispatch();
    const auto& expect = parser_->get()[http::field::expect];
    if (beast::iequals(expect, "100-continue")) {
      auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                     parser_->get().version());
      http::async_write(stream_, *cont,
                        [self = this->shared_from_this(), cont](beast::error_code wec, size_t) {
                          if (wec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->OnReadError(ec);
                       self->Dispatch();
                     });
  }

  void OnReadError(beast::error_code ec) {
    if (auto refusal = RefusalOf(ec)) return Reject(*refusal);
    Close();
  }

  // Reads and drops the rest of an oversized body (when it is not much over the limit), then
  // refuses the request.
  void Drain(Refusal refusal) {
    uint64_t declared = parser_->content_length().value_or(0);
    if (declared > server_.options.max_body_bytes * kDrainFactor) return Reject(refusal);
    uint64_t buffered = buffer_.size();
    buffer_.consume(buffer_.size());
    DrainRest(declared - std::min(declared, buffered), std::move(refusal));
  }

  void DrainRest(uint64_t left, Refusal refusal) {
    if (left == 0) return Reject(refusal);
    auto scratch = buffer_.prepare(std::min<uint64_t>(left, 64 << 10));
    stream_.async_read_some(
        scratch, [self = this->shared_from_this(), left, refusal = std::move(refusal)](
                     beast::error_code ec, size_t n) mutable {
          if (ec) return self->Close();
          self->DrainRest(left - std::min<uint64_t>(left, n), std::move(refusal));
        });
  }

  // Answers a request refused by the transport, and closes the connection.
  void Reject(const Refusal& refusal) {
    HttpRequest req;
    if (parser_ && parser_->is_header_done()) {
      req.method = std::string(parser_->get().method_string());
      auto target = parser_->get().target();
      req.path = std::string(target.substr(0, target.find('?')));
    }
    req.remote_addr = remote_;
    req.received = std::chrono::steady_clock::now();
    HttpResponse res = server_.Refuse(refusal, req);
    Write(std::move(res), 11, false);
  }

  void Dispatch() {
    Lowest().expires_never();
    auto message = parser_->release();
    unsigned version = message.version();
    bool keep_alive = message.keep_alive();
    auto request = ToRequest(std::move(message), remote_);
    if (auto* refusal = std::get_if<Refusal>(&request)) return Reject(*refusal);
    net::post(server_.pool,
              [self = this->shared_from_this(), req = std::get<HttpRequest>(std::move(request)),
               version, keep_alive]() mutable {
                SetUpThread("api", self->server_.options.nice);
                HttpResponse res = self->server_.Answer(req);
                net::post(self->stream_.get_executor(),
                          [self, res = std::move(res), version, keep_alive]() mutable {
                            self->Write(std::move(res), version, keep_alive);
                          });
              });
  }

  void Write(HttpResponse res, unsigned version, bool keep_alive) {
    auto out = std::make_shared<Message>();
    out->version(version);
    out->result(static_cast<unsigned>(res.status));
    for (auto& [name, value] : res.headers) {
      out->insert(name, value);
    }
    out->keep_alive(keep_alive);
    out->body() = std::move(res.body);
    out->prepare_payload();
    Lowest().expires_after(server_.options.idle_timeout);
    http::async_write(stream_, *out,
                      [self = this->shared_from_this(), out](beast::error_code ec, size_t) {
                        if (ec || !out->keep_alive()) return self->Close();
                        self->ReadHeader();
                      });
  }

  void Close() {
    beast::error_code ec;
    if constexpr (kTls) {
      Lowest().expires_after(std::chrono::seconds(2));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        beast::error_code ignored;
        self->Lowest().socket().close(ignored);
      });
    } else {
      Lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
      Lowest().socket().close(ec);
    }
  }

  HttpServer::Impl& server_;
  std::string remote_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
};

}  // namespace

void HttpServer::Impl::Accept() {
  acceptor.async_accept(net::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors, most likely: try again shortly rather than spin.
      accept_retry.expires_after(std::chrono::milliseconds(50));
      accept_retry.async_wait([this](beast::error_code wec) {
        if (!wec) Accept();
      });
      return;
    }
    socket.set_option(tcp::no_delay(true), ec);  // small answers leave at once
    auto peer = socket.remote_endpoint(ec);
    std::string remote = ec ? "" : peer.address().to_string();
    if (tls) {
      using Tls = beast::ssl_stream<beast::tcp_stream>;
      std::make_shared<Session<Tls>>(*this, std::move(remote), std::move(socket), *tls)->Start();
    } else {
      std::make_shared<Session<beast::tcp_stream>>(*this, std::move(remote), std::move(socket))
          ->Start();
    }
    Accept();
  });
}

HttpResponse HttpServer::Impl::Answer(HttpRequest& req) {
  HttpResponse res;
  const Route* route = nullptr;
  for (const Route& r : routes) {
    if (req.method == r.method && std::regex_match(req.path, req.matches, r.pattern)) {
      route = &r;
      break;
    }
  }
  std::string message = "the request was refused";
  if (route == nullptr) {
    res.status = 404;
    message = "no such route";
  } else {
    try {
      route->handler(req, res);
    } catch (...) {
      res.status = 500;
      if (exception_handler) exception_handler(req, res, std::current_exception());
    }
    if (res.status < 0) res.status = 200;
  }
  if (res.status >= 400 && res.body.empty() && error_handler) error_handler(req, res, message);
  if (logger) logger(req, res);
  return res;
}

HttpResponse HttpServer::Impl::Refuse(const Refusal& r, HttpRequest& req) {
  HttpResponse res;
  res.status = r.status;
  if (error_handler) error_handler(req, res, r.message);
  if (res.body.empty()) res.SetContent(r.message + "\n", "text/plain");
  res.SetHeader("Connection", "close");
  if (logger) logger(req, res);
  return res;
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  Stop();
  impl_->pool.join();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Create(HttpServerOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  const HttpServerOptions& o = impl->options;
  if (!o.tls_cert.empty() || !o.tls_key.empty()) {
    impl->tls.emplace(ssl::context::tls_server);
    impl->tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1);
    beast::error_code ec;
    impl->tls->use_certificate_chain_file(o.tls_cert, ec);
    if (!ec) impl->tls->use_private_key_file(o.tls_key, ssl::context::pem, ec);
    if (ec) {
      return InvalidArgument("cannot load the certificate " + o.tls_cert + " and its key " +
                             o.tls_key + " (PEM files, the key unencrypted): " + ec.message());
    }
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

void HttpServer::Get(std::string pattern, Handler handler) {
  impl_->routes.push_back({"GET", std::regex(pattern), std::move(handler)});
}
void HttpServer::Post(std::string pattern, Handler handler) {
  impl_->routes.push_back({"POST", std::regex(pattern), std::move(handler)});
}
void HttpServer::Delete(std::string pattern, Handler handler) {
  impl_->routes.push_back({"DELETE", std::regex(pattern), std::move(handler)});
}
void HttpServer::SetErrorHandler(ErrorHandler handler) {
  impl_->error_handler = std::move(handler);
}
void HttpServer::SetExceptionHandler(ExceptionHandler handler) {
  impl_->exception_handler = std::move(handler);
}
void HttpServer::SetLogger(Logger logger) {
  impl_->logger = std::move(logger);
}

Result<int> HttpServer::Bind(const std::string& host, int port) {
  beast::error_code ec;
  tcp::resolver resolver(impl_->io);
  auto found = resolver.resolve(host, std::to_string(port), tcp::resolver::passive, ec);
  if (ec || found.empty()) {
    return InvalidArgument("cannot resolve " + host + (ec ? ": " + ec.message() : ""));
  }
  tcp::endpoint endpoint = found.begin()->endpoint();
  tcp::acceptor& a = impl_->acceptor;
  a.open(endpoint.protocol(), ec);
  if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) a.bind(endpoint, ec);
  if (!ec) a.listen(impl_->options.backlog, ec);
  if (ec) {
    beast::error_code ignored;
    a.close(ignored);
    return Unavailable("cannot listen on " + host + ":" + std::to_string(port) + ": " +
                       ec.message());
  }
  return static_cast<int>(a.local_endpoint().port());
}

void HttpServer::Run() {
  impl_->Accept();
  auto io = [this] {
    SetUpThread("api-io", impl_->options.io_nice);
    impl_->io.run();
  };
  std::vector<std::thread> others;
  for (int i = 1; i < impl_->options.io_threads; ++i)
    others.emplace_back(io);
  io();
  for (std::thread& t : others)
    t.join();
  // Handlers that started finish before Run returns: they use what the caller owns.
  impl_->pool.join();
}

void HttpServer::Stop() {
  impl_->io.stop();
}

Result<HttpRequest> ParseHttpRequest(std::string_view raw, size_t max_body_bytes) {
  Parser p;
  PrepareParser(p);
  p.eager(false);  // stop after the header, to check it before the body as the server does
  beast::error_code ec;
  size_t used = 0;
  bool checked = false;
  while (!p.is_done()) {
    // The rest of the input is offered whole: wanting more, or taking none of it, means the
    // request is cut short.
    size_t n =
        used == raw.size() ? 0 : p.put(net::buffer(raw.data() + used, raw.size() - used), ec);
    used += n;
    if (ec == http::error::need_more || (!ec && n == 0)) {
      if (used == raw.size() || n == 0) return InvalidArgument("the request is incomplete");
      ec = {};
    } else if (ec) {
      auto refusal = RefusalOf(ec);
      return InvalidArgument(refusal ? refusal->message
                                     : "cannot read the request: " + ec.message());
    }
    if (p.is_header_done() && !checked) {
      checked = true;
      if (auto refusal = CheckHeader(p, max_body_bytes)) return InvalidArgument(refusal->message);
      p.eager(true);
    }
  }
  auto request = ToRequest(p.release(), "");
  if (auto* refusal = std::get_if<Refusal>(&request)) return InvalidArgument(refusal->message);
  return std::get<HttpRequest>(std::move(request));
}

}  // namespace tessera
