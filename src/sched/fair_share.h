// Which tenant's queue a cycle serves next (DESIGN.md §3, step 2): among the heads of the
// tenants' queues, the highest priority class; among equal classes, the tenant whose dominant
// shares along its path (root first, compared in that order) are smallest — hierarchical DRF;
// among equal shares, the queue first in order. Within a tenant's queue the ordering policy's
// key decides (the engine keeps each queue sorted). Pure: the engine hands in the heads and
// the shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tessera {

struct QueueHead {
  int32_t neg_priority = 0;  // minus the head's priority class value
  uint32_t tenant = 0;
};

// The queue to serve among `queues`: `head(i)` is queue i's head (nullopt: empty), and
// `shares(tenant)` the tenant's path shares (a reference valid while the pick runs). None when
// every queue is empty.
template <typename Head, typename Shares>
std::optional<size_t> NextQueue(size_t queues, Head&& head, Shares&& shares) {
  std::optional<size_t> best;
  int32_t best_priority = 0;
  const std::vector<int64_t>* best_shares = nullptr;
  for (size_t i = 0; i < queues; ++i) {
    const std::optional<QueueHead> h = head(i);
    if (!h) continue;
    if (best) {
      if (h->neg_priority > best_priority) continue;
      if (h->neg_priority == best_priority) {
        const std::vector<int64_t>& mine = shares(h->tenant);
        if (!(mine < *best_shares)) continue;
        best = i;
        best_shares = &mine;
        continue;
      }
    }
    best = i;
    best_priority = h->neg_priority;
    best_shares = &shares(h->tenant);
  }
  return best;
}

}  // namespace tessera
