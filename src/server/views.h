// What the daemon answers, as values: the daemon fills them from its state under its lock,
// the API layer renders them (api_views.h). Nothing here knows JSON or HTTP.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/local/agent_hub.h"
#include "backends/slurm/slurm_text.h"
#include "common/clock.h"
#include "common/quantity.h"
#include "config/diagnostics.h"
#include "engine/deadline.h"
#include "store/rows.h"

namespace tessera {

// A job as other views name it.
struct JobRef {
  int64_t id = 0;
  std::string name;
  std::string tenant;
};

// A cluster as the engine sees it now: its nodes by state and its devices by model.
struct ClusterSummary {
  std::string name, region, tier, backend;
  int64_t nodes = 0, ready = 0, cordoned = 0, down = 0;
  struct Devices {
    std::string model;
    int64_t count = 0;
    Milli allocated = 0;
  };
  std::vector<Devices> devices;  // by model
};

// A node as the engine, its agent and its Slurm controller see it now.
struct NodeView {
  std::string name, cluster;
  std::string state;  // ready, cordoned, drained, down
  bool cordoned_by_config = false;
  Milli cpu = 0, cpu_free = 0;
  int64_t memory_mib = 0, memory_free_mib = 0;
  struct Devices {
    std::string model;
    int64_t count = 0;
    Milli free = 0;
  };
  std::vector<Devices> devices;  // by model
  std::vector<JobRef> jobs;      // those on it the caller may see
  // Its agent (local clusters), and whether the caller may see the agent's id (the fleet's
  // operators: it names the process that answers for the node).
  std::optional<AgentNodeStatus> agent;
  bool show_agent_id = false;
  std::optional<SlurmNode> slurm;  // a slurm cluster's node, as its controller reports it
  // What the fleet declares against what the agent's host or Slurm's GRES has ("" = agrees).
  std::string agent_mismatch, slurm_mismatch;
};

// A page of nodes in cell order.
struct NodePage {
  std::vector<NodeView> items;
  int64_t next = 0;  // the `after` of the next page; 0 = none
};

// A tenant with each model's quota against what it uses now.
struct TenantView {
  std::string path;
  struct Quota {
    std::string model;
    Milli used = 0, guaranteed = 0;
    std::optional<Milli> limit;  // nullopt = unlimited
    bool borrowing = false;
  };
  std::vector<Quota> quotas;
  std::optional<Milli> budget_per_day;  // milli currency units
};

// A service with its replicas, load and SLO.
struct ServiceView {
  std::string name, tenant, principal;
  TimeMs created = 0;
  std::string error;     // why it is not driven ("" = active)
  bool deleted = false;  // the answer to its deletion
  std::string body;      // as submitted
  int32_t min_replicas = 0, max_replicas = 0;
  int64_t wanted = 0, running = 0, pending = 0;
  std::vector<int64_t> replica_jobs;
  double rps = 0;
  bool reported = false;  // the load is a reported one, not the curve's
  Millis latency_slo = 0;
  double requests = 0, served = 0;  // served within the SLO
};

// Why a job is pending, or why it runs where it does, with its decision log.
struct JobExplanation {
  StoredJob job;
  std::string policy, placement;            // the scheduler in force, which decides for it now
  std::optional<DeadlineOutlook> deadline;  // when it has one
  std::vector<StoredDecision> decisions;
};

// A page of the decision log, each with its job.
struct DecisionPage {
  struct Item {
    StoredDecision decision;
    JobRef job;
  };
  std::vector<Item> items;
  std::optional<int64_t> next;  // the seq after which the next page starts
};

// Spending within [since, until) grouped `by` tenant, project, cluster or model.
struct SpendingReport {
  std::string by;
  TimeMs since = 0, until = 0;
  std::string currency;
  Micro total = 0;
  std::vector<std::pair<std::string, Micro>> items;  // by key
};

// What a check or reload of the configuration's files found and did.
struct ReloadReport {
  bool ok = false, applied = false;
  Diagnostics errors;  // when not ok
  struct Change {
    std::string section;  // policies, priorityClasses, tenants, clusters, nodes
    std::vector<std::string> added, removed;
  };
  std::vector<Change> changes;  // when ok
  struct Jobs {
    int64_t resumed = 0, requeued = 0, queued = 0, failed = 0;
  };
  std::optional<Jobs> jobs;  // when applied
};

// The tail of a task's output.
struct TaskLogView {
  int64_t job = 0;
  int32_t run = 0;
  int task = 0;
  std::string log;
};

}  // namespace tessera
