// Services (inference) on the engine (docs/simulation.md#services, docs/serve.md#services): each
// service's replicas are jobs of the engine, scaled every interval to the load, and measured
// against the latency SLO. The simulator and the daemon drive the same code; what differs is
// how a replica is submitted (ReplicaHost) and where the load comes from.
//
// Load. A service's requests per second follow its curve: `diurnal` is
//     peakRps x (0.3 + 0.7 x (1 - cos(2 pi (hour - 4) / 24)) / 2)
// (a trough of 30% at 04:00, the peak at 16:00, hours of the clock: UTC on the daemon's), `flat`
// is peakRps. A reported load (ReportLoad: what a gateway measured) replaces the curve until it
// is older than three intervals. Each user region sends its weight's share.
//
// Scaling. Every interval each (service, user region) group wants
// ceil(max(rps now, rps at the next step) / rpsPerReplica) replicas — at least its weight's share
// of replicas.min, together at most replicas.max (largest weights first). New replicas are
// submitted (priority and tenant of the service, not preemptible, one task of `replica`,
// restricted to clusters whose network round trip from the users fits the SLO less the
// service time); surplus ones are cancelled, pending ones first, then the newest. Scale-up
// may preempt batch work as the preemption rules allow; scale-down returns the devices.
//
// SLO attainment. Over each interval a group's requests are served within the SLO up to the
// capacity of its running replicas that meet it: rpsPerReplica x the replica's speed on its
// device (RunSpeed), where round trip + serviceTime / speed <= latencySLO. Attainment =
// requests served within the SLO / requests, over every group and interval.
//
// Thread-safety: none; driven by the thread that drives the engine.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/drive.h"
#include "engine/engine.h"
#include "sched/fleet_view.h"

namespace tessera {

// How replicas reach the engine: the simulator submits them directly, the daemon stores them
// as jobs first.
class ReplicaHost {
 public:
  virtual ~ReplicaHost() = default;
  // Submits a replica job; nullopt when it was not accepted (the next step tries again).
  virtual std::optional<JobId> SubmitReplica(Job job, TimeMs now) = 0;
  virtual void CancelReplica(JobId id, TimeMs now) = 0;
};

// One service as the driver sees it now, and its totals since it was added.
struct ServiceStatus {
  std::string name;
  double rps = 0;         // demand at the last step
  bool reported = false;  // rps is a reported load, not the curve
  int32_t wanted = 0;     // replicas the last step asked for
  int32_t running = 0, pending = 0;
  std::vector<JobId> replicas;  // submission order
  double requests = 0, served = 0;
  double replica_ms = 0;  // running replicas x time
  size_t max_replicas = 0;
  TimeMs since = 0;  // when the driver took it on
};

class ServiceDriver {
 public:
  // Steps every `interval` from `start` until `horizon` (kNever: no end); at the horizon every
  // replica is cancelled. Replica names are the service's name, `separator` and a number.
  ServiceDriver(const Spec& spec, TimeMs start, TimeMs horizon, Millis interval = 5 * 60 * 1000,
                std::string separator = "/r");

  // Takes on a service (its name not in use); scaled from the next step.
  Status Add(const Service& service, TimeMs now);
  // Stops a service: its replicas are cancelled. NotFound when it is not driven.
  Status Remove(const std::string& name, ReplicaHost& host, TimeMs now);
  // A replica that already exists (a restart, a reload) joins its service's group again: by
  // the service label and the users' region. False when no driven service claims it.
  bool Adopt(JobId id, const Job& job);
  // The measured load of a service, rps over all its user regions, as of `now`.
  Status ReportLoad(const std::string& name, double rps, TimeMs now);

  // Whether a step is due some time: a service is driven and the horizon is not reached.
  bool active() const;
  TimeMs next_time() const { return next_; }
  TimeMs last_step() const { return last_; }
  // Accounts the interval just past and scales every service to its load at `now`.
  void Step(Engine& engine, ReplicaHost& host, TimeMs now);

  const std::vector<Service>& services() const { return services_; }
  std::optional<ServiceStatus> Find(const std::string& name, const Engine& engine) const;
  // Every service, in the order they were added.
  std::vector<ServiceStatus> Statuses(const Engine& engine) const;

 private:
  struct Group {
    size_t service = 0;
    std::optional<RegionId> users;
    double weight = 1;            // share of the service's requests
    std::vector<JobId> replicas;  // submission order
  };
  struct State {
    bool removed = false;
    std::optional<double> reported_rps;
    TimeMs reported_at = 0;
    double rps = 0;
    bool reported = false;
    int32_t wanted = 0;
    double requests = 0, served = 0, replica_ms = 0;
    size_t max_replicas = 0;
    TimeMs since = 0;
    int64_t submitted = 0;  // replica numbers used
  };
  std::optional<size_t> Index(const std::string& name) const;
  // Demand at `t`; `*reported` says whether it is a reported load.
  double Rps(size_t service, TimeMs t, bool* reported = nullptr) const;
  // Whether a running replica meets its group's SLO, and its capacity (rps) if so.
  double Capacity(const Engine& engine, const Group& g, const JobRecord& r) const;
  void Scale(Engine& engine, ReplicaHost& host, size_t service, TimeMs now);

  const Spec& spec_;
  TimeMs horizon_;
  Millis interval_;
  std::string separator_;
  TimeMs next_ = 0, last_ = 0;
  RegionPaths paths_;
  std::vector<Service> services_;  // by index; a removed one keeps its slot
  std::vector<State> state_;
  std::vector<Group> groups_;
};

// A driver's services as a source of the engine's driver (engine/drive.h): each step when due.
class ServiceSteps final : public DriveSource {
 public:
  ServiceSteps(ServiceDriver& services, Engine& engine, ReplicaHost& replicas)
      : services_(services), engine_(engine), replicas_(replicas) {}
  std::optional<TimeMs> NextTime() const override {
    if (!services_.active()) return std::nullopt;
    return services_.next_time();
  }
  void Step(TimeMs now) override {
    if (services_.active() && services_.next_time() <= now) services_.Step(engine_, replicas_, now);
  }

 private:
  ServiceDriver& services_;
  Engine& engine_;
  ReplicaHost& replicas_;
};

}  // namespace tessera
