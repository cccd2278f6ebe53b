// Fuzzes how the API's server reads a request (Boost.Beast's parser with our limits, then the
// target's decoding and the headers): any bytes give a request or an error, never a crash, hang
// or sanitizer report; a request read has a path without NUL and a body within the limit.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/http_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kLimit = 4096;
  auto req = tessera::ParseHttpRequest(std::string_view(reinterpret_cast<const char*>(data), size),
                                       kLimit);
  if (req.ok()) {
    if (req->body.size() > kLimit || req->path.find('\0') != std::string::npos) std::abort();
    if (req->method.empty()) std::abort();
  }
  return 0;
}
