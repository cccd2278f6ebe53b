// The daemon's stand-in backend until real ones exist (DESIGN.md §3): a run is a timer of the
// job's declared runtime, started when its processes would start (JobRecord::last_start). A
// job that declares no runtime runs until it is cancelled or preempted. Clusters whose
// backend is `emulated` or `sim` run on it.
//
// Thread-safety: none; called on the engine's thread.
#pragma once

#include "engine/event.h"
#include "engine/ports.h"

namespace tessera {

class EmulatedBackend final : public Backend {
 public:
  void SetSink(EventSink* sink) { sink_ = sink; }
  void Launch(const JobRecord& job, TimeMs now) override;
  // A stopped run's timer is left to fire: the engine ignores events of an older generation.
  void Stop(const JobRecord&, TimeMs) override {}
  // The resized run's timer replaces the old one (of an older generation, ignored).
  void Resize(const JobRecord& job, TimeMs now) override { Launch(job, now); }

 private:
  EventSink* sink_ = nullptr;
};

}  // namespace tessera
