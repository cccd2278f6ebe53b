// What the daemon keeps durably: plain rows, independent of the engine's in-memory records.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/quantity.h"
#include "common/stable_vector.h"

namespace tessera {

// A submitted job: the submission as received and its last known state.
struct StoredJob {
  int64_t id = 0;
  std::string name;
  std::string tenant;           // tenant path
  std::string job_class;        // training | finetune | batch | eval
  std::string body;             // the job object as submitted (JSON)
  std::string resolved;         // its resolved form (config/job_json.h); Load leaves it empty
                                //   (an ActiveJobReader reads it)
  std::string idempotency_key;  // "" = none
  std::string principal;        // who submitted it
  TimeMs submitted = 0;
  std::string state = "pending";  // JobStateName
  std::string reason;             // PendingReasonCode while not running
  std::string detail;             // why pending / why here
  std::optional<TimeMs> first_start;
  std::optional<TimeMs> finished;
  int32_t restarts = 0;
  std::string placement;            // JSON: the current run's tasks (node, devices, cpu, memory)
  std::optional<TimeMs> run_start;  // when the current run's processes started
  Millis kept_ms = 0;               // progress kept from earlier runs (checkpoints)
};

// What changes of a job as it moves through its states: every column but the submission's
// own (UpdateJob writes these, so that the engine's thread copies no submission text).
struct JobUpdate {
  int64_t id = 0;
  std::string state, reason, detail;
  std::optional<TimeMs> first_start, finished;
  int32_t restarts = 0;
  std::string placement;
  std::optional<TimeMs> run_start;
  Millis kept_ms = 0;

  static JobUpdate Of(const StoredJob& j) {
    return {j.id,       j.state,    j.reason,    j.detail,    j.first_start,
            j.finished, j.restarts, j.placement, j.run_start, j.kept_ms};
  }
};

// Runs a restart resumed where they were, written as one batch (SqliteStore::ResumeRuns): of
// each, its row's new start and the progress it keeps, its "start" decision and its cost rows.
// A restart resumes every running job at once; as single writes they took a third of it.
struct ResumedRuns {
  struct Cost {
    int64_t id = 0;
    uint32_t cluster = 0;  // index into clusters
    int32_t model = -1;    // index into models; -1 = CPU only ("cpu")
    Micro per_hour = 0;
  };
  struct Run {
    int64_t job = 0;
    TimeMs time = 0;  // when it resumed: its run's start and its decision's time
    std::optional<TimeMs> first_start;
    Millis kept_ms = 0;
    // Its start decision and cost rows, when the batch writes them (else they were written
    // on their own).
    bool decided = false;
    std::string reason;           // of the start decision
    std::vector<uint32_t> nodes;  // its nodes, indexes into node_names
    std::vector<Cost> costs;
  };
  std::vector<Run> runs;
  std::vector<std::string> node_names, clusters, models;
};

// What a decision's detail is made of (the store formats it, DecisionDetail): the nodes of
// a start, the cluster choice's words, and the scheduler that decided (its policy and scorer).
struct DecisionParts {
  std::vector<std::string> nodes;
  std::string where;
  std::string policy, placement;
};

// One line of the decision log.
struct StoredDecision {
  int64_t seq = 0;
  TimeMs time = 0;
  std::string kind;
  int64_t job = 0;
  std::string reason;
  std::string detail;  // JSON: nodes, where
};

// One mutating API call.
struct AuditEntry {
  int64_t seq = 0;
  TimeMs time = 0;
  std::string principal;
  std::string remote;  // client address
  std::string method;
  std::string path;
  int status = 0;
  std::string detail;  // e.g. the job created, the error
};

struct Principal {
  std::string name;
  std::string role;    // admin | operator | member | viewer | agent
  std::string tenant;  // member/viewer: the subtree they act in; "" otherwise
  TimeMs created = 0;
  std::string node;  // agent: the one node it answers for; "" = any node
};

struct StoredToken {
  std::string hash;  // hex SHA-256 of the bearer token
  std::string principal;
  std::optional<TimeMs> expires;
  TimeMs created = 0;
};

struct NodeFlags {
  std::string node;
  bool cordoned = false;
  bool draining = false;
};

// What one run spends on one (cluster, model) per hour, from `start` until `end` (open while
// the run runs). CPU-only parts have model "cpu".
struct CostRow {
  int64_t id = 0;
  int64_t job = 0;
  std::string tenant, cluster, model;
  TimeMs start = 0;
  std::optional<TimeMs> end;
  Micro per_hour = 0;
};

// Spending of one (tenant, cluster, model) within a period.
struct CostTotal {
  std::string tenant, cluster, model;
  Micro amount = 0;
};

// A service submitted through the API (its replicas are jobs).
struct StoredService {
  std::string name;
  std::string tenant;     // tenant path
  std::string body;       // the service object as submitted (JSON)
  std::string principal;  // who submitted it
  TimeMs created = 0;
};

// Everything the daemon rebuilds its state from on start.
struct StoreSnapshot {
  StableVector<StoredJob> jobs;  // by id (handed to the daemon's book as it is)
  std::vector<Principal> principals;
  std::vector<StoredToken> tokens;
  std::vector<NodeFlags> nodes;
  std::vector<StoredService> services;  // by name
  int64_t last_cost = 0;                // the highest cost row id
  // The last moment the previous process is known to have been alive (its latest decision,
  // audit record, submission or once-a-second mark): open cost rows are closed there, and a
  // resumed run's progress counts until then.
  TimeMs last_seen = 0;
};

}  // namespace tessera
