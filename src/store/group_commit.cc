#include "store/group_commit.h"

#include <pthread.h>

#include <algorithm>

namespace tessera {

GroupCommit::GroupCommit(std::string name, Target target,
                         std::chrono::milliseconds background_delay)
    : name_(std::move(name)),
      target_(std::move(target)),
      background_delay_(background_delay),
      writer_([this] { WriterLoop(); }) {}

GroupCommit::~GroupCommit() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  writer_.join();
}

bool GroupCommit::Push(Pending p, std::deque<Pending>& to) {
  const bool waited_for = p.done.has_value();
  waiting_ += waited_for ? 1 : 0;
  to.push_back(std::move(p));
  // A writer that saw a write queued has been woken already, or is writing and takes the
  // queue when done; one that lingers over writes nobody waits for is woken by one that is.
  return first_.size() + queue_.size() == 1 || (waited_for && lingering_);
}

std::shared_future<Status> GroupCommit::Waited(Write w, bool first) {
  Pending p{std::move(w), std::promise<Status>()};
  std::shared_future<Status> f = p.done->get_future().share();
  bool wake;
  {
    MutexLock lock(mu_);
    wake = Push(std::move(p), first ? first_ : queue_);
  }
  if (wake) cv_.notify_one();
  return f;
}

std::shared_future<Status> GroupCommit::Enqueue(Write w) {
  return Waited(std::move(w), false);
}

std::shared_future<Status> GroupCommit::EnqueueFirst(Write w) {
  return Waited(std::move(w), true);
}

void GroupCommit::Post(Write w) {
  bool wake;
  {
    MutexLock lock(mu_);
    wake = Push({std::move(w), std::nullopt}, queue_);
  }
  if (wake) cv_.notify_one();
}

void GroupCommit::WriterLoop() {
  pthread_setname_np(pthread_self(), "store-writer");  // as ps and top show it
  // What a failed batch left that nobody waits for, written first next time (in order).
  std::deque<Pending> kept;
  std::chrono::milliseconds backoff{0};  // before retrying `kept` after a failure
  for (;;) {
    std::deque<Pending> batch;
    {
      MutexLock lock(mu_);
      if (!kept.empty()) {
        // The store failed: try again after a while, or at once for a caller who waits.
        const auto until = std::chrono::steady_clock::now() + backoff;
        while (!stopping_ && waiting_ == 0 &&
               cv_.wait_until(lock, until) == std::cv_status::no_timeout) {
        }
      } else {
        while (!stopping_ && first_.empty() && queue_.empty())
          cv_.wait(lock);
        if (first_.empty() && queue_.empty()) return;  // stopping, everything written
        if (waiting_ == 0 && queue_.size() < kMaxBatch) {
          // Nobody waits for these: give them company for a while (fewer syncs).
          lingering_ = true;
          const auto until = std::chrono::steady_clock::now() + background_delay_;
          while (!stopping_ && waiting_ == 0 &&
                 cv_.wait_until(lock, until) == std::cv_status::no_timeout) {
          }
          lingering_ = false;
        }
      }
      batch.swap(kept);
      auto take = [&](Pending& p) REQUIRES(mu_) {
        waiting_ -= p.done ? 1 : 0;
        batch.push_back(std::move(p));
      };
      for (Pending& p : first_)
        take(p);
      first_.clear();
      // Up to kMaxBatch of the queue, in order; the rest goes in the next batch at once.
      size_t taken = 0;
      for (; taken < queue_.size() && batch.size() < kMaxBatch; ++taken)
        take(queue_[taken]);
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(taken));
    }
    if (in_doubt_ > 0) {
      // The last batch's fate first: its writes at the head of this one go again only if it
      // did not commit.
      std::optional<bool> took = CommittedAnyway();
      if (!took) {
        // Still in doubt: `kept` is led by the same writes again.
        Fail(batch, Unavailable(name_ + ": the store cannot be reached"), false, kept, backoff);
        continue;
      }
      if (*took) {
        committed_writes_ += in_doubt_;
        ++batches_;
        batch.erase(batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(in_doubt_));
      }
      in_doubt_ = 0;
      if (batch.empty()) {
        ReportHealth(Status::Ok());
        continue;
      }
    }
    Status status = target_.begin();
    size_t failed_at = batch.size();  // the write that failed, if one did
    for (size_t i = 0; status.ok() && i < batch.size(); ++i) {
      status = batch[i].write();
      if (!status.ok()) failed_at = i;
    }
    if (status.ok()) status = target_.commit(failed_at);
    if (!status.ok()) target_.rollback();
    bool doubtful = false;  // the batch may have committed: its kept writes must not go twice
    if (status.code() == StatusCode::kUnavailable && failed_at == batch.size()) {
      std::optional<bool> took = CommittedAnyway();
      if (took == true) status = Status::Ok();  // only the answer was lost: done, not again
      doubtful = !took.has_value();
    }
    if (!status.ok() && status.code() != StatusCode::kUnavailable && failed_at < batch.size()) {
      // One write is wrong in itself (a constraint): it alone fails, the rest go again at once.
      Pending bad = std::move(batch[failed_at]);
      batch.erase(batch.begin() + static_cast<std::ptrdiff_t>(failed_at));
      if (bad.done) {
        bad.done->set_value(status);
      } else {
        ReportLoss(status, "a write was dropped");
      }
      kept = std::move(batch);
      backoff = std::chrono::milliseconds{0};
      continue;
    }
    if (!status.ok()) {
      Fail(batch, status, doubtful, kept, backoff);
      continue;
    }
    committed_writes_ += batch.size();
    ++batches_;
    backoff = std::chrono::milliseconds{0};
    ReportHealth(status);
    for (Pending& p : batch) {
      if (p.done) p.done->set_value(status);
    }
  }
}

void GroupCommit::Fail(std::deque<Pending>& batch, const Status& status, bool doubtful,
                       std::deque<Pending>& kept, std::chrono::milliseconds& backoff) {
  ReportHealth(status);
  for (Pending& p : batch) {
    if (p.done) {
      p.done->set_value(status);
    } else {
      kept.push_back(std::move(p));  // the engine's record: kept until the store takes it
    }
  }
  if (doubtful) in_doubt_ = kept.size();  // they lead `kept`, which was empty
  backoff = std::clamp(backoff * 2, std::chrono::milliseconds{50}, kMaxBackoff);
  MutexLock lock(mu_);
  if (stopping_) {
    // Shutting down with a store that fails: what is kept is lost, and said so.
    ReportLoss(status, "shutting down, " + std::to_string(kept.size()) + " writes were not stored");
    kept.clear();
    in_doubt_ = 0;
  }
}

std::optional<bool> GroupCommit::CommittedAnyway() {
  if (!target_.committed_anyway) return false;
  std::chrono::milliseconds wait{50};
  for (int tries = 0; tries < kDoubtTries; ++tries) {
    if (std::optional<bool> took = target_.committed_anyway()) return *took;
    MutexLock lock(mu_);
    const auto until = std::chrono::steady_clock::now() + wait;
    while (!stopping_ && cv_.wait_until(lock, until) == std::cv_status::no_timeout) {
    }
    if (stopping_) break;
    wait = std::min(wait * 2, kMaxBackoff);
  }
  return std::nullopt;
}

void GroupCommit::ReportHealth(const Status& status) {
  const bool failing = !status.ok();
  // Told once each way, not at every batch.
  if (degraded_.exchange(failing) == failing) return;
  MutexLock lock(health_mu_);
  if (health_log_) {
    health_log_(failing, failing ? name_ + ": " + status.message() : "");
  }
}

void GroupCommit::ReportLoss(const Status& status, const std::string& what) {
  MutexLock lock(health_mu_);
  if (health_log_) health_log_(true, name_ + ": " + status.message() + "; " + what);
}

void GroupCommit::SetHealthLog(std::function<void(bool, const std::string&)> log) {
  MutexLock lock(health_mu_);
  health_log_ = std::move(log);
}

}  // namespace tessera
