// What the API's handlers see of an HTTP exchange: the request as read (method, decoded path,
// query parameters, headers, body, the peer's address, the route's captures) and the answer
// they fill in. The transport (http_server.h) reads and writes them; these types know nothing
// of sockets, so handlers and tests use them alone.
//
// Thread-safety: plain values; one exchange belongs to one thread at a time.
#pragma once

#include <chrono>
#include <map>
#include <regex>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera {

// Header names compare without regard to case (RFC 9110 §5.1).
struct HeaderNameLess {
  bool operator()(std::string_view a, std::string_view b) const;
  using is_transparent = void;
};
using HttpHeaders = std::multimap<std::string, std::string, HeaderNameLess>;

struct HttpRequest {
  std::string method;                              // "GET", "POST", ...
  std::string path;                                // percent-decoded, without the query
  std::multimap<std::string, std::string> params;  // the query, decoded ('+' is a space)
  HttpHeaders headers;
  std::string body;
  std::string remote_addr;
  std::smatch matches;  // the route's captures, over `path`
  // When the whole request had been read: what a request's latency counts from.
  std::chrono::steady_clock::time_point received;

  // The header's first value, or "" when absent.
  std::string Header(std::string_view name) const;
  bool HasParam(std::string_view name) const { return params.count(std::string(name)) > 0; }
  // The parameter's first value, or "" when absent.
  std::string Param(std::string_view name) const;
};

struct HttpResponse {
  int status = -1;  // -1 until a handler answers
  std::string body;
  HttpHeaders headers;

  void SetHeader(std::string name, std::string value);
  void SetContent(std::string content, std::string_view content_type);
};

// Splits a request target ("/v1/jobs?limit=5&name=a%20b") into the decoded path and query
// parameters. An invalid percent escape, or a path that decodes to a NUL, is an error.
Status ParseTarget(std::string_view target, std::string* path,
                   std::multimap<std::string, std::string>* params);

}  // namespace tessera
