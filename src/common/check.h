// CHECK: assertions for Tessera's own invariants (never for bad input from outside, which
// gets a Status). A failed CHECK prints where and why, then aborts.
//
//   CHECK(free >= 0) << "node " << node << " over-committed";
#pragma once

#include <sstream>

namespace tessera::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* expr);
  [[noreturn]] ~CheckFailure();
  template <class T>
  CheckFailure& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

// Lets `CHECK(x) << ...` be a single expression of type void.
struct Voidify {
  void operator&(const CheckFailure&) {}
};

}  // namespace tessera::internal

#define CHECK(cond)                         \
  (cond) ? (void)0                          \
         : ::tessera::internal::Voidify() & \
               ::tessera::internal::CheckFailure(__FILE__, __LINE__, #cond)
