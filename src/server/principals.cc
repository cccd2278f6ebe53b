// Principals and their tokens: who may call the API, in which role and tenant (principals.h).
#include "server/principals.h"

#include <string>
#include <utility>

namespace tessera {

Result<std::string> Principals::Load(const std::vector<Principal>& principals,
                                     const std::vector<StoredToken>& tokens,
                                     const std::string& admin_token) {
  for (const Principal& p : principals)
    auth_.Add(p);
  for (const StoredToken& t : tokens)
    auth_.AddToken(t);
  if (!principals.empty()) return std::string();
  std::string token = admin_token.empty() ? NewToken() : admin_token;
  Principal admin{"admin", "admin", "", clock_.Now(), ""};
  StoredToken t{HashToken(token), "admin", std::nullopt, clock_.Now()};
  store_.PutPrincipal(admin);
  if (Status s = store_.PutToken(t).get(); !s.ok()) return s;
  auth_.Add(admin);
  auth_.AddToken(t);
  return admin_token.empty() ? token : std::string();
}

Status Principals::Put(const Caller& caller, Principal p, const Fleet& fleet) {
  if (caller.role != Role::kAdmin) return PermissionDenied("only admins manage principals");
  auto invalid = [&](const char* f, const std::string& why) {
    return InvalidArgument(why).WithField(f);
  };
  std::optional<Role> role = ParseRole(p.role);
  if (!role) {
    return invalid("role",
                   "role \"" + p.role + "\" is not one of admin, operator, member, viewer, agent");
  }
  if ((*role == Role::kMember || *role == Role::kViewer) && p.tenant.empty()) {
    return invalid("tenant", "a " + p.role + " needs a tenant");
  }
  if (!p.tenant.empty() && !fleet.has_tenant(p.tenant)) {
    return invalid("tenant", "unknown tenant \"" + p.tenant + "\"");
  }
  if (*role == Role::kAgent && p.node.empty()) {
    return invalid("node",
                   "an agent is bound to exactly one node: name it (tessera principal create " +
                       p.name + " --role agent --node NODE)");
  }
  if (!p.node.empty()) {
    if (*role != Role::kAgent) return invalid("node", "only an agent is bound to a node");
    if (!fleet.has_node(p.node)) {
      return invalid("node", "no node \"" + p.node + "\" in the fleet");
    }
  }
  p.created = clock_.Now();
  if (Status s = store_.PutPrincipal(p).get(); !s.ok()) return s;
  auth_.Add(p);
  return Status::Ok();
}

Status Principals::Delete(const Caller& caller, const std::string& name) {
  if (caller.role != Role::kAdmin) return PermissionDenied("only admins delete principals");
  std::optional<Principal> p = auth_.Find(name);
  if (!p) return NotFound("no principal \"" + name + "\"");
  if (name == caller.name) return FailedPrecondition("a principal cannot delete itself");
  if (p->role == "admin") {
    size_t admins = 0;
    for (const Principal& other : auth_.Principals())
      admins += other.role == "admin";
    if (admins <= 1) return FailedPrecondition("\"" + name + "\" is the last admin");
  }
  if (Status s = store_.DeletePrincipal(name).get(); !s.ok()) return s;
  auth_.Remove(name);
  return Status::Ok();
}

Result<size_t> Principals::RevokeTokens(const Caller& caller, const std::string& principal) {
  if (caller.role != Role::kAdmin) return PermissionDenied("only admins revoke tokens");
  if (!auth_.Find(principal)) return NotFound("no principal \"" + principal + "\"");
  if (Status s = store_.DeleteTokens(principal).get(); !s.ok()) return s;
  return auth_.RevokeTokens(principal);
}

Result<std::string> Principals::IssueToken(const Caller& caller, const std::string& principal,
                                           std::optional<TimeMs> expires) {
  if (caller.role != Role::kAdmin) return PermissionDenied("only admins issue tokens");
  std::optional<Principal> p = auth_.Find(principal);
  if (!p) return NotFound("no principal \"" + principal + "\"");
  if (p->role == "agent" && p->node.empty()) {
    return InvalidArgument("\"" + principal +
                           "\" is an agent bound to no node (made by an older tessera); create "
                           "one per node with --role agent --node NODE");
  }
  std::string token = NewToken();
  StoredToken t{HashToken(token), principal, expires, clock_.Now()};
  if (Status s = store_.PutToken(t).get(); !s.ok()) return s;
  auth_.AddToken(t);
  return token;
}

}  // namespace tessera
