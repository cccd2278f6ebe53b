// The engine's thread's side of the daemon: what API threads hand that thread — accepted
// submissions (the inbox) and work to run at the start of its next pass (posted, each with a
// ticket) — the pokes that wake it, its stop, and the pace of its passes. The daemon's engine
// thread drives the engine with it (daemon.cc: Loop); API threads only post to it, and a
// poster waits for the pass that ran its work.
//
// The pace: a pass waits for the next time something is due, a poke or the stop; passes are
// at least `cycle_interval` apart (steady time), so what arrives meanwhile waits for the next,
// fuller cycle, and the first change after a quiet spell is taken at once.
//
// Thread-safety: none of its own. Its owner guards it with one mutex, held by every call; the
// waits take the owner's lock on that mutex (any BasicLockable) and release it while waiting.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "model/job.h"

namespace tessera {

class EngineHost {
 public:
  // An accepted submission: its row in the job book and the job, parsed.
  struct Arrival {
    int64_t id = 0;
    Job job;
  };

  explicit EngineHost(Millis cycle_interval)
      : interval_(cycle_interval), last_pass_(std::chrono::steady_clock::now() - interval_) {}

  // An accepted submission for the next pass (which is asked for).
  void Submit(int64_t id, Job job) {
    inbox_.push_back({id, std::move(job)});
    Poke();
  }
  // Whether row `id`'s submission waits for the next pass.
  bool Inboxed(int64_t id) const {
    return std::any_of(inbox_.begin(), inbox_.end(), [&](const Arrival& a) { return a.id == id; });
  }
  size_t inboxed() const { return inbox_.size(); }
  // The engine's thread: `each` takes the submissions accepted since its last pass, in order
  // (the inbox keeps its memory for the next).
  template <typename Fn>
  void TakeArrivals(Fn&& each) {
    for (Arrival& a : inbox_)
      each(a);
    inbox_.clear();
  }

  // Runs `work` on the engine's thread at the start of its next pass and waits until that
  // pass is done (true), or the host stops (false).
  template <typename Lock>
  bool Post(Lock& lock, std::function<void()> work) {
    const uint64_t ticket = ++posted_ticket_;
    posted_.push_back({std::move(work), ticket});
    Poke();
    while (done_ticket_ < ticket && !stopping_)
      done_cv_.wait(lock);
    return done_ticket_ >= ticket;
  }
  // The engine's thread: runs what was posted, in order.
  void RunPosted() {
    for (Posted& p : posted_) {
      p.work();
      taken_ticket_ = p.ticket;
    }
    posted_.clear();
  }
  // The engine's thread: the pass is done; the posters whose work it ran may answer.
  void PassDone() {
    if (done_ticket_ == taken_ticket_) return;
    done_ticket_ = taken_ticket_;
    done_cv_.notify_all();
  }

  // Asks for a pass. Once asked, further pokes before the pass do not wake the thread again
  // (at 2,000 submissions a second, a wakeup each, to wait again for the interval, would cost
  // it more than its cycles).
  void Poke() {
    if (poked_) return;
    poked_ = true;
    cv_.notify_all();
  }

  // The engine's thread: waits for its next pass — until `due` (the next time something is
  // due; nullopt: at once), a poke or the stop, then until the cycle interval since the last
  // pass has passed. False when the host stops meanwhile, or `replaced()` says the engine the
  // pass was for is gone.
  template <typename Lock>
  bool AwaitPass(Lock& lock, std::optional<std::chrono::system_clock::time_point> due,
                 const std::function<bool()>& replaced) {
    if (due) {
      while (!stopping_ && !poked_) {
        if (cv_.wait_until(lock, *due) == std::cv_status::timeout) break;
      }
    }
    if (stopping_ || replaced()) return false;
    if (interval_.count() > 0) {
      while (!stopping_) {
        if (cv_.wait_until(lock, last_pass_ + interval_) == std::cv_status::timeout) break;
      }
      if (stopping_ || replaced()) return false;
      last_pass_ = std::chrono::steady_clock::now();
    }
    poked_ = false;  // this pass handles what the pokes were for
    return true;
  }

  // Stops: the engine's thread leaves its wait, posters stop waiting.
  void Stop() {
    stopping_ = true;
    cv_.notify_all();
    done_cv_.notify_all();
  }
  bool stopping() const { return stopping_; }
  // The engine's thread, at its end: what is still posted never runs; its posters are told.
  void Abandon() {
    posted_.clear();
    done_cv_.notify_all();
  }

 private:
  struct Posted {
    std::function<void()> work;
    uint64_t ticket = 0;
  };

  const std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point last_pass_;
  std::vector<Arrival> inbox_;
  // Tickets are handed out in order; done_ticket_ is the last whose pass has ended.
  std::deque<Posted> posted_;
  uint64_t posted_ticket_ = 0;  // the last handed out
  uint64_t taken_ticket_ = 0;   // the last the engine's thread ran
  uint64_t done_ticket_ = 0;    // the last whose pass is done
  bool poked_ = false;
  bool stopping_ = false;
  CondVar cv_;       // poked_ or stopping_: the engine's thread waits on it
  CondVar done_cv_;  // done_ticket_ or stopping_: posters wait on it
};

}  // namespace tessera
