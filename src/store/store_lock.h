// One daemon per store: an exclusive lock on the store's file, held for the store's life.
//
// The lock is an flock(2) on PATH.lock beside the store, which holds who took it ("pid N on
// HOST since T"). The kernel drops it when the holder's process ends, kill -9 included, so a
// restart after a crash takes it at once; a second daemon on the same file is refused with the
// holder named. (Several daemons on one store, with a real leader lease, are the HA store's.)
#pragma once

#include <string>

#include "common/status.h"

namespace tessera {

class StoreLock {
 public:
  // Takes the lock of the store at `store_path`, or FailedPrecondition "store PATH is in use
  // by pid N on HOST since T" when another process holds it; a folder where PATH.lock cannot
  // be created is named read-only (FailedPrecondition) or unavailable.
  static Result<StoreLock> Acquire(const std::string& store_path);

  StoreLock(StoreLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  StoreLock& operator=(StoreLock&& o) noexcept;
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;
  ~StoreLock();

 private:
  explicit StoreLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Whether the file at `path` may be opened as a store: it does not exist yet (a new store), or
// it is an SQLite database. An existing file that is empty or not SQLite is refused
// (FailedPrecondition naming it), so that a mistyped path never becomes a new store with a new
// admin token.
Status CheckStoreFile(const std::string& path);

}  // namespace tessera
