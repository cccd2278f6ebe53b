// Principals and their tokens: who may call the API, in which role and tenant.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "config/job_json.h"
#include "config/loader.h"
#include "server/daemon.h"
#include "server/daemon_internal.h"
#include "server/placement_view.h"

namespace tessera {

using json = nlohmann::ordered_json;

Status Daemon::PutPrincipal(const Caller& caller, Principal p) {
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
  if (!p.tenant.empty() && !spec()->FindTenant(p.tenant)) {
    return invalid("tenant", "unknown tenant \"" + p.tenant + "\"");
  }
  if (*role == Role::kAgent && p.node.empty()) {
    return invalid("node",
                   "an agent is bound to exactly one node: name it (tessera principal create " +
                       p.name + " --role agent --node NODE)");
  }
  if (!p.node.empty()) {
    if (*role != Role::kAgent) return invalid("node", "only an agent is bound to a node");
    ViewLock lock(*this);
    if (!core_->node_index.contains(p.node)) {
      return invalid("node", "no node \"" + p.node + "\" in the fleet");
    }
  }
  p.created = clock_.Now();
  if (Status s = store_->PutPrincipal(p).get(); !s.ok()) return s;
  auth_.Add(p);
  return Status::Ok();
}

Status Daemon::DeletePrincipal(const Caller& caller, const std::string& name) {
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
  if (Status s = store_->DeletePrincipal(name).get(); !s.ok()) return s;
  auth_.Remove(name);
  return Status::Ok();
}

Result<size_t> Daemon::RevokeTokens(const Caller& caller, const std::string& principal) {
  if (caller.role != Role::kAdmin) return PermissionDenied("only admins revoke tokens");
  if (!auth_.Find(principal)) return NotFound("no principal \"" + principal + "\"");
  if (Status s = store_->DeleteTokens(principal).get(); !s.ok()) return s;
  return auth_.RevokeTokens(principal);
}

Result<std::string> Daemon::IssueToken(const Caller& caller, const std::string& principal,
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
  if (Status s = store_->PutToken(t).get(); !s.ok()) return s;
  auth_.AddToken(t);
  return token;
}

}  // namespace tessera
