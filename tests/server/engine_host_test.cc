// The engine's thread's host alone: the inbox, posted work and its tickets, pokes, the pace
// and the stop, with a real thread in the engine's place.
#include "server/engine_host.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace tessera {
namespace {

using std::chrono::hours;
using std::chrono::system_clock;

Job Named(const std::string& name) {
  Job j;
  j.name = name;
  return j;
}

TEST(EngineHost, TheInboxHandsOverSubmissionsInOrderOnce) {
  Mutex mu;
  MutexLock lock(mu);
  EngineHost host(0);
  host.Submit(7, Named("a"));
  host.Submit(9, Named("b"));
  EXPECT_TRUE(host.Inboxed(9));
  EXPECT_FALSE(host.Inboxed(8));
  EXPECT_EQ(host.inboxed(), 2u);
  std::vector<std::string> taken;
  host.TakeArrivals([&](EngineHost::Arrival& a) { taken.push_back(a.job.name); });
  EXPECT_EQ(taken, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(host.inboxed(), 0u);
  EXPECT_FALSE(host.Inboxed(7));
}

// The engine's thread in miniature: passes until the host stops, running what is posted.
void EngineThread(Mutex& mu, EngineHost& host, std::vector<int>& ran) {
  MutexLock lock(mu);
  bool first = true;
  while (!host.stopping()) {
    std::optional<system_clock::time_point> due;
    if (!first) due = system_clock::now() + hours(1);  // only a poke or the stop wake it
    first = false;
    if (!host.AwaitPass(lock, due, [] { return false; })) continue;
    host.RunPosted();
    ran.push_back(static_cast<int>(ran.size()));
    host.PassDone();
  }
  host.Abandon();
}

TEST(EngineHost, APosterWaitsForThePassThatRanItsWork) {
  Mutex mu;
  EngineHost host(0);
  std::vector<int> passes;
  std::thread engine([&] { EngineThread(mu, host, passes); });
  std::vector<std::string> done;
  {
    MutexLock lock(mu);
    // The work runs on the engine's thread while this one waits, and is done on return.
    EXPECT_TRUE(host.Post(lock, [&] { done.push_back("first"); }));
    EXPECT_EQ(done, std::vector<std::string>{"first"});
    EXPECT_TRUE(host.Post(lock, [&] { done.push_back("second"); }));
    EXPECT_EQ(done, (std::vector<std::string>{"first", "second"}));
    host.Stop();
  }
  engine.join();
  EXPECT_GE(passes.size(), 2u);
}

TEST(EngineHost, AStopReleasesAPosterWhoseWorkNeverRuns) {
  Mutex mu;
  EngineHost host(0);
  bool ran = false;
  std::thread poster([&] {
    MutexLock lock(mu);
    EXPECT_FALSE(host.Post(lock, [&] { ran = true; }));
  });
  // No engine thread takes it: the stop alone answers the poster, whether it posted before
  // the stop (it is woken) or after (it does not wait).
  {
    MutexLock lock(mu);
    host.Stop();
    host.Abandon();
  }
  poster.join();
  EXPECT_FALSE(ran);
}

TEST(EngineHost, APassForAnEngineThatWasReplacedDoesNotRun) {
  Mutex mu;
  MutexLock lock(mu);
  EngineHost host(0);
  EXPECT_FALSE(host.AwaitPass(lock, std::nullopt, [] { return true; }));
  EXPECT_TRUE(host.AwaitPass(lock, std::nullopt, [] { return false; }));
  host.Stop();
  EXPECT_FALSE(host.AwaitPass(lock, std::nullopt, [] { return false; }));
}

TEST(EngineHost, ASubmissionWakesAWaitingEngineThread) {
  Mutex mu;
  EngineHost host(0);
  std::vector<int> passes;
  std::thread engine([&] { EngineThread(mu, host, passes); });
  // Waits for the first pass (at once), then submits: only the poke can end the hour's wait.
  for (;;) {
    MutexLock lock(mu);
    if (!passes.empty()) {
      host.Submit(1, Named("a"));
      break;
    }
  }
  for (;;) {
    MutexLock lock(mu);
    if (passes.size() >= 2) {
      host.Stop();
      break;
    }
  }
  engine.join();
  EXPECT_GE(passes.size(), 2u);
}

}  // namespace
}  // namespace tessera
