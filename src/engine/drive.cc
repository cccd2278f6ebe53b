#include "engine/drive.h"

#include <algorithm>

namespace tessera {

void Drive(Engine& engine, const Clock& clock, Pace& pace, std::span<DriveSource* const> sources) {
  while (true) {
    std::optional<TimeMs> next = engine.NextEventTime();
    for (const DriveSource* s : sources)
      if (std::optional<TimeMs> t = s->NextTime()) next = next ? std::min(*next, *t) : *t;
    if (!pace.Await(next)) return;
    const TimeMs now = clock.Now();
    for (DriveSource* s : sources)
      s->Step(now);
    pace.Run(engine);
  }
}

bool ManualPace::Await(std::optional<TimeMs> next) {
  if (last_ || stopped_) return false;
  if (next && *next <= until_) {
    clock_.Set(std::max(clock_.Now(), *next));
    return true;
  }
  if (until_ == kNever) return false;
  clock_.Set(std::max(clock_.Now(), until_));
  last_ = true;
  return true;
}

void ManualPace::Run(Engine& engine) {
  engine.RunDue();
  if (after_ && !after_()) stopped_ = true;
}

void DriveUntil(Engine& engine, ManualClock& clock, TimeMs until, std::function<bool()> after) {
  ManualPace pace(clock, until, std::move(after));
  Drive(engine, clock, pace, {});
}

}  // namespace tessera
