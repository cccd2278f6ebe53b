#include "store/store_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

namespace tessera {
namespace {

std::string Errno(int e) {
  return std::strerror(e);
}

// "2026-12-06T04:30:00Z"
std::string UtcNow() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "an unknown host";
  return buf;
}

// What the holder wrote into the lock file ("pid N on HOST since T"), read through `fd`.
std::string Holder(int fd) {
  char buf[512] = {};
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string text = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.pop_back();
  return text.empty() ? "another process" : text;
}

}  // namespace

Result<StoreLock> StoreLock::Acquire(const std::string& store_path) {
  const std::string lock_path = store_path + ".lock";
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    int e = errno;
    if (e == EROFS || e == EACCES || e == EPERM) {
      return Status(
          StatusCode::kFailedPrecondition,
          "store " + store_path + " is read-only: cannot create " + lock_path + ": " + Errno(e));
    }
    return Status(StatusCode::kUnavailable,
                  "store " + store_path + ": cannot create " + lock_path + ": " + Errno(e));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    std::string holder = Holder(fd);
    ::close(fd);
    if (e == EWOULDBLOCK) {
      return Status(StatusCode::kFailedPrecondition, "store " + store_path + " is in use by " +
                                                         holder +
                                                         " (one daemon per store; stop it first)");
    }
    return Status(StatusCode::kUnavailable,
                  "store " + store_path + ": cannot lock " + lock_path + ": " + Errno(e));
  }
  std::string me =
      "pid " + std::to_string(::getpid()) + " on " + HostName() + " since " + UtcNow() + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    int e = errno;
    ::close(fd);
    return Status(StatusCode::kUnavailable,
                  "store " + store_path + ": cannot write " + lock_path + ": " + Errno(e));
  }
  return StoreLock(fd);
}

StoreLock& StoreLock::operator=(StoreLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

StoreLock::~StoreLock() {
  // Closing the descriptor drops the lock; the file stays (removing it would race with a
  // daemon that opened it and waits to lock it).
  if (fd_ >= 0) ::close(fd_);
}

Status CheckStoreFile(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return Status::Ok();  // a new store
  if (!fs::is_regular_file(st)) {
    return Status(StatusCode::kFailedPrecondition,
                  "store " + path + " is not a Tessera store: not a regular file");
  }
  auto size = fs::file_size(path, ec);
  const std::string advice = "; name a new file with --store sqlite:PATH, or move it away";
  if (!ec && size == 0) {
    return Status(StatusCode::kFailedPrecondition,
                  "store " + path + " is not a Tessera store: the file is empty" + advice);
  }
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  if (!in) {
    return Status(StatusCode::kFailedPrecondition,
                  "store " + path + " is not a Tessera store: it cannot be read or is shorter " +
                      "than an SQLite header" + advice);
  }
  if (std::memcmp(header, "SQLite format 3", 16) != 0) {
    return Status(StatusCode::kFailedPrecondition,
                  "store " + path + " is not a Tessera store: not an SQLite database" + advice);
  }
  return Status::Ok();
}

}  // namespace tessera
