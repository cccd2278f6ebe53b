// The one loop that drives an engine (engine/drive.h), on the harness's engine: each pass goes
// to the earliest time of the engine and the sources, every source steps before the engine,
// in the order given, and the pace ends the drive; a manual pace's last pass is at `until`.
#include "engine/drive.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/engine_testutil.h"
#include "sched/preemption_cost.h"

namespace tessera {
namespace {

using testing::Harness;
using testing::MakeJob;

// A source that acts at the given times and writes what it did into a shared log.
class Scripted final : public DriveSource {
 public:
  Scripted(std::string name, std::vector<TimeMs> times, std::vector<std::string>& log)
      : name_(std::move(name)), times_(std::move(times)), log_(log) {}
  std::optional<TimeMs> NextTime() const override {
    if (next_ >= times_.size()) return std::nullopt;
    return times_[next_];
  }
  void Step(TimeMs now) override {
    while (next_ < times_.size() && times_[next_] <= now)
      log_.push_back(name_ + "@" + std::to_string(times_[next_++]) + "/" + std::to_string(now));
  }

 private:
  std::string name_;
  std::vector<TimeMs> times_;
  size_t next_ = 0;
  std::vector<std::string>& log_;
};

// Records the times it was asked for and stops after `passes`.
class CountingPace final : public Pace {
 public:
  CountingPace(ManualClock& clock, int passes) : clock_(clock), passes_(passes) {}
  bool Await(std::optional<TimeMs> next) override {
    asked.push_back(next ? *next : -1);
    if (!next || passes_-- == 0) return false;
    clock_.Set(*next);
    return true;
  }
  std::vector<TimeMs> asked;

 private:
  ManualClock& clock_;
  int passes_;
};

TEST(Drive, EachPassGoesToTheEarliestTimeAndTheSourcesStepInOrder) {
  Harness h("fifo", true);
  std::vector<std::string> log;
  Scripted a("a", {10, 30}, log), b("b", {20, 30}, log);
  DriveSource* const sources[] = {&a, &b};
  CountingPace pace(h.clock, 100);
  Drive(*h.engine, h.clock, pace, sources);
  // 10, 20, 30 (both), then nothing is due ever: the pace is told so and ends the drive.
  EXPECT_EQ(pace.asked, (std::vector<TimeMs>{10, 20, 30, -1}));
  EXPECT_EQ(log, (std::vector<std::string>{"a@10/10", "b@20/20", "a@30/30", "b@30/30"}));
}

TEST(Drive, TheEnginesEventsCountAndThePaceEndsTheDrive) {
  Harness h("fifo", true);
  JobId id = h.Submit(MakeJob(h.spec, "j", 1, 60'000), 5'000);
  std::vector<std::string> log;
  Scripted late("late", {50'000}, log);
  DriveSource* const sources[] = {&late};
  CountingPace pace(h.clock, 1);  // one pass only
  Drive(*h.engine, h.clock, pace, sources);
  ASSERT_GE(pace.asked.size(), 1u);
  EXPECT_EQ(pace.asked[0], 5'000);  // the submission, before the source's time
  EXPECT_TRUE(h.engine->job(id).running());
  EXPECT_TRUE(log.empty());  // the drive ended before the source was due
}

TEST(Drive, AManualPaceRunsEveryEventUpToUntilAndALastPassThere) {
  Harness h("fifo", true);
  JobId first = h.Submit(MakeJob(h.spec, "first", 16, 60'000), 0);  // the whole fleet
  JobId second = h.Submit(MakeJob(h.spec, "second", 16, 60'000), 1'000);
  int passes = 0;
  DriveUntil(*h.engine, h.clock, 30'000, [&] {
    ++passes;
    return true;
  });
  EXPECT_EQ(h.clock.Now(), 30'000);  // the last pass is at `until`
  EXPECT_TRUE(h.engine->job(first).running());
  EXPECT_EQ(h.engine->job(second).state, JobState::kPending);
  EXPECT_GE(passes, 3);  // 0, 1 s and 30 s at least
  // `after` may end the drive: a drive to the end stops after its first pass. The first is
  // first's end; second's search for victims found none at 1 s and backs off 30 s, and the
  // engine's tick for it falls on the next multiple of 30 s after that (SearchTick): 60 s.
  h.Finish(first, 40'000);
  int more = 0;
  DriveUntil(*h.engine, h.clock, kNever, [&] { return ++more < 1; });
  EXPECT_EQ(more, 1);
  EXPECT_EQ(h.clock.Now(), 40'000);
  EXPECT_TRUE(h.engine->job(second).running());
  more = 0;
  DriveUntil(*h.engine, h.clock, kNever, [&] { return ++more < 1; });
  EXPECT_EQ(more, 1);
  EXPECT_EQ(h.clock.Now(), SearchTick(1'000 + kSearchBackoff));
  EXPECT_EQ(h.clock.Now(), 60'000);
}

}  // namespace
}  // namespace tessera
