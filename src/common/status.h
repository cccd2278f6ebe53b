// Status and Result<T>: how Tessera reports what the outside world got wrong (bad config,
// bad request, backend down). Our own invariants use CHECK (check.h) instead.
//
// Thread-safety: value types; safe to copy between threads.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "common/check.h"

namespace tessera {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // the caller's input is wrong (config, request, flag)
  kNotFound,            // a named thing does not exist
  kAlreadyExists,       // a name is taken
  kFailedPrecondition,  // the request is well-formed but the state forbids it (e.g. stale)
  kUnavailable,         // a dependency is down; retrying may help
  kInternal,            // a bug or an unexpected environment failure
  kUnauthenticated,     // no valid credentials
  kPermissionDenied,    // valid credentials, but not allowed to do this
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The field of the input the error is about: a path such as "taskGroups[0].count" in a
  // request's body, or a query parameter; "" when the error names none.
  const std::string& field() const { return field_; }
  // The same error, about `field`.
  Status WithField(std::string field) && {
    field_ = std::move(field);
    return std::move(*this);
  }
  std::string ToString() const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string field_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
inline Status AlreadyExists(std::string m) {
  return {StatusCode::kAlreadyExists, std::move(m)};
}
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status Unavailable(std::string m) {
  return {StatusCode::kUnavailable, std::move(m)};
}
inline Status Internal(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}

// Either a value or a non-ok Status. Accessing the wrong alternative is a CHECK failure.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    CHECK(!std::get<Status>(v_).ok()) << "Result constructed from an ok Status";
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & {
    CHECK(ok()) << "Result::value() on error: " << status().ToString();
    return std::get<T>(v_);
  }
  const T& value() const& {
    CHECK(ok()) << "Result::value() on error: " << status().ToString();
    return std::get<T>(v_);
  }
  T&& value() && {
    CHECK(ok()) << "Result::value() on error: " << status().ToString();
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace tessera

// Returns early from the enclosing function with the Status of `expr` if it is not ok.
#define TESSERA_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::tessera::Status tessera_status_ = (expr);        \
    if (!tessera_status_.ok()) return tessera_status_; \
  } while (false)
