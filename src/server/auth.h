// Principals, roles and bearer tokens (DESIGN.md §3, API).
//
//   admin     everything, including principals and tokens
//   operator  the fleet (cordon, drain) and policies; reads everything
//   member    submits, sees and cancels jobs of its tenant subtree
//   viewer    sees the jobs of its tenant subtree
//   agent     node agents: syncs its node (one node when the principal names it, else any)
//
// Tokens are random, shown once, and stored as their SHA-256 only.
//
// Thread-safety: Authenticator is safe from any thread.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "store/rows.h"

namespace tessera {

enum class Role { kAdmin, kOperator, kMember, kViewer, kAgent };
std::optional<Role> ParseRole(std::string_view s);
std::string_view RoleName(Role r);

// Who is calling, once authenticated.
struct Caller {
  std::string name;
  Role role = Role::kViewer;
  std::string tenant;  // member/viewer: the subtree; "" = the whole organisation
  std::string node;    // agent: the one node it answers for; "" = any

  // Whether the caller may see (read) what belongs to `tenant_path`.
  bool MaySee(std::string_view tenant_path) const;
  // Whether the caller may submit or cancel what belongs to `tenant_path`.
  bool MayChange(std::string_view tenant_path) const;
  bool MayAdministerFleet() const { return role == Role::kAdmin || role == Role::kOperator; }
};

// Whether `path` is `root` or below it ("a/b" is within "a", not within "a/bc").
bool WithinTenant(std::string_view path, std::string_view root);

// A new random bearer token ("tsk_" + 43 URL-safe characters).
std::string NewToken();
// Lower-case hex SHA-256 of `token`.
std::string HashToken(std::string_view token);

class Authenticator {
 public:
  void Add(const Principal& p);
  void AddToken(const StoredToken& t);
  std::optional<Principal> Find(const std::string& name) const;
  std::vector<Principal> Principals() const;
  // Forgets the principal and its tokens.
  void Remove(const std::string& name);
  // Forgets every token of `principal`; returns how many.
  size_t RevokeTokens(const std::string& principal);
  // The caller of a request's `Authorization: Bearer T` header at `now`; errors say why
  // (missing, malformed, unknown, expired) without telling which tokens exist.
  Result<Caller> Authenticate(std::string_view authorization, TimeMs now) const;

 private:
  mutable Mutex mu_;
  std::map<std::string, Principal> principals_ GUARDED_BY(mu_);
  std::map<std::string, StoredToken> tokens_ GUARDED_BY(mu_);  // by hash
};

}  // namespace tessera
