// The victim search's pure parts (DESIGN.md §3, step 5): whether a preemption rule lets a
// running job be preempted, whether its release helps at all, the order victims are tried in
// (cheapest first), and the shortest prefix of them whose release lets the preemptor start.
// The engine releases and restores the candidates on its cell; these decide.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "model/job.h"
#include "model/policy.h"
#include "model/spec.h"
#include "sched/cell_state.h"
#include "sched/task_shape.h"

namespace tessera {

struct VictimCandidate {
  int32_t priority = 0;  // its priority class's value
  double cost = 0;       // its stop's cost per device it frees (StopCostPerDevice)
  uint64_t key = 0;      // submission sequence
  uint32_t id = 0;
  // An elastic run shrunk to its first `shrink_to` tasks (its minimum): the tasks after them
  // stop, the run goes on and loses nothing. 0 = the run stops whole.
  int32_t shrink_to = 0;
};

// Cheapest first: the lowest priority class, then the least cost, then a shrink before a stop,
// then the youngest; at most `limit` are kept. An elastic run's shrink (nothing lost) therefore
// comes before its stop.
void RankVictims(std::vector<VictimCandidate>& candidates, size_t limit);

// A running job as a preemption rule sees it.
struct VictimView {
  const Job& job;
  int32_t priority = 0;
  bool preemptible = false;
  std::span<const Placement> placements;
};

// Whether the preemptor's first matching preemption rule (null: none) lets `victim` go: a
// non-preemptible victim only when the rule opens them (victimsPreemptibleOnly: false), and
// with a rule its victim classes, its highest victim priority class, and every node the victim
// runs on within its clusters and regions. Taking back borrowed capacity (`reclaimed`) ignores
// `allow: false` and preemptibility: borrowed capacity is lent preemptibly.
bool RuleAdmitsVictim(const Spec& spec, const CellState& cell, const PreemptionRule* rule,
                      const VictimView& victim, bool reclaimed);

// Whether releasing `placements` frees a device of a model in `mask` (mask 0, a CPU-only
// preemptor: whether it frees anything).
bool FreesModels(const CellState& cell, std::span<const Placement> placements, ModelMask mask);

// The shortest prefix [0, k) of `n` ranked candidates whose release lets the preemptor
// start: `places(k)` releases exactly the first k, tries a placement and says whether it found
// one (dropping the one it found before, if any). Fewer than `least` (>= 1) are known not to
// suffice (by a count of room, sched/room_bound.h), so `least` is tried first: most
// preemptions end there, having released only the victims they need. Else all n are tried,
// then bisection between. When it returns k, the last try was places(k) and it succeeded.
template <typename Places>
std::optional<size_t> ShortestSufficientPrefix(size_t n, size_t least, Places&& places) {
  least = std::max<size_t>(least, 1);
  if (least > n) return std::nullopt;
  if (places(least)) return least;
  if (least == n || !places(n)) return std::nullopt;
  size_t lo = least, hi = n;  // the first lo do not suffice, hi do
  bool last = true;
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    last = places(mid);
    (last ? hi : lo) = mid;
  }
  // The last probe (below hi) failed: back to the shortest prefix that placed it. Should the
  // placer disagree with itself on the same state, there is no prefix.
  if (!last && !places(hi)) return std::nullopt;
  return hi;
}

}  // namespace tessera
