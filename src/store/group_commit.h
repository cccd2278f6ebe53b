// Group commit: the one writer thread of a durable store (SqliteStore, PostgresStore).
//
// Writes are queued and committed by the writer in batches, one transaction each: a submission
// waits for the future of its insert, so it is acknowledged only once durable, while many
// concurrent submissions share a commit. Writes that nobody waits for (the engine's updates,
// decisions, cost rows) wait a little for company (background_delay), so that a commit carries
// more of them. When a batch fails, a write wrong in itself (a constraint: not Unavailable)
// fails alone and the rest go again at once; when the store itself fails (Unavailable), the
// waiting callers are told and the writes nobody waits for are kept, in order, and retried with
// a backoff until the store takes them (DurableStore's contract).
//
// Thread-safety: every method may be called from any thread; the target's functions run on the
// writer thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"

namespace tessera {

class GroupCommit {
 public:
  // One write of a batch, run on the writer thread inside the batch's transaction.
  using Write = std::function<Status()>;
  // The transaction a batch runs in: begin, commit, and rollback after a failure. A target that
  // sends the writes without waiting (PostgreSQL's pipeline) learns at commit which write
  // failed: it sets `failed_at` to its index in the batch (left alone: not one write's fault).
  // A target whose commit can fail without saying whether it took (a connection lost after
  // COMMIT was sent) answers `committed_anyway` after such a failure: whether that batch
  // committed after all; nullopt while it cannot tell (none: it always knows).
  struct Target {
    std::function<Status()> begin;
    std::function<Status(size_t& failed_at)> commit;
    std::function<void()> rollback;
    std::function<std::optional<bool>()> committed_anyway;
  };

  // `name` heads the health log's messages ("store PATH").
  GroupCommit(std::string name, Target target, std::chrono::milliseconds background_delay);
  // Commits what is queued (or, while the store fails, says what is lost) and stops the writer.
  ~GroupCommit();
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // A write whose caller waits: the future resolves when its batch commits or fails.
  std::shared_future<Status> Enqueue(Write w);
  // The same for a write that no queued write depends on, nor it on them (a new job's row: no
  // write of the job is queued before its insert is acknowledged): it goes into the next batch
  // ahead of the queued writes, so that a submission never waits behind a backlog of the
  // engine's updates.
  std::shared_future<Status> EnqueueFirst(Write w);
  // A write nobody waits for (no promise to allocate): kept and retried while the store fails.
  void Post(Write w);

  uint64_t committed_writes() const { return committed_writes_; }
  uint64_t batches() const { return batches_; }
  bool degraded() const { return degraded_; }
  void SetHealthLog(std::function<void(bool degraded, const std::string& message)> log);

 private:
  struct Pending {
    Write write;
    std::optional<std::promise<Status>> done;  // set by the writer; none for Post
  };

  // Under mu_: queues `p` (at `to`); whether the writer must be woken (nothing was queued).
  bool Push(Pending p, std::deque<Pending>& to) REQUIRES(mu_);
  std::shared_future<Status> Waited(Write w, bool first);
  // The writer: batches, and on a failure keeps the writes nobody waits for and retries them.
  void WriterLoop();
  // Tells the health log when the store starts failing and when it recovers.
  void ReportHealth(const Status& status);
  // Tells the health log that writes were lost (`what`), at every loss.
  void ReportLoss(const Status& status, const std::string& what);

  // A batch that did not commit (or may have: `doubtful`): its callers are told `status`, the
  // writes nobody waits for are kept (in order, after what `kept` holds), the backoff grows; a
  // store shutting down loses what is kept, and says so.
  void Fail(std::deque<Pending>& batch, const Status& status, bool doubtful,
            std::deque<Pending>& kept, std::chrono::milliseconds& backoff);
  // After a batch failed Unavailable: whether it committed after all, asked of the target
  // (again, with a backoff, while it cannot tell, at most kDoubtTries times or until stopping);
  // nullopt: still in doubt.
  std::optional<bool> CommittedAnyway();

  // The longest the writer waits before retrying a failed store.
  static constexpr std::chrono::milliseconds kMaxBackoff{1000};
  static constexpr int kDoubtTries = 5;
  // The most writes a batch takes from the queue: a batch's time bounds how long a write
  // enqueued while it runs waits (PostgreSQL ran a backlog of 10,000 updates in one batch for
  // ~300 ms), while a thousand still share one sync.
  static constexpr size_t kMaxBatch = 1000;
  // Writer thread only: how many writes at the head of `kept` belong to a batch whose commit
  // is in doubt (0: none).
  size_t in_doubt_ = 0;

  const std::string name_;
  const Target target_;
  const std::chrono::milliseconds background_delay_;
  Mutex mu_;
  CondVar cv_;
  std::deque<Pending> first_ GUARDED_BY(mu_);  // EnqueueFirst's, taken before queue_
  std::deque<Pending> queue_ GUARDED_BY(mu_);
  size_t waiting_ GUARDED_BY(mu_) = 0;      // writes in first_ and queue_ with a future
  bool lingering_ GUARDED_BY(mu_) = false;  // the writer waits for company, nobody waits
  bool stopping_ GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> committed_writes_{0};
  std::atomic<uint64_t> batches_{0};
  std::atomic<bool> degraded_{false};
  Mutex health_mu_;
  std::function<void(bool, const std::string&)> health_log_ GUARDED_BY(health_mu_);
  std::thread writer_;  // last: started once everything above is
};

}  // namespace tessera
