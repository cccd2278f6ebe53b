// Bad configuration, case by case: each must be rejected with the exact place
// (file:line:column and field path), a message saying what was expected, and no Spec.
// The base fleet (spec_fixture) is valid; each case adds one mistake in "case.yaml".
#include <gtest/gtest.h>

#include "testutil/spec_fixture.h"

namespace tessera {
namespace {

struct BadInput {
  const char* name;
  const char* yaml;
  size_t errors;        // how many diagnostics
  const char* where;    // the first: "file:line:col: path"
  const char* message;  // the start of its message
};

const BadInput kCases[] = {
    {"slurm_cluster_without_conf", R"Y(clusters:
  - name: c2
    region: north
    backend: slurm
    backendOptions: {partition: gpu}
    nodes:
      - {name: n1, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:5:21: clusters[0].backendOptions",
     "a slurm cluster needs slurmConf: the path of its controller's slurm.conf"},
    {"slurm_cluster_unknown_option", R"Y(clusters:
  - name: c2
    region: north
    backend: slurm
    backendOptions: {slurmConf: /etc/slurm/slurm.conf, queue: gpu}
    nodes:
      - {name: n1, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:5:21: clusters[0].backendOptions",
     "unknown option \"queue\" of a slurm cluster; expected slurmConf, partition, workDir"},
    {"job_env_reserved_and_bad_names", R"Y(jobs:
  - name: j-env
    class: batch
    tenant: acme/research
    command: [python, train.py]
    env: {TESSERA_NODE: x, 9LIVES: y}
    taskGroups:
      - {name: w, count: 1, cpu: 1, memory: 1Gi}
)Y",
     2, "case.yaml:6:10: jobs[0].env", "\"9LIVES\" is not a variable name"},
    {"job_command_empty", R"Y(jobs:
  - name: j-cmd
    class: batch
    tenant: acme/research
    command: []
    taskGroups:
      - {name: w, count: 1, cpu: 1, memory: 1Gi}
)Y",
     1, "case.yaml:5:14: jobs[0].command", "expected a program and its arguments"},
    {"cluster_bad_tier", R"Y(clusters:
  - name: c2
    region: north
    tier: premium
    nodes:
      - {name: n1, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:4:11: clusters[0].tier",
     "expected one of dedicated, shared, elastic, got \"premium\""},
    {"cluster_duplicate", R"Y(clusters:
  - name: train
    region: north
    nodes:
      - {name: n1, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:2:11: clusters[0].name",
     "duplicate cluster name \"train\" (first declared at base.yaml:"},
    {"cluster_no_nodes", R"Y(clusters:
  - name: c2
    region: north
)Y",
     1, "case.yaml:2:5: clusters[0]", "cluster \"c2\" declares no nodes (add nodeGroups or nodes)"},
    {"cluster_price_absent_model", R"Y(clusters:
  - name: c2
    region: north
    prices: {H800: 3}
    nodes:
      - {name: n1, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:4:20: clusters[0].prices.H800",
     "price for \"H800\", but the cluster has no such devices"},
    {"cluster_price_negative", R"Y(clusters:
  - name: c2
    region: north
    prices: {cpu: -1}
    nodes:
      - {name: n1, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:4:19: clusters[0].prices.cpu",
     "price: a number must not be negative, got \"-1\""},
    {"cluster_price_unknown_model", R"Y(clusters:
  - name: c2
    region: north
    prices: {H900: 3}
    nodes:
      - {name: n1, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:4:20: clusters[0].prices.H900",
     "unknown device model \"H900\" (did you mean \"H800\"?)"},
    {"cluster_unknown_region", R"Y(clusters:
  - name: c2
    region: nroth
    nodes:
      - {name: n1, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:3:13: clusters[0].region", "unknown region \"nroth\" (did you mean \"north\"?)"},
    {"dataset_bad_size", R"Y(datasets:
  - {name: d1, region: east, size: huge}
)Y",
     1, "case.yaml:2:36: datasets[0].size", "expected a memory size, got \"huge\""},
    {"dataset_replica_violates", R"Y(datasets:
  - {name: d1, region: east, size: 1Ti, residency: [east], replicas: [north]}
)Y",
     1, "case.yaml:2:71: datasets[0].replicas[0]",
     "a replica in \"north\" violates the dataset's residency"},
    {"dataset_residency_violated", R"Y(datasets:
  - {name: d1, region: north, size: 1Ti, residency: [east]}
)Y",
     1, "case.yaml:2:24: datasets[0].region",
     "dataset \"d1\" is stored in \"north\", outside the regions its r"},
    {"deep_nesting",
     R"Y(regions: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
)Y",
     1, "case.yaml:1:1", "the document nests deeper than 64 levels"},
    {"duplicate_key", R"Y(regions:
  - name: west
    name: west2
)Y",
     1, "case.yaml:3:5: regions[0].name", "duplicate key \"name\""},
    {"duplicate_region", R"Y(regions:
  - name: north
)Y",
     1, "case.yaml:2:11: regions[0].name",
     "duplicate region name \"north\" (first declared at base.yaml:6"},
    {"group_count_negative", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - {name: g, count: -3, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:5:26: clusters[0].nodeGroups[0].count",
     "expected a whole number from 1 to 200000, got -3"},
    {"group_count_not_number", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - {name: g, count: many, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:5:26: clusters[0].nodeGroups[0].count", "expected a whole number, got \"many\""},
    {"group_cpu_not_number", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - {name: g, count: 2, cpu: lots, memory: 32Gi}
)Y",
     1, "case.yaml:5:34: clusters[0].nodeGroups[0].cpu", "expected a number, got \"lots\""},
    {"group_devices_count_zero", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - name: g
        count: 2
        cpu: 8
        memory: 32Gi
        devices: {model: H800, count: 0}
)Y",
     1, "case.yaml:9:39: clusters[0].nodeGroups[0].devices.count",
     "expected a whole number from 1 to 1024, got 0"},
    {"group_devices_island_not_divisor", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - name: g
        count: 2
        cpu: 8
        memory: 32Gi
        devices: {model: H800, count: 8, perIsland: 3}
)Y",
     1, "case.yaml:9:53: clusters[0].nodeGroups[0].devices.perIsland",
     "devices per island (3) must divide the device count (8)"},
    {"group_devices_unknown_model", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - name: g
        count: 2
        cpu: 8
        memory: 32Gi
        devices: {model: H900, count: 8}
)Y",
     1, "case.yaml:9:26: clusters[0].nodeGroups[0].devices.model",
     "unknown device model \"H900\" (did you mean \"H800\"?)"},
    {"group_memory_bad_unit", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - {name: g, count: 2, cpu: 8, memory: 32Qi}
)Y",
     1, "case.yaml:5:45: clusters[0].nodeGroups[0].memory",
     "bad unit \"Qi\" in a memory size \"32Qi\"; expected Ki, Mi, Gi, "},
    {"group_memory_zero", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - {name: g, count: 2, cpu: 8, memory: 0}
)Y",
     1, "case.yaml:5:45: clusters[0].nodeGroups[0].memory", "a node needs memory (e.g. 512Gi)"},
    {"group_too_many_nodes", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - {name: a, count: 150000, cpu: 8, memory: 32Gi}
      - {name: b, count: 150000, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:6:26: clusters[0].nodeGroups[1].count",
     "the fleet would have 300014 nodes and 96 devices; at most 20"},
    {"group_topology_unknown", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - name: g
        count: 2
        cpu: 8
        memory: 32Gi
        topology: {nodesPerLeaf: 2, nodesPerRack: 4}
)Y",
     1, "case.yaml:9:37: clusters[0].nodeGroups[0].topology.nodesPerRack",
     "unknown field \"nodesPerRack\" in a node group topology (did y"},
    {"invalid_name", R"Y(regions:
  - name: "bad name!"
)Y",
     1, "case.yaml:2:11: regions[0].name",
     "invalid name \"bad name!\"; expected letters, digits, '.', '_'"},
    {"job_bad_class", R"Y(jobs:
  - name: j1
    class: inference
    tenant: acme/research/llm
    taskGroups:
      - {count: 1, cpu: 1, memory: 1Gi}
)Y",
     1, "case.yaml:3:12: jobs[0].class",
     "expected one of training, finetune, batch, eval, got \"infere"},
    {"job_bad_deadline", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    deadline: tomorrow
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi}
)Y",
     1, "case.yaml:5:15: jobs[0].deadline",
     "expected a UTC timestamp such as 2026-12-10T08:00:00Z, got \""},
    {"job_bad_runtime", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    runtime: 3 fortnights
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi}
)Y",
     1, "case.yaml:5:14: jobs[0].runtime",
     "bad unit \"fortnights\" in a duration \"3 fortnights\"; expected"},
    {"job_count_and_fraction", R"Y(jobs:
  - name: j1
    class: eval
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi, devices: {count: 1, fraction: 0.5}}
)Y",
     1, "case.yaml:6:51: jobs[0].taskGroups[0].devices",
     "set either \"count\" (whole devices) or \"fraction\" (a share of"},
    {"job_duplicate", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi}
  - name: j1
    class: batch
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi}
)Y",
     1, "case.yaml:7:11: jobs[1].name",
     "duplicate job name \"j1\" (first declared at case.yaml:2)"},
    {"job_fraction_too_big", R"Y(jobs:
  - name: j1
    class: eval
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi, devices: {fraction: 1.5}}
)Y",
     1, "case.yaml:6:62: jobs[0].taskGroups[0].devices.fraction", "must be at most 1, got 1.5"},
    {"job_gang_bad_level", R"Y(jobs:
  - name: j1
    class: training
    tenant: acme/prod
    gang: {require: rack}
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi}
)Y",
     1, "case.yaml:5:21: jobs[0].gang.require",
     "expected one of island, node, leaf, spine, cluster, region, "},
    {"job_gang_leaf_too_big", R"Y(jobs:
  - name: j1
    class: training
    tenant: acme/prod
    gang: {require: leaf}
    taskGroups:
      - {count: 6, cpu: 8, memory: 64Gi, devices: {count: 8, models: [H800]}}
)Y",
     1, "case.yaml:5:21: jobs[0].gang.require",
     "impossible request: the gang needs 48 devices within one lea"},
    {"job_gang_min_members", R"Y(jobs:
  - name: j1
    class: training
    tenant: acme/prod
    gang: {minMembers: 4}
    taskGroups:
      - {count: 2, cpu: 8, memory: 64Gi, devices: {count: 8}}
)Y",
     1, "case.yaml:5:24: jobs[0].gang.minMembers", "minMembers (4) exceeds the job's 2 tasks"},
    {"job_missing_taskgroups", R"Y(jobs:
  - name: j1
    class: training
    tenant: acme/research/llm
)Y",
     1, "case.yaml:2:5: jobs[0].taskGroups", "missing required field \"taskGroups\" in a job"},
    {"job_model_kind_mismatch", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi, devices: {count: 1, kind: npu, models: [H800]}}
)Y",
     1, "case.yaml:6:82: jobs[0].taskGroups[0].devices.models[0]",
     "model \"H800\" is a gpu, but the request asks for npu"},
    {"job_negative_memory", R"Y(jobs:
  - name: j1
    class: eval
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 8, memory: -64Gi}
)Y",
     1, "case.yaml:6:36: jobs[0].taskGroups[0].memory",
     "a memory size must not be negative, got \"-64Gi\""},
    {"job_no_matching_device", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi, devices: {count: 1, minMemory: 100Gi}}
)Y",
     1, "case.yaml:6:51: jobs[0].taskGroups[0].devices",
     "impossible request: no device in the fleet is gpu/npu with a"},
    {"job_residency_conflict", R"Y(datasets:
  - {name: n-only, region: north, size: 1Gi, residency: [north]}
jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    datasets: [n-only, eu-logs]
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi}
)Y",
     1, "case.yaml:7:15: jobs[0].datasets",
     "impossible request: the datasets' residency rules have no re"},
    {"job_taskgroups_not_list", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    taskGroups: {count: 1}
)Y",
     1, "case.yaml:5:17: jobs[0].taskGroups", "expected a list, got a mapping"},
    {"job_too_many_devices", R"Y(jobs:
  - name: j1
    class: training
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi, devices: {count: 16}}
)Y",
     1, "case.yaml:6:59: jobs[0].taskGroups[0].devices.count",
     "impossible request: a task asks for 16 gpu/npu devices, but "},
    {"job_too_much_cpu", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 500, memory: 64Gi}
)Y",
     1, "case.yaml:6:25: jobs[0].taskGroups[0].cpu",
     "impossible request: a task asks for 500 CPUs, but the larges"},
    {"job_too_much_memory", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 8, memory: 4Ti}
)Y",
     1, "case.yaml:6:36: jobs[0].taskGroups[0].memory",
     "impossible request: a task asks for 4Ti memory, but the larg"},
    {"job_unknown_dataset", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    datasets: [corpsu]
    taskGroups:
      - {count: 1, cpu: 1, memory: 1Gi}
)Y",
     1, "case.yaml:5:16: jobs[0].datasets[0]",
     "unknown dataset \"corpsu\" (did you mean \"corpus\"?)"},
    {"job_unknown_model", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    taskGroups:
      - {count: 1, cpu: 1, memory: 1Gi, devices: {count: 1, models: [A100]}}
)Y",
     1, "case.yaml:6:70: jobs[0].taskGroups[0].devices.models[0]",
     "unknown device model \"A100\"; declared: Ascend910B, H800"},
    {"job_unknown_priority", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    priority: urgent
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi}
)Y",
     1, "case.yaml:5:15: jobs[0].priority",
     "unknown priority class \"urgent\"; declared: critical, high, n"},
    {"job_unknown_tenant", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/research/lm
    taskGroups:
      - {count: 1, cpu: 1, memory: 1Gi}
)Y",
     1, "case.yaml:4:13: jobs[0].tenant",
     "unknown tenant \"acme/research/lm\" (did you mean \"acme/resear"},
    {"labels_not_map", R"Y(regions:
  - name: west
    labels: [a, b]
)Y",
     1, "case.yaml:3:13: regions[0].labels",
     "expected a mapping of label names to values, got a list"},
    {"link_bad_bandwidth_unit", R"Y(regions:
  - name: west
links:
  - {from: north, to: west, latency: 5ms, bandwidth: 10Gb}
)Y",
     1, "case.yaml:4:54: links[0].bandwidth",
     "bad unit \"Gb\" in a bandwidth \"10Gb\"; expected Kbps, Mbps, Gb"},
    {"link_duplicate", R"Y(links:
  - {from: east, to: north, latency: 5ms, bandwidth: 10Gbps}
)Y",
     1, "case.yaml:2:5: links[0]", "duplicate link between \"east\" and \"north\""},
    {"link_negative_latency", R"Y(regions:
  - name: west
links:
  - {from: north, to: west, latency: -5ms, bandwidth: 1Gbps}
)Y",
     1, "case.yaml:4:38: links[0].latency", "a duration must not be negative, got \"-5ms\""},
    {"link_self", R"Y(links:
  - {from: north, to: north, latency: 5ms, bandwidth: 10Gbps}
)Y",
     1, "case.yaml:2:23: links[0].to", "a link joins two different regions"},
    {"link_unknown_region", R"Y(links:
  - {from: north, to: west, latency: 5ms, bandwidth: 10Gbps}
)Y",
     1, "case.yaml:2:23: links[0].to", "unknown region \"west\"; declared: east, north"},
    {"link_zero_bandwidth", R"Y(regions:
  - name: west
links:
  - {from: north, to: west, latency: 5ms, bandwidth: 0Gbps}
)Y",
     1, "case.yaml:4:54: links[0].bandwidth", "a link's bandwidth must be positive"},
    {"missing_name", R"Y(regions:
  - description: no name
)Y",
     1, "case.yaml:2:5: regions[0].name", "missing required field \"name\" in a region"},
    {"model_bad_kind", R"Y(deviceModels:
  - {name: X1, kind: tpu, memory: 16Gi}
)Y",
     1, "case.yaml:2:22: deviceModels[0].kind",
     "expected one of gpu, npu, cpu, got \"tpu\" (did you mean \"gpu\""},
    {"model_bad_speed", R"Y(deviceModels:
  - {name: X1, kind: gpu, memory: 16Gi, speed: {training: fast}}
)Y",
     1, "case.yaml:2:59: deviceModels[0].speed.training", "expected a number, got \"fast\""},
    {"model_missing_memory", R"Y(deviceModels:
  - {name: X1, kind: gpu}
)Y",
     1, "case.yaml:2:5: deviceModels[0].memory",
     "missing required field \"memory\" in a device model"},
    {"model_reserved_cpu", R"Y(deviceModels:
  - {name: cpu, kind: cpu}
)Y",
     1, "case.yaml:2:12: deviceModels[0].name",
     "\"cpu\" is reserved (it prices CPU cores); name the model afte"},
    {"model_speed_unknown_class", R"Y(deviceModels:
  - {name: X1, kind: gpu, memory: 16Gi, speed: {trainig: 1.2}}
)Y",
     1, "case.yaml:2:49: deviceModels[0].speed.trainig",
     "unknown field \"trainig\" in speeds per workload class (did yo"},
    {"model_zero_memory", R"Y(deviceModels:
  - {name: X1, kind: gpu, memory: 0}
)Y",
     1, "case.yaml:2:35: deviceModels[0].memory", "a gpu or npu model needs its memory, e.g. 80Gi"},
    {"multiple_documents", R"Y(regions:
  - name: west
---
regions:
  - name: south
)Y",
     1, "case.yaml:3:1", "a file holds one YAML document; put the document that starts"},
    {"node_duplicate_name", R"Y(clusters:
  - name: c2
    region: north
    nodes:
      - {name: cpu-1, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:5:16: clusters[0].nodes[0].name",
     "duplicate node name \"cpu-1\" (also declared in cluster \"npu\")"},
    {"node_leaf_two_spines", R"Y(clusters:
  - name: c2
    region: north
    nodes:
      - {name: n1, cpu: 8, memory: 32Gi, leaf: l1, spine: s1}
      - {name: n2, cpu: 8, memory: 32Gi, leaf: l1, spine: s2}
)Y",
     1, "case.yaml:6:59: clusters[0].nodes[1].spine",
     "leaf \"l1\" is already under another spine; a leaf switch hang"},
    {"node_name_collides_generated", R"Y(clusters:
  - name: c2
    region: north
    nodes:
      - {name: train-h800-0003, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:5:16: clusters[0].nodes[0].name",
     "duplicate node name \"train-h800-0003\" (also declared in cluster \"train\")"},
    {"policy_allow_deny_same", R"Y(policies:
  - name: p1
    kind: constrain
    allowRegions: [north]
    denyRegions: [north]
)Y",
     1, "case.yaml:5:18: policies[0].denyRegions", "region \"north\" is both allowed and denied"},
    {"policy_bad_kind", R"Y(policies:
  - name: p1
    kind: constrian
)Y",
     1, "case.yaml:3:11: policies[0].kind",
     "expected one of constrain, weights, preemption, burst, reser"},
    {"policy_burst_not_elastic", R"Y(policies:
  - name: p1
    kind: burst
    after: 2h
    budgetPerDay: 100
    clusters: [train]
)Y",
     2, "case.yaml:2:5: policies[0]", "a burst rule needs at least one cluster of tier elastic"},
    {"policy_fallback_duplicate", R"Y(policies:
  - name: p1
    kind: fallback
    order: [H800, {model: H800, speed: 0.5}]
)Y",
     1, "case.yaml:4:19: policies[0].order[1]", "model \"H800\" is listed twice"},
    // Unknown models named twice: the duplicate check must not look them up (a fuzzer's find).
    {"policy_fallback_unknown_twice", R"Y(policies:
  - name: p1
    kind: fallback
    order: [X9, {model: X9, speed: 0.5}]
)Y",
     2, "case.yaml:4:13: policies[0].order[0]", "unknown device model \"X9\""},
    {"policy_field_of_other_kind", R"Y(policies:
  - name: p1
    kind: constrain
    after: 2h
)Y",
     1, "case.yaml:4:5: policies[0].after",
     "unknown field \"after\" in a policy rule; expected one of allo"},
    {"policy_idle_bad_action", R"Y(policies:
  - name: p1
    kind: idleReclaim
    after: 30m
    action: delete
)Y",
     1, "case.yaml:5:13: policies[0].action",
     "expected one of notify, preempt, shrink, got \"delete\""},
    {"policy_missing_kind", R"Y(policies:
  - name: p1
    allowRegions: [north]
)Y",
     1, "case.yaml:2:5: policies[0].kind", "missing required field \"kind\" in a policy rule"},
    {"policy_reservation_too_many", R"Y(policies:
  - name: p1
    kind: reservation
    model: H800
    count: 100
)Y",
     1, "case.yaml:5:12: policies[0].count",
     "reserves 100 H800 but only 64 exist where it applies"},
    {"policy_unknown_class", R"Y(policies:
  - name: p1
    kind: weights
    match: {classes: [trainig]}
)Y",
     1, "case.yaml:4:23: policies[0].match.classes[0]",
     "unknown workload class \"trainig\"; expected one of training, "},
    {"policy_unknown_priority", R"Y(policies:
  - name: p1
    kind: preemption
    match: {minPriority: urgent}
)Y",
     1, "case.yaml:4:26: policies[0].match.minPriority", "unknown priority class \"urgent\""},
    {"policy_unknown_tenant", R"Y(policies:
  - name: p1
    kind: weights
    match: {tenants: [acme/reserch]}
)Y",
     1, "case.yaml:4:23: policies[0].match.tenants[0]",
     "unknown tenant \"acme/reserch\" (use the full path, e.g. org/d"},
    {"policy_weights_unknown_scorer", R"Y(policies:
  - name: p1
    kind: weights
    placement: best-fitt
)Y",
     1, "case.yaml:4:16: policies[0].placement",
     "expected one of random, first-fit, best-fit, dot-product, gpu-packing, gpu-clustering, fgd, "
     "tessera, got \"best-fitt\" (did you mean \"best-fit\"?)"},
    {"policy_weights_fragmentation", R"Y(policies:
  - name: p1
    kind: weights
    fragmentation: 2
)Y",
     1, "case.yaml:4:20: policies[0].fragmentation",
     "fragmentation is not a weight: a fragmentation-aware scorer"},
    {"policy_weights_fgd_without_jobs", R"Y(policies:
  - name: p1
    kind: weights
    placement: fgd
)Y",
     1, "case.yaml:4:16: policies[0].placement",
     "fgd scores against the typical jobs the configuration declares"},
    {"priority_min_run_negative", R"Y(priorityClasses:
  - {name: normal, value: 500, minRunTime: -5m}
)Y",
     1, "case.yaml:2:44: priorityClasses[0].minRunTime",
     "a duration must not be negative, got \"-5m\""},
    {"scheduler_restart_cost_garbage", R"Y(scheduler: {restartCost: soon}
)Y",
     1, "case.yaml:1:26: scheduler.restartCost", "expected a duration, got \"soon\""},
    {"scheduler_reclaim_after_negative", R"Y(scheduler: {reclaimAfter: -1m}
)Y",
     1, "case.yaml:1:27: scheduler.reclaimAfter", "a duration must not be negative, got \"-1m\""},
    {"scheduler_fgd_without_jobs", R"Y(scheduler: {placement: fgd}
)Y",
     1, "case.yaml:1:24: scheduler.placement",
     "fgd scores against the typical jobs the configuration declares"},
    {"scheduler_unknown_policy", R"Y(scheduler:
  ordering: lass
)Y",
     1, "case.yaml:2:13: scheduler.ordering",
     "expected one of fifo, backfill, las, hetero, got \"lass\" (did you mean \"las\"?)"},
    {"scheduler_unknown_scorer", R"Y(scheduler:
  ordering: las
  placement: no-such-scorer
)Y",
     1, "case.yaml:3:14: scheduler.placement", "expected one of random, first-fit, best-fit"},
    {"scheduler_unknown_field", R"Y(scheduler:
  order: las
)Y",
     1, "case.yaml:2:3: scheduler.order", "unknown field"},
    {"priority_class_bad_value", R"Y(priorityClasses:
  - {name: urgent, value: high}
)Y",
     1, "case.yaml:2:27: priorityClasses[0].value", "expected a whole number, got \"high\""},
    {"service_min_above_max", R"Y(services:
  - name: s1
    tenant: acme/prod
    replicas: {min: 4, max: 2}
    replica: {cpu: 8, memory: 64Gi, devices: {count: 1}}
    latencySLO: 200ms
)Y",
     1, "case.yaml:4:21: services[0].replicas.min", "min (4) must not exceed max (2)"},
    {"service_missing_slo", R"Y(services:
  - name: s1
    tenant: acme/prod
    replicas: {min: 1, max: 2}
    replica: {cpu: 8, memory: 64Gi, devices: {count: 1}}
)Y",
     1, "case.yaml:2:5: services[0].latencySLO",
     "missing required field \"latencySLO\" in a service"},
    {"service_time_above_slo", R"Y(services:
  - name: s1
    tenant: acme/prod
    replicas: {min: 1, max: 2}
    replica: {cpu: 8, memory: 64Gi, devices: {count: 1}}
    latencySLO: 100ms
    serviceTime: 150ms
)Y",
     1, "case.yaml:7:18: services[0].serviceTime",
     "the service time alone exceeds the latency SLO"},
    {"service_unknown_user_region", R"Y(services:
  - name: s1
    tenant: acme/prod
    replicas: {min: 1, max: 2}
    replica: {cpu: 8, memory: 64Gi, devices: {count: 1}}
    latencySLO: 200ms
    userRegions: [{region: south, weight: 1}]
)Y",
     1, "case.yaml:7:28: services[0].userRegions[0].region",
     "unknown region \"south\"; declared: east, north"},
    {"tab_indent", R"Y(regions:
	- name: west
)Y",
     1, "case.yaml:2:2: YAML syntax error", "illegal block entry"},
    {"tenant_bad_borrow", R"Y(tenants:
  - name: beta
    quotas:
      H800: {guaranteed: 4, borrow: maybe}
)Y",
     1, "case.yaml:4:37: tenants[0].quotas.H800.borrow", "expected true or false, got \"maybe\""},
    {"tenant_child_above_parent", R"Y(tenants:
  - name: beta
    quotas:
      H800: {guaranteed: 8, limit: 16}
    children:
      - name: team
        quotas:
          H800: {guaranteed: 4, limit: 32}
)Y",
     1, "case.yaml:8:40: tenants[0].children[0].quotas.H800.limit",
     "quota of \"beta/team\" for H800 (32) is above its parent's lim"},
    {"tenant_children_sum_above_parent", R"Y(tenants:
  - name: beta
    quotas:
      H800: {guaranteed: 8, limit: 16}
    children:
      - name: a
        quotas:
          H800: {guaranteed: 6}
      - name: b
        quotas:
          H800: {guaranteed: 6}
)Y",
     1, "case.yaml:4:26: tenants[0].quotas.H800.guaranteed",
     "the children of \"beta\" are guaranteed 12 H800 in total, more"},
    {"tenant_duplicate", R"Y(tenants:
  - name: acme
)Y",
     1, "case.yaml:2:11: tenants[0].name", "duplicate tenant \"acme\""},
    {"tenant_guarantee_above_limit", R"Y(tenants:
  - name: beta
    quotas:
      H800: {guaranteed: 16, limit: 8}
)Y",
     1, "case.yaml:4:26: tenants[0].quotas.H800.guaranteed",
     "guaranteed (16) exceeds the limit (8)"},
    {"tenant_guarantees_exceed_fleet", R"Y(tenants:
  - name: beta
    quotas:
      H800: {guaranteed: 40}
)Y",
     1, "base.yaml:38:26: tenants[0].quotas.H800.guaranteed",
     "the tenants are guaranteed 88 H800 in total, but the fleet h"},
    {"tenant_slash_name", R"Y(tenants:
  - name: beta/x
)Y",
     1, "case.yaml:2:11: tenants[0].name",
     "a tenant name must not contain \"/\"; nest tenants with \"child"},
    {"tenant_unknown_model_quota", R"Y(tenants:
  - name: beta
    quotas:
      H80: {guaranteed: 4}
)Y",
     1, "case.yaml:4:12: tenants[0].quotas.H80",
     "unknown device model \"H80\" (did you mean \"H800\"?)"},
    {"top_level_not_map", R"Y(- just
- a list
)Y",
     1, "case.yaml:1:1", "expected a Tessera configuration file (a mapping), got a lis"},
    {"unknown_field_typo", R"Y(regions:
  - name: west
    descripton: cheap power
)Y",
     1, "case.yaml:3:5: regions[0].descripton",
     "unknown field \"descripton\" in a region (did you mean \"descri"},
    {"unknown_top_level", R"Y(clustres:
  - name: x
)Y",
     1, "case.yaml:1:1: clustres",
     "unknown field \"clustres\" in a Tessera configuration file (di"},
    {"yaml_syntax", R"Y(clusters:
  - name: x
   region: north
)Y",
     1, "case.yaml:3:4: YAML syntax error", "end of sequence not found"},
    {"job_impossible_date", R"Y(jobs:
  - name: j1
    class: batch
    tenant: acme/prod
    deadline: 2026-02-31
    taskGroups:
      - {count: 1, cpu: 8, memory: 64Gi}
)Y",
     1, "case.yaml:5:15: jobs[0].deadline", "expected a UTC timestamp"},
    {"currency_conflict", R"Y(currency: EUR
)Y",
     1, "case.yaml:1:11: currency", "currency \"EUR\" conflicts with \"USD\""},
    {"tenant_child_guarantee_unbacked", R"Y(tenants:
  - name: beta
    children:
      - name: team
        quotas:
          H800: {guaranteed: 4}
)Y",
     1, "case.yaml:4:9: tenants[0].children[0]", "the children of \"beta\" are guaranteed 4 H800"},
    // Quantities are bounded (common/quantity.h), so no fleet total can overflow.
    {"memory_beyond_bound", R"Y(clusters:
  - name: c2
    region: north
    nodeGroups:
      - {name: g, count: 1000, cpu: 8, memory: 999999999Pi}
)Y",
     1, "case.yaml:5:48: clusters[0].nodeGroups[0].memory",
     "a memory size is too large: \"999999999Pi\" (at most 1024Pi)"},
    {"cpu_beyond_bound", R"Y(clusters:
  - name: c2
    region: north
    nodes:
      - {name: n1, cpu: 99999999999, memory: 32Gi}
)Y",
     1, "case.yaml:5:25: clusters[0].nodes[0].cpu",
     "a number is too large: \"99999999999\" (at most 1000000000)"},
    {"bandwidth_beyond_bound", R"Y(clusters:
  - name: c2
    region: north
    interconnect: {leafBandwidth: 99999999Tbps}
    nodes:
      - {name: n1, cpu: 8, memory: 32Gi}
)Y",
     1, "case.yaml:4:35: clusters[0].interconnect.leafBandwidth",
     "a bandwidth is too large: \"99999999Tbps\" (at most 1000000Tbps)"},
    {"duration_beyond_bound", R"Y(jobs:
  - {name: j, class: batch, tenant: acme/prod, runtime: 999999999d,
     taskGroups: [{count: 1, cpu: 1, memory: 1Gi}]}
)Y",
     1, "case.yaml:2:57: jobs[0].runtime",
     "a duration is too large: \"999999999d\" (at most 100000d)"},
};

// Names the case in test output instead of dumping its bytes.
void PrintTo(const BadInput& c, std::ostream* os) {
  *os << c.name;
}

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, RejectedWithLocationAndNothingLoaded) {
  const BadInput& c = GetParam();
  LoadResult r = testing::LoadWithBase(c.yaml);
  ASSERT_FALSE(r.spec.has_value()) << "a bad config must not load";
  std::vector<Diagnostic> d = r.diagnostics.Sorted();
  ASSERT_EQ(d.size(), c.errors) << r.diagnostics.ToString();
  std::string first = d[0].ToString();
  EXPECT_EQ(first.rfind(std::string(c.where) + ": ", 0), 0u) << first;
  EXPECT_NE(first.find(c.message), std::string::npos) << first;
}

INSTANTIATE_TEST_SUITE_P(Config, BadInputTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BadInput>& i) {
                           return std::string(i.param.name);
                         });

TEST(BadInput, TheBaseFleetAloneIsValid) {
  LoadResult r = testing::LoadWithBase("");
  ASSERT_TRUE(r.spec.has_value()) << r.diagnostics.ToString();
  EXPECT_EQ(r.spec->nodes.size(), 14u);
}

}  // namespace
}  // namespace tessera
