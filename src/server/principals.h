// Who may call the API: the principals and their tokens, and the rules for managing them.
// Only admins manage principals. A member or a viewer names its tenant, and an agent names
// exactly one node of the fleet. Nobody deletes itself or the last admin. Every change is
// durable in the store before it counts: a store that fails changes nothing.
//
// Thread-safety: thread-safe (the Authenticator has its own mutex). Each change waits for
// its write.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "server/auth.h"
#include "store/durable_store.h"

namespace tessera {

class Principals {
 public:
  // What the configuration in force has, for the names a principal gives.
  struct Fleet {
    std::function<bool(const std::string&)> has_tenant;
    std::function<bool(const std::string&)> has_node;
  };

  Principals(DurableStore& store, const Clock& clock) : store_(store), clock_(clock) {}

  // On start: the store's principals and tokens. A store with none gets an admin "admin" with
  // token `admin_token`; when that is empty a new token is made and returned (else "").
  Result<std::string> Load(const std::vector<Principal>& principals,
                           const std::vector<StoredToken>& tokens, const std::string& admin_token);

  // Creates or replaces a principal. Errors name the offending field (Status::field).
  Status Put(const Caller& caller, Principal p, const Fleet& fleet);
  // Deletes a principal and its tokens.
  Status Delete(const Caller& caller, const std::string& name);
  // Revokes every token of `principal`; returns how many.
  Result<size_t> RevokeTokens(const Caller& caller, const std::string& principal);
  // A new token for `principal`, valid until `expires` (nullopt = no expiry). An agent
  // principal bound to no node (left by an older tessera) gets none.
  Result<std::string> IssueToken(const Caller& caller, const std::string& principal,
                                 std::optional<TimeMs> expires);

  const Authenticator& auth() const { return auth_; }

 private:
  DurableStore& store_;
  const Clock& clock_;
  Authenticator auth_;
};

}  // namespace tessera
