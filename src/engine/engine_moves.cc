// Moving runs that are running: heterogeneity-aware migration to faster device models, the
// speed pool it reads, and the reclaim of devices that idle past an idle-reclaim rule.
#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_cycle.h"
#include "sched/constraints.h"
#include "sched/fleet_view.h"
#include "sched/migration.h"
#include "sched/policy_match.h"

namespace tessera {

// Heterogeneity-aware policies move running jobs onto faster device models that would
// otherwise stand idle: only when every pending job has had its turn and none is blocked (so
// no waiting job wanted those devices), only preemptible jobs (a move is a restart from the
// last checkpoint), and only moves that pay (sched/migration.h). Largest speed-up first.
void Engine::MigrateToFasterModels(CycleState& cs) {
  std::vector<MoveCandidate> candidates;
  for (uint32_t id : slow_) {  // running jobs at least 1.25x faster elsewhere
    const JobRecord& j = jobs_[id];
    const Compiled& c = *compiled_[id];
    if (!j.preemptible) continue;
    Milli now_speed = c.run_speed;
    Milli best = c.speed_of[c.by_speed.front()];
    candidates.push_back(
        {static_cast<double>(best) / static_cast<double>(now_speed), j.key, id, now_speed});
  }
  OrderMoveCandidates(candidates);
  for (const MoveCandidate& cand : candidates) {
    JobRecord& j = jobs_[cand.id];
    Compiled& c = *compiled_[cand.id];
    const Millis lost = LostSinceCheckpoint(j.progress_start(), cs.now, j.job.checkpoint_interval);
    for (uint16_t m : c.by_speed) {
      Milli faster = c.speed_of[m];
      if (!FastEnoughToMove(faster, cand.speed)) break;
      if (free_by_model_[m] < j.device_milli) continue;
      if (!MovePays(MoveSaving(j.job.runtime, j.kept_ms, cand.speed, faster), lost,
                    spec_.scheduler.restart_cost))
        continue;
      std::vector<Milli> held = PerModel(j.placements);
      quotas_.Refund(j.job.tenant, held);
      QuotaVerdict v = quotas_.Check(j.job.tenant, RequestPerModel(j, m));
      quotas_.Charge(j.job.tenant, held);
      if (!v.ok) continue;
      ++counters_.placements_tried;
      GangResult r = PlaceGang(cell_, PlacerFor(c), Variant(c, ModelMask{1} << m), &rng_);
      if (r.outcome != PlaceOutcome::kPlaced) continue;
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, " x%.2f",
                    static_cast<double>(faster) / static_cast<double>(cand.speed));
      std::string why = "faster-model:" + spec_.model(DeviceModelId(m)).name + ratio;
      OrderStop(j, cs.now);
      // The new placement is committed already; release only the old one.
      std::vector<Placement> fresh = std::move(r.placements);
      ReleaseResources(j);
      StopRun(j, cs.now, /*lose_since_checkpoint=*/true);
      ++j.restarts;
      ++counters_.migrations;
      LogDecision(DecisionKind::kMigrate, j, std::move(why), cs.now);
      r.placements = std::move(fresh);
      Start(j, std::move(r), "migrate", cs.now);
      break;
    }
  }
}

void Engine::TrackRunning(const JobRecord& j, bool running) {
  const uint32_t id = j.id.value();
  Compiled& c = *compiled_[id];
  if (c.spread_group) spread_.Track(*c.spread_group, j.placements, running ? 1 : -1);
  if (!running) {
    slow_.erase(id);
    running_by_tenant_.Erase(id);
    running_by_priority_.Erase(id);
    preemptible_by_priority_.Erase(id);
    return;
  }
  const uint32_t klass =
      priority_sets_.try_emplace(j.priority, static_cast<uint32_t>(priority_sets_.size()))
          .first->second;
  running_by_tenant_.Insert(j.job.tenant.value(), id);
  running_by_priority_.Insert(klass, id);
  if (j.preemptible) preemptible_by_priority_.Insert(klass, id);
  c.run_speed = RunSpeed(j);
  // An elastic gang is not moved: a move places its start again, not the tasks it grew.
  if (!c.elastic() && c.by_speed.size() >= 2 && c.run_speed > 0 &&
      FastEnoughToMove(c.speed_of[c.by_speed.front()], c.run_speed)) {
    slow_.insert(id);
  }
}

void Engine::JoinSpeedPool(const JobRecord& j, int sign) {
  Compiled& c = *compiled_[j.id.value()];
  if (c.in_speed_pool == (sign > 0) || c.by_speed.empty()) return;
  c.in_speed_pool = sign > 0;
  for (uint16_t m : c.by_speed) {
    speed_pool_[m].first += sign * c.speed_of[m];
    speed_pool_[m].second += sign;
  }
}

// Runs idle past their idle-reclaim rule's threshold: the owner is told (notify), the run is
// stopped and requeued behind the waiting work (preempt), or a service replica is removed,
// its autoscaler adding one back should the load need it (shrink; on other jobs, a notice).
void Engine::ReclaimIdle(TimeMs now) {
  std::vector<uint32_t> due;
  for (auto it = idle_.begin(); it != idle_.end();) {
    const JobRecord& j = jobs_[*it];
    if (!j.running() || !j.idle_since) {  // ended, or stopped and not yet idle again
      it = idle_.erase(it);
      continue;
    }
    const auto& r = std::get<IdleReclaimRule>(compiled_[*it]->idle->body);
    if (*j.idle_since + r.after <= now) due.push_back(*it);
    ++it;
  }
  for (uint32_t id : due) {
    idle_.erase(id);
    JobRecord& j = jobs_[id];
    const PolicyRule& rule = *compiled_[id]->idle;
    const auto& r = std::get<IdleReclaimRule>(rule.body);
    const std::string why = "idle-reclaim:" + rule.name + " utilization below " +
                            FormatMilli(r.utilization_below * 100) + "% for " +
                            FormatDuration(now - *j.idle_since) + " (from " +
                            FormatDuration(*j.idle_since - j.last_start) + " into the run)";
    const bool replica = j.job.labels.count(kServiceLabel) > 0;
    if (r.action == ReclaimAction::kPreempt) {
      j.arrival_order = now;  // behind the work already waiting
      Requeue(j, now, PendingReason::kIdle, DecisionKind::kRequeue, why);
    } else if (r.action == ReclaimAction::kShrink && replica) {
      Finish(j, now, JobState::kCancelled, DecisionKind::kCancel, why + " (shrink)");
    } else if (!j.idle_noticed) {
      j.idle_noticed = true;
      LogDecision(DecisionKind::kIdle, j, why, now);
    }
  }
}

}  // namespace tessera
