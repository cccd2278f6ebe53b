#include "server/auth.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>

#include "common/check.h"

namespace tessera {

std::optional<Role> ParseRole(std::string_view s) {
  if (s == "admin") return Role::kAdmin;
  if (s == "operator") return Role::kOperator;
  if (s == "member") return Role::kMember;
  if (s == "viewer") return Role::kViewer;
  if (s == "agent") return Role::kAgent;
  return std::nullopt;
}

std::string_view RoleName(Role r) {
  switch (r) {
    case Role::kAdmin:
      return "admin";
    case Role::kOperator:
      return "operator";
    case Role::kMember:
      return "member";
    case Role::kViewer:
      return "viewer";
    case Role::kAgent:
      return "agent";
  }
  return "?";
}

bool WithinTenant(std::string_view path, std::string_view root) {
  if (root.empty()) return true;
  if (path.size() < root.size() || path.substr(0, root.size()) != root) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

bool Caller::MaySee(std::string_view tenant_path) const {
  switch (role) {
    case Role::kAdmin:
    case Role::kOperator:
      return true;
    case Role::kMember:
    case Role::kViewer:
      return WithinTenant(tenant_path, tenant);
    case Role::kAgent:
      return false;
  }
  return false;
}

bool Caller::MayChange(std::string_view tenant_path) const {
  if (role == Role::kAdmin) return true;
  return role == Role::kMember && WithinTenant(tenant_path, tenant);
}

std::string NewToken() {
  std::array<unsigned char, 32> bytes{};
  CHECK(RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) == 1) << "no randomness";
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  // 6 bits a character: 42 characters carry 252 of the 256 bits.
  std::string out = "tsk_";
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 63];
    }
  }
  return out;
}

std::string HashToken(std::string_view token) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  CHECK(EVP_Digest(token.data(), token.size(), md.data(), &len, EVP_sha256(), nullptr) == 1)
      << "sha256 failed";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

void Authenticator::Add(const Principal& p) {
  MutexLock lock(mu_);
  principals_[p.name] = p;
}

void Authenticator::AddToken(const StoredToken& t) {
  MutexLock lock(mu_);
  tokens_[t.hash] = t;
}

std::optional<Principal> Authenticator::Find(const std::string& name) const {
  MutexLock lock(mu_);
  auto it = principals_.find(name);
  if (it == principals_.end()) return std::nullopt;
  return it->second;
}

std::vector<Principal> Authenticator::Principals() const {
  MutexLock lock(mu_);
  std::vector<Principal> out;
  for (const auto& [name, p] : principals_)
    out.push_back(p);
  return out;
}

void Authenticator::Remove(const std::string& name) {
  MutexLock lock(mu_);
  principals_.erase(name);
  std::erase_if(tokens_, [&](const auto& kv) { return kv.second.principal == name; });
}

size_t Authenticator::RevokeTokens(const std::string& principal) {
  MutexLock lock(mu_);
  return std::erase_if(tokens_, [&](const auto& kv) { return kv.second.principal == principal; });
}

Result<Caller> Authenticator::Authenticate(std::string_view authorization, TimeMs now) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.empty()) {
    return Status(StatusCode::kUnauthenticated,
                  "no credentials: send \"Authorization: Bearer <token>\"");
  }
  if (authorization.substr(0, kBearer.size()) != kBearer ||
      authorization.size() == kBearer.size()) {
    return Status(StatusCode::kUnauthenticated,
                  "malformed Authorization header: expected \"Bearer <token>\"");
  }
  std::string hash = HashToken(authorization.substr(kBearer.size()));
  MutexLock lock(mu_);
  auto t = tokens_.find(hash);
  if (t == tokens_.end()) return Status(StatusCode::kUnauthenticated, "invalid token");
  if (t->second.expires && *t->second.expires <= now) {
    return Status(StatusCode::kUnauthenticated, "the token has expired");
  }
  auto p = principals_.find(t->second.principal);
  if (p == principals_.end()) return Status(StatusCode::kUnauthenticated, "invalid token");
  std::optional<Role> role = ParseRole(p->second.role);
  if (!role) return Status(StatusCode::kUnauthenticated, "invalid token");
  return Caller{p->second.name, *role, p->second.tenant, p->second.node};
}

}  // namespace tessera
