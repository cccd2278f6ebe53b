// The one loop that drives an engine through time (docs/architecture.md §3). The simulator,
// the daemon and the tests differ only in how time passes between passes (their Pace) and in
// what acts on the engine from outside (their sources: a trace's arrivals, failures, services,
// the agents' and Slurm's reports, accepted submissions).
//
// A pass: the next time is the earliest of the engine's next event and every source's next
// time; the pace brings the clock there (a manual clock is set, the daemon waits) or stops the
// drive; every source acts on what is due by then, in the order given; then the engine
// handles its due events and runs a cycle if anything changed.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <utility>

#include "common/clock.h"
#include "engine/engine.h"

namespace tessera {

// Something outside the engine that acts on it at times of its own.
class DriveSource {
 public:
  virtual ~DriveSource() = default;
  // When it next acts (nullopt: not on its own account).
  virtual std::optional<TimeMs> NextTime() const = 0;
  // Acts on whatever of it is due at or before `now` (nothing, when nothing is).
  virtual void Step(TimeMs now) = 0;
};

// A source given as two functions: when it next acts, and its step.
class SourceOf final : public DriveSource {
 public:
  SourceOf(std::function<std::optional<TimeMs>()> next, std::function<void(TimeMs)> step)
      : next_(std::move(next)), step_(std::move(step)) {}
  std::optional<TimeMs> NextTime() const override { return next_(); }
  void Step(TimeMs now) override { step_(now); }

 private:
  std::function<std::optional<TimeMs>()> next_;
  std::function<void(TimeMs)> step_;
};

// How time passes between passes.
class Pace {
 public:
  virtual ~Pace() = default;
  // Brings the clock to `next` (nullopt: nothing is due ever) and says whether to run the
  // pass; false ends the drive.
  virtual bool Await(std::optional<TimeMs> next) = 0;
  // Runs the engine's part of the pass.
  virtual void Run(Engine& engine) { engine.RunDue(); }
};

// Passes until the pace ends the drive.
void Drive(Engine& engine, const Clock& clock, Pace& pace, std::span<DriveSource* const> sources);

// A manual clock's pace: moves the clock to each next time up to `until`, then to `until`
// itself for a last pass, and ends (with `until` kNever: when nothing is due ever). `after`, if
// set, runs after every pass and may end the drive by returning false (the tests' checks).
class ManualPace final : public Pace {
 public:
  ManualPace(ManualClock& clock, TimeMs until, std::function<bool()> after = {})
      : clock_(clock), until_(until), after_(std::move(after)) {}
  bool Await(std::optional<TimeMs> next) override;
  void Run(Engine& engine) override;

 private:
  ManualClock& clock_;
  const TimeMs until_;
  std::function<bool()> after_;
  bool last_ = false;     // the pass at `until` ran
  bool stopped_ = false;  // `after` ended the drive
};

// Drives the engine alone on a manual clock up to `until` (kNever: until nothing is due).
void DriveUntil(Engine& engine, ManualClock& clock, TimeMs until, std::function<bool()> after = {});

}  // namespace tessera
