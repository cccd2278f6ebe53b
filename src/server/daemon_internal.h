// What the daemon's files share and nobody else sees: the adapters through which the engine
// reaches the daemon (its Store, Backend, event sink and replica host), and small helpers.
#pragma once

#include <string>
#include <utility>

#include "server/daemon.h"

namespace tessera {

// The engine's Store port: every transition and decision goes to the view and the store.
class Daemon::StorePort final : public Store {
 public:
  explicit StorePort(Daemon& d) : d_(d) {}
  // The engine calls its ports on the thread that runs it, which holds mu_.
  void PutJob(const JobRecord& job) override {
    d_.mu_.AssertHeld();
    d_.OnJob(job);
  }
  void AppendDecision(Decision d) override {
    d_.mu_.AssertHeld();
    d_.OnDecision(std::move(d));
  }

 private:
  Daemon& d_;
};

// The backend reports into the engine (on the engine's thread, under mu_).
struct Daemon::Sink final : EventSink {
  Engine* engine = nullptr;
  void Post(const Event& e) override { engine->Post(e); }
};

// The service driver's replicas become the daemon's jobs (on the engine's thread, under mu_).
class Daemon::Replicas final : public ReplicaHost {
 public:
  explicit Replicas(Daemon& d) : d_(d) {}
  std::optional<JobId> SubmitReplica(Job job, TimeMs now) override {
    d_.mu_.AssertHeld();
    return d_.SubmitReplica(std::move(job), now);
  }
  void CancelReplica(JobId id, TimeMs now) override {
    d_.mu_.AssertHeld();
    d_.engine_->Cancel(id, now);
  }

 private:
  Daemon& d_;
};

}  // namespace tessera
