// What the engine's rooms share and nobody else sees: a job's compiled form with what the
// engine keeps beside it, and what one scheduling cycle knows. The engine's methods are kept
// in files by concern: engine.cc (jobs, events, runs), engine_placement.cc (the cycle's
// order, admission and placement), engine_preemption.cc (victims), engine_moves.cc (runs moved
// to faster models, idle devices reclaimed).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/engine.h"

namespace tessera {

// A job compiled once (sched/compile_job.h), with what the engine keeps beside it: its
// per-model variants (hetero placement) and its standing in the speed pool.
struct Engine::Compiled : CompiledJob {
  explicit Compiled(CompiledJob c) : CompiledJob(std::move(c)) {}
  uint32_t sig = 0;  // its signature's number (Engine::signature_ids_)
  // Its models that some cluster its constraints allow has: a guarantee of another model
  // cannot be given to it, by reclaim or otherwise.
  ModelMask reachable = 0;
  bool in_speed_pool = false;  // counted in the engine's speed_pool_
  Milli run_speed = 0;         // of the current run
  std::map<std::tuple<ModelMask, uint32_t, TaskShape::Guard, bool>, GangRequest>
      variants;  // by (models, scope, guard, whole)
  // An elastic gang is tried whole first (TryStart): while set, its placement asks for every
  // task (whole_gang, whole_global) instead of its start.
  bool whole = false;
  // What the quota is asked for on one model: every task while tried whole, else its start.
  Milli request_milli() const { return whole ? device_milli : start_milli; }
  // An elastic gang's growth shapes (Engine::GrowthShape), by (growth group, models,
  // cluster, guard).
  std::map<std::tuple<int32_t, ModelMask, uint32_t, TaskShape::Guard>, TaskShape> growth_shapes;
};

struct Engine::CycleState {
  TimeMs now = 0;
  bool blocked = false;  // a job could not start this cycle
  int32_t after_block = 0;
  // Pending jobs ask for more devices than are free: heterogeneity-aware placement then
  // gives each job the model where it is relatively best, not merely the fastest.
  bool contended = false;
  std::optional<Reservation> reservation;  // made at most once per cycle
  std::string reservation_detail;          // what a job it refuses is told; "" until then
  // Signatures refused this cycle (no room, or the quota), with the reason and detail: a job of
  // the same shapes, scope, gang rule, priority and tenant is refused too, since within a
  // cycle free capacity only shrinks and usage only grows (victims' release aside). Index 1
  // holds jobs whose elastic clusters are closed now (they see fewer clusters: their refusal
  // says nothing of a job that may burst), index 0 the others.
  struct Refusal {
    PendingReason reason = PendingReason::kNone;
    std::string detail;
    Millis left = -1;  // the refused job's runtime still to run; -1: no estimate
    uint32_t job = 0;  // the job refused (its explanation speaks for the others)
  };
  std::unordered_map<uint32_t, Refusal> refused[2];  // by signature number
  std::set<uint32_t> stopped;                        // jobs preempted in this cycle
  int32_t preemptions_failed = 0;                    // searches for victims that found none
  std::unordered_set<uint32_t> no_victims[2];        // as `refused`: preemption found no room
  // The earliest time a running job passed over as a victim only for its age (its class's
  // minRunTime) may be preempted.
  TimeMs protected_until = kNever;
  // The deferral of the last search for victims (its preemption waits for the victims'
  // checkpoints until then; kNever: not deferred), and the earliest time a job that searched in
  // vain this cycle searches again.
  TimeMs deferred_to = kNever;
  TimeMs search_again_at = kNever;

  // The refusal that applies to a job of this signature that has `left` to run: its own
  // kind's, or (while elastic clusters are closed to it) a bursting job's. A budget refusal
  // speaks only for jobs that would run at least as long (and so cost as much each day).
  // `left()` says the job's runtime still to run (asked of budget refusals only).
  template <typename Left>
  const Refusal* Refused(uint32_t signature, bool closed, Left&& left) const {
    for (int i = closed ? 1 : 0; i >= 0; --i) {
      auto it = refused[i].find(signature);
      if (it == refused[i].end()) continue;
      const Refusal& r = it->second;
      if (r.reason == PendingReason::kBudget) {
        const Millis mine = left();
        if (!(r.left < 0 ? mine < 0 : mine >= r.left)) return nullptr;
      }
      return &r;
    }
    return nullptr;
  }
  bool NoVictims(uint32_t signature, bool closed) const {
    return no_victims[closed ? 1 : 0].count(signature) ||
           (closed && no_victims[0].count(signature));
  }
};

}  // namespace tessera
