// The daemons a client talks to: one URL, or several (a control plane of several daemons on
// one PostgreSQL store: one leads, the others stand by), comma-separated. A client sends to the
// daemon it last reached, and moves on when that one cannot be reached or answers that it does
// not lead: to the leader a standby names when it is in the list, else to the next URL.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace tessera {

class ServerList {
 public:
  // "http://a:7400,http://b:7400": InvalidArgument, naming `what` (the flag), when the list is
  // empty or a URL is not http:// or https://.
  static Result<ServerList> Parse(const std::string& list, const std::string& what);

  // The daemon to send to now.
  std::string Current() const;
  // `tried` failed (no answer, or not the leader): the next to try is `leader` when a standby
  // named one of the list (never an address outside it: the caller's token would go there),
  // else the URL after `tried` in the list. Returns the next.
  std::string Failed(const std::string& tried, const std::string& leader = "");
  size_t size() const { return urls_.size(); }
  const std::vector<std::string>& urls() const { return urls_; }

  ServerList(const ServerList& o) : urls_(o.urls_), current_(o.Current()) {}
  ServerList& operator=(const ServerList&) = delete;

 private:
  explicit ServerList(std::vector<std::string> urls)
      : urls_(std::move(urls)), current_(urls_.front()) {}
  std::vector<std::string> urls_;
  mutable Mutex mu_;
  std::string current_ GUARDED_BY(mu_);
};

}  // namespace tessera
