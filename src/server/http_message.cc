#include "server/http_message.h"

#include <algorithm>
#include <cctype>

namespace tessera {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `in` (and '+' as a space where `plus_is_space`, as in a query).
Result<std::string> Decode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size() || HexValue(in[i + 1]) < 0 || HexValue(in[i + 2]) < 0) {
        return InvalidArgument("invalid percent escape in the request's target");
      }
      out.push_back(static_cast<char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2])));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

bool HeaderNameLess::operator()(std::string_view a, std::string_view b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) <
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::string HttpRequest::Header(std::string_view name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

std::string HttpRequest::Param(std::string_view name) const {
  auto it = params.find(std::string(name));
  return it == params.end() ? "" : it->second;
}

void HttpResponse::SetHeader(std::string name, std::string value) {
  headers.emplace(std::move(name), std::move(value));
}

void HttpResponse::SetContent(std::string content, std::string_view content_type) {
  body = std::move(content);
  headers.erase("Content-Type");
  headers.emplace("Content-Type", std::string(content_type));
}

Status ParseTarget(std::string_view target, std::string* path,
                   std::multimap<std::string, std::string>* params) {
  size_t q = target.find('?');
  auto decoded = Decode(target.substr(0, q), false);
  if (!decoded.ok()) return decoded.status();
  if (decoded->find('\0') != std::string::npos) {
    return InvalidArgument("the request's path holds a NUL character");
  }
  *path = std::move(*decoded);
  params->clear();
  if (q == std::string_view::npos) return Status::Ok();
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    auto key = Decode(pair.substr(0, eq), true);
    if (!key.ok()) return key.status();
    std::string value;
    if (eq != std::string_view::npos) {
      auto v = Decode(pair.substr(eq + 1), true);
      if (!v.ok()) return v.status();
      value = std::move(*v);
    }
    params->emplace(std::move(*key), std::move(value));
  }
  return Status::Ok();
}

}  // namespace tessera
