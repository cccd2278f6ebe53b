// The API's HTTP server on a loopback port, driven by a real client (cpp-httplib's) and by raw
// sockets for what a well-behaved client never sends.
#include "server/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

namespace tessera {
namespace {

// A server with a few routes, running on its own thread until the test ends.
class TestServer {
 public:
  explicit TestServer(HttpServerOptions o = {}) {
    o.workers = 8;
    auto created = HttpServer::Create(o);
    EXPECT_TRUE(created.ok()) << created.status().message();
    server_ = std::move(*created);
    server_->Get("/echo/([^/]+)", [](const HttpRequest& req, HttpResponse& res) {
      res.SetContent("path=" + req.path + " id=" + std::string(req.matches[1]) +
                         " q=" + req.Param("q") + " h=" + req.Header("x-thing"),
                     "text/plain");
    });
    server_->Post("/body", [](const HttpRequest& req, HttpResponse& res) {
      res.status = 201;
      res.SetHeader("Location", "/body/1");
      res.SetContent(std::to_string(req.body.size()), "text/plain");
    });
    server_->Get("/slow", [this](const HttpRequest&, HttpResponse& res) {
      slow_started_.set_value();
      release_.get_future().wait();
      res.SetContent("done", "text/plain");
    });
    server_->Get("/throws",
                 [](const HttpRequest&, HttpResponse&) { throw std::runtime_error("boom"); });
    server_->Delete("/status-only",
                    [](const HttpRequest&, HttpResponse& res) { res.status = 409; });
    server_->SetErrorHandler([](const HttpRequest&, HttpResponse& res, const std::string& m) {
      res.SetContent("error: " + m, "text/plain");
    });
    server_->SetExceptionHandler([](const HttpRequest&, HttpResponse& res, std::exception_ptr) {
      res.SetContent("exception", "text/plain");
    });
    server_->SetLogger([this](const HttpRequest&, const HttpResponse&) { ++logged; });
    auto port = server_->Bind("127.0.0.1", 0);
    EXPECT_TRUE(port.ok()) << port.status().message();
    port_ = *port;
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~TestServer() {
    server_->Stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void WaitSlowStarted() { slow_started_.get_future().wait(); }
  void ReleaseSlow() { release_.set_value(); }

  std::atomic<int> logged{0};

 private:
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::thread thread_;
  std::promise<void> slow_started_, release_;
};

// Sends `bytes` on a fresh connection and returns everything the server writes until it
// closes (or 5 s pass).
std::string RawExchange(int port, const std::string& bytes, bool half_close = false) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "connect failed";
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  if (half_close) shutdown(fd, SHUT_WR);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

TEST(HttpServer, RoutesDecodeThePathAndQueryAndKeepTheConnection) {
  TestServer s;
  httplib::Client c(s.url());
  c.set_url_encode(false);  // the target as written
  auto r = c.Get("/echo/a%20b?q=x+y%26z&other=1", {{"X-Thing", "v"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "path=/echo/a b id=a b q=x y&z h=v");
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/plain");
  // Many requests on the one keep-alive connection.
  for (int i = 0; i < 50; ++i) {
    auto p = c.Post("/body", std::string(static_cast<size_t>(i), 'x'), "text/plain");
    ASSERT_TRUE(p) << i;
    EXPECT_EQ(p->status, 201);
    EXPECT_EQ(p->body, std::to_string(i));
    EXPECT_EQ(p->get_header_value("Location"), "/body/1");
  }
  EXPECT_EQ(s.logged.load(), 51);
}

TEST(HttpServer, AnswersNoRouteErrorsAndExceptions) {
  TestServer s;
  httplib::Client c(s.url());
  auto r = c.Get("/nowhere");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, "error: no such route");
  r = c.Post("/echo/x", "", "text/plain");  // the path exists for GET only
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  r = c.Get("/throws");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(r->body, "exception");
  r = c.Delete("/status-only");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 409);
  EXPECT_EQ(r->body, "error: the request was refused");
  // The connection survived all of it.
  r = c.Get("/echo/1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(HttpServer, RefusesOversizedBodiesWith413AndTheClientReadsIt) {
  HttpServerOptions o;
  o.max_body_bytes = 1000;
  TestServer s(o);
  httplib::Client c(s.url());
  auto r = c.Post("/body", std::string(1000, 'x'), "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201);
  // Declared larger: read and dropped, then refused.
  r = c.Post("/body", std::string(5000, 'x'), "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(r->body, "error: the request body exceeds the size limit");
  // Chunked, and larger once its chunks are added up.
  std::string chunked =
      "POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3e8\r\n" +
      std::string(1000, 'y') + "\r\n10\r\n" + std::string(16, 'y') + "\r\n0\r\n\r\n";
  std::string out = RawExchange(s.port(), chunked);
  EXPECT_EQ(out.rfind("HTTP/1.1 413", 0), 0u) << out;
  // Far larger than the limit: refused at once.
  out = RawExchange(s.port(), "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 413", 0), 0u) << out;
}

TEST(HttpServer, AnswersBytesThatAreNotHttpWith400) {
  TestServer s;
  std::string out = RawExchange(s.port(), "GARBAGE\r\n\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 400", 0), 0u) << out;
  EXPECT_NE(out.find("not valid HTTP"), std::string::npos) << out;
  out = RawExchange(s.port(), "GET /echo/%zz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(out.rfind("HTTP/1.1 400", 0), 0u) << out;
  EXPECT_NE(out.find("percent escape"), std::string::npos) << out;
  // Half a request, then the client goes: nothing to answer, and the server goes on.
  out = RawExchange(s.port(), "POST /body HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc", true);
  EXPECT_EQ(out, "");
  httplib::Client c(s.url());
  auto r = c.Get("/echo/still-here");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(HttpServer, AnswersExpect100ContinueBeforeTheBody) {
  TestServer s;
  std::string out =
      RawExchange(s.port(),
                  "POST /body HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n"
                  "Connection: close\r\n\r\nabc");
  EXPECT_EQ(out.rfind("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201", 0), 0u) << out;
}

TEST(HttpServer, ABlockedHandlerHoldsNeitherOtherConnectionsNorStop) {
  auto s = std::make_unique<TestServer>();
  auto slow = std::async(std::launch::async, [&] {
    httplib::Client c(s->url());
    auto r = c.Get("/slow");
    return r ? r->body : std::string("no answer");
  });
  s->WaitSlowStarted();
  httplib::Client other(s->url());
  auto r = other.Get("/echo/fast");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  s->ReleaseSlow();
  EXPECT_EQ(slow.get(), "done");
  s.reset();  // Stop and Run's return with connections still open
}

TEST(HttpServer, TellsWhyItCannotStart) {
  HttpServerOptions o;
  o.tls_cert = "/nonexistent/cert.pem";
  o.tls_key = "/nonexistent/key.pem";
  auto created = HttpServer::Create(o);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.status().message().find("/nonexistent/cert.pem"), std::string::npos);
  TestServer s;
  auto again = HttpServer::Create({});
  ASSERT_TRUE(again.ok());
  auto port = (*again)->Bind("127.0.0.1", s.port());
  ASSERT_FALSE(port.ok());
  EXPECT_NE(port.status().message().find("cannot listen on 127.0.0.1:"), std::string::npos)
      << port.status().message();
}

TEST(ParseHttpRequest, ReadsWhatTheServerReads) {
  auto r = ParseHttpRequest(
      "POST /v1/jobs/a%2Fb?limit=5&name=x+y HTTP/1.1\r\nHost: h\r\nIdempotency-Key: k1\r\n"
      "Content-Length: 2\r\n\r\n{}",
      100);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->method, "POST");
  EXPECT_EQ(r->path, "/v1/jobs/a/b");
  EXPECT_EQ(r->Param("limit"), "5");
  EXPECT_EQ(r->Param("name"), "x y");
  EXPECT_FALSE(r->HasParam("after"));
  EXPECT_EQ(r->Header("idempotency-key"), "k1");
  EXPECT_EQ(r->body, "{}");

  struct Case {
    std::string raw, message;
  };
  for (const Case& c : std::vector<Case>{
           {"GET / HTTP/1.1\r\nHost: h\r\n", "incomplete"},
           {"POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\n{}", "incomplete"},
           {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}", "incomplete"},
           {"NOT HTTP\r\n\r\n", "not valid HTTP"},
           {"GET /%4 HTTP/1.1\r\n\r\n", "percent escape"},
           {"GET /a%00b HTTP/1.1\r\n\r\n", "NUL"},
           {"POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n", "size limit"},
           {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n" + std::string(101, 'x') +
                "\r\n0\r\n\r\n",
            "size limit"},
       }) {
    auto bad = ParseHttpRequest(c.raw, 100);
    ASSERT_FALSE(bad.ok()) << c.raw;
    EXPECT_NE(bad.status().message().find(c.message), std::string::npos)
        << c.raw << ": " << bad.status().message();
  }
}

}  // namespace
}  // namespace tessera
