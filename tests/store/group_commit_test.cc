// GroupCommit on a target of the test's own (it records what each batch held and when it
// committed): a new job's insert goes ahead of a backlog of the engine's writes, a batch takes
// at most a thousand queued writes, and a batch whose commit failed with its outcome unknown is
// asked about, so that it is neither failed when it took nor written twice.
#include "store/group_commit.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tessera {
namespace {

using namespace std::chrono_literals;

// A target whose batches are recorded: `committed` holds the writes of each batch that took.
// The first begin waits until `Release`, so that writes pile up behind a batch in flight.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  bool held = true;
  std::vector<std::string> batch;                   // the one being written
  std::vector<std::vector<std::string>> committed;  // by batch
  int fail_commits = 0;                             // the next commits that fail Unavailable
  std::vector<std::optional<bool>> answers;         // committed_anyway's, in turn

  GroupCommit::Target Target() {
    return {[this] {
              std::unique_lock<std::mutex> lock(mu);
              cv.wait(lock, [&] { return !held; });
              batch.clear();
              return Status::Ok();
            },
            [this](size_t&) {
              std::lock_guard<std::mutex> lock(mu);
              if (fail_commits > 0) {
                --fail_commits;
                pending_doubt = batch;
                return Unavailable("connection lost after COMMIT");
              }
              committed.push_back(batch);
              return Status::Ok();
            },
            [] {},
            [this]() -> std::optional<bool> {
              std::lock_guard<std::mutex> lock(mu);
              std::optional<bool> answer =
                  answers.empty() ? std::optional<bool>(false) : answers.front();
              if (!answers.empty()) answers.erase(answers.begin());
              if (answer == true) committed.push_back(pending_doubt);  // it had taken
              return answer;
            }};
  }
  GroupCommit::Write Write(std::string name) {
    return [this, name] {
      std::lock_guard<std::mutex> lock(mu);
      batch.push_back(name);
      return Status::Ok();
    };
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu);
      held = false;
    }
    cv.notify_all();
  }
  // Every write that took, in commit order.
  std::vector<std::string> Taken() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    for (const auto& b : committed)
      out.insert(out.end(), b.begin(), b.end());
    return out;
  }
  std::vector<std::string> pending_doubt;
};

TEST(GroupCommit, ANewJobsInsertGoesAheadOfTheQueuedWrites) {
  Recorder r;
  GroupCommit commits("test", r.Target(), 1ms);
  auto first = commits.Enqueue(r.Write("in flight"));
  std::this_thread::sleep_for(50ms);  // the writer holds it, in its begin
  for (int i = 0; i < 3; ++i)
    commits.Post(r.Write("update " + std::to_string(i)));
  auto waited = commits.Enqueue(r.Write("cancel"));
  auto insert = commits.EnqueueFirst(r.Write("insert"));
  r.Release();
  ASSERT_TRUE(insert.get().ok());
  ASSERT_TRUE(waited.get().ok());
  ASSERT_TRUE(first.get().ok());
  EXPECT_EQ(r.Taken(), (std::vector<std::string>{"in flight", "insert", "update 0", "update 1",
                                                 "update 2", "cancel"}));
}

TEST(GroupCommit, ABatchTakesAtMostAThousandQueuedWrites) {
  Recorder r;
  GroupCommit commits("test", r.Target(), 1ms);
  auto first = commits.Enqueue(r.Write("in flight"));
  std::this_thread::sleep_for(50ms);
  for (int i = 0; i < 2500; ++i)
    commits.Post(r.Write("w" + std::to_string(i)));
  auto last = commits.Enqueue(r.Write("last"));
  r.Release();
  ASSERT_TRUE(last.get().ok());
  std::lock_guard<std::mutex> lock(r.mu);
  ASSERT_EQ(r.committed.size(), 4u);
  EXPECT_EQ(r.committed[1].size(), 1000u);
  EXPECT_EQ(r.committed[2].size(), 1000u);
  EXPECT_EQ(r.committed[3].size(), 501u);
  EXPECT_EQ(r.committed[1].front(), "w0");  // in order
  EXPECT_EQ(r.committed[3].back(), "last");
}

TEST(GroupCommit, ABatchWhoseCommitTookIsNeitherFailedNorWrittenAgain) {
  Recorder r;
  r.Release();
  r.fail_commits = 1;
  r.answers = {true};
  // Long enough a wait for company that the decision and the insert share a batch.
  GroupCommit commits("test", r.Target(), 200ms);
  commits.Post(r.Write("decision"));
  EXPECT_TRUE(commits.Enqueue(r.Write("insert")).get().ok());
  EXPECT_TRUE(commits.Enqueue(r.Write("after")).get().ok());
  EXPECT_EQ(r.Taken(), (std::vector<std::string>{"decision", "insert", "after"}));
  EXPECT_FALSE(commits.degraded());
}

TEST(GroupCommit, ABatchThatDidNotTakeFailsItsCallersAndGoesAgainUnlessInDoubt) {
  Recorder r;
  r.Release();
  r.fail_commits = 1;
  r.answers = {false};
  // Long enough a wait for company that the decision and the insert share a batch.
  GroupCommit commits("test", r.Target(), 200ms);
  commits.Post(r.Write("decision"));
  EXPECT_EQ(commits.Enqueue(r.Write("insert")).get().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(commits.Enqueue(r.Write("after")).get().ok());
  EXPECT_EQ(r.Taken(), (std::vector<std::string>{"decision", "after"}));

  // In doubt (the database cannot say) five times, then it says the batch took: its kept
  // write is not written again.
  Recorder d;
  d.Release();
  d.fail_commits = 1;
  d.answers = {std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true};
  GroupCommit doubtful("test", d.Target(), 200ms);
  doubtful.Post(d.Write("decision"));
  EXPECT_EQ(doubtful.Enqueue(d.Write("insert")).get().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(doubtful.Enqueue(d.Write("after")).get().ok());
  EXPECT_EQ(d.Taken(), (std::vector<std::string>{"decision", "insert", "after"}));
}

}  // namespace
}  // namespace tessera
