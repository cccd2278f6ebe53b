// Tasks: jobs (training, finetune, batch, eval) and services (inference), as in
// docs/architecture.md §1.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/quantity.h"
#include "model/catalog.h"
#include "model/topology.h"

namespace tessera {

// An acceptable device model and how fast this job runs on it (milli, 1000 = nominal).
struct ModelChoice {
  DeviceModelId model;
  Milli speed = 1000;
};

// The devices one task needs: either `count` whole devices (milli_each = 1000) or a fraction
// of one device (count = 1, milli_each in 1..999). count = 0 means a CPU-only task.
struct DeviceRequest {
  int32_t count = 0;
  Milli milli_each = 1000;
  std::vector<ModelChoice> models;  // empty = any model of `kind` with `labels`
  std::optional<DeviceKind> kind;   // restricts "any"; unset = gpu or npu
  std::vector<std::string> labels;  // required capability labels
  MiB min_memory = 0;               // per device

  Milli TotalMilli() const { return static_cast<Milli>(count) * milli_each; }
  // Whether a device of `model` (with id `id`) can serve this request.
  bool Accepts(DeviceModelId id, const DeviceModel& model) const;
  // The speed factor on `id` (1000 when the request lists no models).
  Milli SpeedOn(DeviceModelId id) const;
  bool fractional() const { return count == 1 && milli_each < 1000; }
};

struct TaskRequest {
  Milli cpu = 0;
  MiB memory = 0;
  DeviceRequest devices;
};

struct TaskGroup {
  std::string name;
  int32_t count = 1;
  TaskRequest request;
};

struct GangRule {
  int32_t min_members = 0;  // 0 = every task of the job (all-or-nothing)
  TopologyLevel require = TopologyLevel::kAny;
  TopologyLevel prefer = TopologyLevel::kAny;
};

// The label every replica job of a service carries: the service's name.
inline constexpr const char* kServiceLabel = "tessera.io/service";

struct Job {
  std::string name;
  WorkloadClass job_class = WorkloadClass::kBatch;
  TenantId tenant;
  std::string priority;             // a PriorityClass name
  std::optional<bool> preemptible;  // unset: the priority class's default
  Millis checkpoint_interval = 0;   // 0 = no checkpoints (a restart loses everything)
  std::vector<TaskGroup> task_groups;
  GangRule gang;
  std::vector<DatasetId> datasets;
  std::optional<Millis> runtime;   // estimate
  std::optional<TimeMs> deadline;  // absolute, ms since epoch
  std::optional<TimeMs> submit_time;
  std::map<std::string, std::string> labels;
  // What each task runs on a real backend: the program and its arguments (a YAML string
  // becomes `/bin/sh -c STRING`); empty on the simulator and the emulated backend, where a
  // task is a timer of its runtime. `env` is added to the task's environment.
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  // A service replica: the region its users are in and the longest network round trip they
  // allow (the latency SLO less the service time); clusters farther away are excluded.
  std::optional<RegionId> users_region;
  Millis max_round_trip = 0;

  int32_t TaskCount() const;
};

struct UserRegion {
  RegionId region;
  Milli weight = 1000;  // share of the requests that come from this region
};

// The load signal that drives autoscaling.
struct LoadSignal {
  Milli peak_rps = 0;             // requests per second at the daily peak, all regions together
  Milli rps_per_replica = 0;      // what one replica serves within its SLO
  std::string curve = "diurnal";  // diurnal | flat
};

struct Service {
  std::string name;
  TenantId tenant;
  std::string priority;
  int32_t min_replicas = 1;
  int32_t max_replicas = 1;
  TaskRequest replica;
  Millis latency_slo = 0;   // end-to-end: network latency from the user + service time
  Millis service_time = 0;  // time to serve one request on the nominal device
  std::vector<UserRegion> user_regions;
  LoadSignal load;
  std::map<std::string, std::string> labels;
};

}  // namespace tessera
