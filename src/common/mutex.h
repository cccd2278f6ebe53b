// A mutex that clang's thread-safety analysis understands (-Wthread-safety, on in clang
// builds): fields a mutex guards say so (GUARDED_BY), functions that need it held say so
// (REQUIRES), and a clang build where a guarded field is touched without its mutex fails. GCC
// ignores the annotations. libstdc++'s std::mutex carries none, hence this wrapper.
//
// The thread vocabulary of the layers that have threads (store, backends, server); the pure
// core (model, sched) never includes it (tests/common/layering_test.cc).
//
// Waiting on a condition: a CondVar with a MutexLock, in a loop whose condition reads the
// guarded state where the lock is held (a predicate lambda would be analysed apart):
//   MutexLock lock(mu_);
//   while (!ready_) cv_.wait(lock);
//
// Thread-safety: Mutex and CondVar are shared between threads; a MutexLock is its thread's.
#pragma once

#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define TESSERA_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TESSERA_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) TESSERA_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY TESSERA_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) TESSERA_THREAD_ANNOTATION(guarded_by(x))
#define REQUIRES(...) TESSERA_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) TESSERA_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) TESSERA_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) TESSERA_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) TESSERA_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) TESSERA_THREAD_ANNOTATION(assert_capability(x))
// Only for a lock's own implementation, and for code the analysis cannot follow (a thread
// that reads fields nobody writes meanwhile); say why where it is used.
#define NO_THREAD_SAFETY_ANALYSIS TESSERA_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace tessera {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;
  void lock() ACQUIRE() { m_.lock(); }
  void unlock() RELEASE() { m_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return m_.try_lock(); }
  // Tells the analysis the mutex is held where it cannot see it: in a callback (a port, a
  // hook) that its caller runs with the mutex held. Checks nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  std::mutex m_;
};

// Holds a Mutex for its scope. A CondVar's wait gives it up and takes it again; unlock() and
// lock() do so by hand (the destructor releases it only when held).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;
  void lock() ACQUIRE() {
    mu_.lock();
    held_ = true;
  }
  void unlock() RELEASE() {
    held_ = false;
    mu_.unlock();
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

using CondVar = std::condition_variable_any;

}  // namespace tessera
