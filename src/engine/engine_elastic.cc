// Elastic gangs (gang.minMembers below the job's task count): a run starts once its first
// minMembers tasks fit, with as many more as fit beside them, and takes the rest as room
// appears. A run short of tasks progresses at its members' share of the job's pace
// (MembersShare); each growth is a new generation of the same run — the tasks already running
// go on, the new ones start, the progress carries over — logged as `grow`.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_cycle.h"

namespace tessera {

namespace {

// The device models a run's placements use.
ModelMask ModelsOf(const CellState& cell, const std::vector<Placement>& run) {
  ModelMask models = 0;
  for (const Placement& p : run) {
    auto devices = cell.devices(p.node);
    for (const DeviceUse& u : p.devices)
      models |= ModelMask{1} << devices[u.index].model;
  }
  return models;
}

// The island of a placement's first device (none for a CPU-only task).
std::optional<uint16_t> IslandOf(const CellState& cell, const Placement& p) {
  if (p.devices.empty()) return std::nullopt;
  return cell.devices(p.node)[p.devices.front().index].island;
}

// "+2 task(s), 4 of 6" / "-2 task(s), 2 of 6".
std::string Members(char sign, size_t changed, size_t now, int32_t of) {
  return std::string(1, sign) + std::to_string(changed) + " task(s), " + std::to_string(now) +
         " of " + std::to_string(of);
}

}  // namespace

const TaskShape& Engine::GrowthShape(Compiled& c, int32_t task, ModelMask models, uint32_t cluster,
                                     TaskShape::Guard guard) {
  int32_t group = 0;
  for (int32_t past = task - c.start_tasks;
       group + 1 < static_cast<int32_t>(c.growth.size()) && past >= c.growth[group].count; ++group)
    past -= c.growth[group].count;
  auto key = std::make_tuple(group, models, cluster, guard);
  auto it = c.growth_shapes.find(key);
  if (it != c.growth_shapes.end()) return it->second;
  TaskShape shape = c.growth[group].shape;
  shape.scope = ClusterScope(cluster);
  if (!shape.cpu_only() && models != 0) shape.models &= models;
  shape.guard =
      guard == TaskShape::kCpuNodesOnly && !shape.cpu_only() ? TaskShape::kKeepDevicesFed : guard;
  shapes_.Intern(shape);
  return c.growth_shapes.emplace(key, shape).first->second;
}

std::vector<Placement> Engine::MoreTasks(JobRecord& j, Compiled& c,
                                         const std::vector<Placement>& run, bool charged) {
  std::vector<Placement> added;
  if (run.empty() || run.size() >= static_cast<size_t>(c.task_count)) return added;
  const uint32_t first = run.front().node;
  const uint32_t cluster = cell_.node(first).cluster;
  const std::optional<size_t> home = cell_.ClusterDomain(cluster);
  if (!home) return added;
  const ModelMask models = ModelsOf(cell_, run);
  // Where the gang rule lets a task go: the run's node (a node or island rule), its leaf or
  // spine, else its cluster (the shapes' scope). Its own nodes are tried first.
  const TopologyLevel level = c.gang.require;
  const bool one_node = level <= TopologyLevel::kNode;
  const std::vector<uint32_t>* domain = nullptr;
  if (level == TopologyLevel::kLeaf || level == TopologyLevel::kSpine)
    domain = &cell_.domain_nodes(level, cell_.domain_of(level, first));
  std::vector<uint32_t> own = DistinctNodes(run);
  // What the quota is to admit: the run's devices when they are not charged yet, and the
  // new tasks'.
  std::vector<Milli> charge = charged ? std::vector<Milli>(cell_.model_count(), 0) : PerModel(run);
  // CPU-only tasks keep to CPU-only nodes first; no growth takes what free devices need.
  static constexpr TaskShape::Guard kCpuGuards[] = {TaskShape::kCpuNodesOnly,
                                                    TaskShape::kKeepDevicesFed};
  static constexpr TaskShape::Guard kDeviceGuards[] = {TaskShape::kKeepDevicesFed};
  const std::span<const TaskShape::Guard> guards =
      c.mask == 0 ? std::span<const TaskShape::Guard>(kCpuGuards)
                  : std::span<const TaskShape::Guard>(kDeviceGuards);
  Placer& placer = PlacerFor(c);
  for (int32_t t = static_cast<int32_t>(run.size()); t < c.task_count; ++t) {
    std::optional<Placement> got;
    for (TaskShape::Guard guard : guards) {
      const TaskShape& shape = GrowthShape(c, t, models, cluster, guard);
      // Nothing to look for when the cluster has not the room of one task.
      if (shape.cpu_only() ? cell_.DomainFreeCpu(TopologyLevel::kCluster, *home) < shape.cpu
                           : cell_.DomainFreeDevices(TopologyLevel::kCluster, *home, shape.models) <
                                 shape.total_milli())
        return added;
      PlaceResult r = placer.PlaceWithin(cell_, shape, own, &rng_);
      if (r.outcome != PlaceOutcome::kPlaced && !one_node) {
        r = domain != nullptr ? placer.PlaceWithin(cell_, shape, *domain, &rng_)
                              : placer.Place(cell_, shape, &rng_);
      }
      if (r.outcome == PlaceOutcome::kPlaced) {
        got = r.placement;
        break;
      }
    }
    if (!got) break;
    Placement& p = *got;
    p.task = {j.id, t};
    if (level == TopologyLevel::kIsland && IslandOf(cell_, p) != IslandOf(cell_, run.front()))
      break;
    std::vector<Milli> with = charge;
    const std::vector<Milli> more = PerModel({p});
    for (size_t m = 0; m < with.size(); ++m)
      with[m] += more[m];
    if (c.mask != 0) {
      const QuotaVerdict v = quotas_.Check(j.job.tenant, with);
      if (!v.ok) break;
      j.borrowing = j.borrowing || v.borrowing;
    }
    if (holds_.size() && !holds_.Refuses({p}, c.holds, j.preemptible).empty()) break;
    Status s = cell_.Commit(p);
    CHECK(s.ok()) << "the placer proposed what does not fit: " << s.ToString();
    charge = std::move(with);
    added.push_back(p);
    if (!std::binary_search(own.begin(), own.end(), p.node))
      own.insert(std::upper_bound(own.begin(), own.end(), p.node), p.node);
  }
  return added;
}

void Engine::Widen(JobRecord& j, GangResult& placed) {
  std::vector<Placement> more =
      MoreTasks(j, *compiled_[j.id.value()], placed.placements, /*charged=*/false);
  for (Placement& p : more) {
    placed.placements.push_back(p);
    if (!placed.parts.empty()) placed.parts.emplace_back();
  }
}

void Engine::GrowElastic(CycleState& cs) {
  // A job blocked in strict order holds everything behind it, growth included.
  if (cs.blocked && !options_.backfill) return;
  const std::vector<uint32_t> ids(growing_.begin(), growing_.end());
  for (uint32_t id : ids) {
    JobRecord& j = jobs_[id];
    if (!j.running() || cs.stopped.count(id)) continue;
    Compiled& c = *compiled_[id];
    std::vector<Placement> added = MoreTasks(j, c, j.placements, /*charged=*/true);
    if (added.empty()) continue;
    if (cs.reservation) {
      // Growth passes the head job's reservation as a backfilled job would: done before the
      // reservation's time at the grown pace, or on devices it will not need.
      std::vector<Placement> grown = j.placements;
      grown.insert(grown.end(), added.begin(), added.end());
      const Milli more = MilliOf(added);
      std::optional<Millis> left;
      if (const Millis runtime_left = RuntimeLeft(j); runtime_left >= 0) {
        const Millis done = Progress(j, std::max<Millis>(0, cs.now - j.last_start));
        const double speed = static_cast<double>(std::max<Milli>(1, SpeedOn(c, grown)));
        left =
            static_cast<Millis>(static_cast<double>(std::max<Millis>(0, runtime_left - done)) *
                                kMilliPerUnit / speed / MembersShare(grown.size(), j.task_count));
      }
      const BackfillVerdict pass = MayBackfill(*cs.reservation, c.mask, more, left, cs.now);
      if (pass.pass == BackfillPass::kRefused) {
        for (const Placement& p : added)
          cell_.Release(p);
        continue;
      }
      if (pass.pass == BackfillPass::kInExtra) cs.reservation->extra -= pass.on_mask;
    }
    Grow(j, std::move(added), cs.now);
  }
}

void Engine::ResizeRun(JobRecord& j, std::vector<Placement> tasks, TimeMs now) {
  const uint32_t id = j.id.value();
  // The run so far ends a stretch: what it did is kept (an elastic framework re-forms its
  // group from the state it holds), and the resized run's clock starts now.
  const TimeMs at = std::max(now, j.last_start);
  const Millis ran = at - j.last_start;
  j.run_ms += ran;
  j.attained_device_ms +=
      static_cast<double>(ran) * static_cast<double>(j.run_milli) / kMilliPerUnit;
  j.kept_ms += Progress(j, std::max<Millis>(0, at - j.progress_start()));
  // A resize reloads nothing: what is left of the run's reload carries on.
  j.run_overhead = std::max<Millis>(0, j.progress_start() - at);
  ledger_.End(id, now);
  TrackRunning(j, false);
  if (j.estimated_end != kNever) ends_.erase({j.estimated_end, id});
  const Milli milli = MilliOf(tasks);
  allocated_milli_ += milli - j.run_milli;
  j.run_milli = milli;
  j.placements = std::move(tasks);
  ++j.generation;
  j.last_start = at;
  j.idle_since.reset();
  j.idle_noticed = false;
  idle_.erase(id);
  j.estimated_end = EstimatedEnd(j, at, RunSpeed(j));
  if (j.estimated_end != kNever) ends_.insert({j.estimated_end, id});
  TrackRunning(j, true);
  ledger_.Begin(id, BudgetKeyOf(j, *compiled_[id]), ledger_.Rate(j.placements), now,
                j.estimated_end);
  if (j.placements.size() >= static_cast<size_t>(j.task_count))
    growing_.erase(id);
  else
    growing_.insert(id);
  OrderResize(j, now);
  Record(j);
}

void Engine::Grow(JobRecord& j, std::vector<Placement> added, TimeMs now) {
  const Compiled& c = *compiled_[j.id.value()];
  quotas_.Charge(j.job.tenant, PerModel(added));
  if (holds_.size()) holds_.Charge(added, c.holds, j.preemptible, 1);
  for (const Placement& p : added)
    AdjustFree(p.node, p, -1);
  std::vector<Placement> tasks = j.placements;
  tasks.insert(tasks.end(), added.begin(), added.end());
  ResizeRun(j, std::move(tasks), now);
  ++counters_.growths;
  LogDecision(DecisionKind::kGrow, j,
              "room: " + Members('+', added.size(), j.placements.size(), j.task_count), now,
              DistinctNodes(added));
}

void Engine::ShrinkVictim(JobRecord& v, const JobRecord& by, const std::string& cause, Millis grace,
                          std::vector<Placement> all, CycleState& cs) {
  // Its tasks after its minimum are released already (ReleaseFrom cut its placements).
  std::vector<Placement> kept = std::move(v.placements);
  const std::vector<Placement> gone(all.begin() + static_cast<std::ptrdiff_t>(kept.size()),
                                    all.end());
  v.placements = std::move(all);
  v.stop_grace = grace;  // for the stopped tasks
  ResizeRun(v, std::move(kept), cs.now);
  v.stop_grace = 0;
  cs.stopped.insert(v.id.value());  // it grows again in a later cycle, not into this one's room
  ++counters_.shrinks;
  LogDecision(DecisionKind::kShrink, v,
              "preempted-by:" + by.job.name + " " + cause + " " +
                  Members('-', gone.size(), v.placements.size(), v.task_count) +
                  (grace > 0 ? " grace " + FormatDuration(grace) : ""),
              cs.now, DistinctNodes(gone));
}

}  // namespace tessera
