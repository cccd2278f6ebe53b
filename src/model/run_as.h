// The host user (and group) a task of a local cluster's agents runs as: set per tenant (and
// inherited by its children) with a default per cluster (docs/configuration.md, runAs).
#pragma once

#include <string>

namespace tessera {

struct RunAs {
  std::string user;
  std::string group;  // "" = the user's primary group
};

// Whether `name` may be a POSIX user or group name: [a-z_][a-z0-9_.-]* (a trailing $ allowed),
// 32 characters at most.
bool ValidHostAccountName(const std::string& name);

}  // namespace tessera
