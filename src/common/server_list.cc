#include "common/server_list.h"

#include <algorithm>

namespace tessera {

Result<ServerList> ServerList::Parse(const std::string& list, const std::string& what) {
  std::vector<std::string> urls;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string url = list.substr(start, comma - start);
    while (!url.empty() && url.back() == '/')
      url.pop_back();  // "http://a:7400/" is "http://a:7400": paths are appended
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      return InvalidArgument(what + " \"" + list + "\": expected http://HOST:PORT or https://" +
                             (list.find(',') != std::string::npos
                                  ? ", or several, comma-separated (\"" + url + "\" is not)"
                                  : std::string()));
    }
    urls.push_back(url);
    start = comma + 1;
  }
  return ServerList(std::move(urls));
}

std::string ServerList::Current() const {
  MutexLock lock(mu_);
  return current_;
}

std::string ServerList::Failed(const std::string& tried, const std::string& leader) {
  MutexLock lock(mu_);
  if (current_ != tried) return current_;  // another thread moved on already
  // Only a daemon of the list: a token goes nowhere its owner did not name, whatever an answer
  // says (a daemon that is not ours could name any address).
  std::string named = leader;
  while (!named.empty() && named.back() == '/')
    named.pop_back();
  if (!named.empty() && named != tried &&
      std::find(urls_.begin(), urls_.end(), named) != urls_.end()) {
    current_ = named;
  } else {
    size_t at = 0;
    while (at < urls_.size() && urls_[at] != tried)
      ++at;
    current_ = urls_[at + 1 < urls_.size() ? at + 1 : 0];
  }
  return current_;
}

}  // namespace tessera
