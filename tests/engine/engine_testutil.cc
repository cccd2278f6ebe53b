#include "engine/engine_testutil.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "engine/drive.h"
#include "sched/policy/builtin.h"

namespace tessera::testing {

const std::string kEngineFleet = G1Fleet(
    "      - {name: n, count: 4, cpu: 64, memory: 512Gi, devices: {model: G1, count: 4},\n"
    "         topology: {nodesPerLeaf: 2}}\n",
    "tenants:\n  - name: t\n");

Spec LoadFleet(const std::string& yaml) {
  LoadResult r = LoadSpecTexts({{"fleet.yaml", yaml}});
  if (!r.spec) {
    ADD_FAILURE() << "fleet does not load";
    std::abort();
  }
  return *r.spec;
}

Job MakeJob(const Spec& spec, const std::string& name, int32_t tasks, Millis runtime) {
  Job job;
  job.name = name;
  job.job_class = WorkloadClass::kTraining;
  job.tenant = TenantId(0);
  job.priority = "normal";
  TaskGroup g;
  g.name = "worker";
  g.count = tasks;
  g.request.cpu = 1000;
  g.request.memory = 1024;
  g.request.devices.count = 1;
  g.request.devices.models.push_back({*spec.FindModel("G1"), 1000});
  job.task_groups.push_back(g);
  job.gang.require = TopologyLevel::kCluster;
  job.runtime = runtime;
  return job;
}

Harness::Harness(const std::string& ordering, bool backfill, const std::string& fleet)
    : spec(LoadFleet(fleet)) {
  // The scenarios preempt seconds after a start: a class's minRunTime is 0 here unless the
  // fleet sets it (the tests of the guard do).
  for (PriorityClass& pc : spec.priority_classes)
    pc.min_run = pc.min_run.value_or(0);
  scorer = policy::MakeBestFit();
  OrderingRegistry registry;
  RegisterBuiltinOrderings(registry);
  order = registry.Create(ordering).value();
  EngineOptions options;
  options.backfill = backfill;
  engine = std::make_unique<Engine>(spec, *CellState::FromSpec(spec), *scorer, *order, store,
                                    backend, clock, rng, options);
}

void Harness::RunUntil(TimeMs t) {
  DriveUntil(*engine, clock, t);
}

void Harness::Finish(JobId job, TimeMs t) {
  FinishRun(job, engine->job(job).generation, t);
}

void Harness::FinishRun(JobId job, uint64_t generation, TimeMs t) {
  Event e;
  e.time = t;
  e.kind = EventKind::kFinish;
  e.job = job;
  e.generation = generation;
  engine->Post(e);
}

Milli Harness::FreeMilli() const {
  Milli free = 0;
  const CellState& cell = engine->cell();
  for (uint32_t n = 0; n < cell.node_count(); ++n) {
    for (const DeviceSlot& d : cell.devices(n))
      free += d.free;
  }
  return free;
}

}  // namespace tessera::testing
