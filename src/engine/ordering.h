// Ordering policies: who goes first among pending jobs of one priority class and tenant, and
// whether waiting jobs may take the place of running ones of the same class.
//
// The engine orders pending work by priority class (higher first), then hierarchical DRF
// across tenants (the tenant whose path of dominant shares is smallest first), then by the
// policy's key (lower first), then by age and the submission sequence. Plug-ins are
// registered by name by the composition root (cli, server).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "engine/job_record.h"

namespace tessera {

class OrderingPolicy {
 public:
  virtual ~OrderingPolicy() = default;
  virtual std::string_view name() const = 0;
  // The policy's key for a job at `now` (lower first). Used for pending jobs, and for running
  // ones when the policy is preemptive (a running job whose key is above a waiting job's key
  // may be preempted for it).
  virtual int64_t Key(const JobRecord& job, TimeMs now) const = 0;
  virtual bool preemptive() const { return false; }
  // Whether a pending job's key stays the same while it waits (it may change while the job
  // runs). The engine then keeps its queues sorted instead of re-keying every job each cycle.
  virtual bool stable_keys() const { return true; }
  // For a preemptive policy: whether `waiting` should take the place of `running` (both of
  // the same priority class).
  virtual bool Displaces(const JobRecord& waiting, const JobRecord& running, TimeMs now) const {
    (void)waiting, (void)running, (void)now;
    return false;
  }
  // Whether placement tries the job's device models in the order of its own speed on them
  // (heterogeneity-aware), rather than letting the placement scorer choose among them.
  virtual bool speed_aware() const { return false; }
  // How often the engine re-evaluates when the policy is preemptive (0 = only on events).
  virtual Millis quantum() const { return 0; }
  // Starvation promotion: how long a job that ran before and went back to the queue may wait
  // before its service so far is forgiven (it counts as unserved, first in the policy's order);
  // 0: never.
  virtual Millis PromoteAfter(const JobRecord& job) const {
    (void)job;
    return 0;
  }
};

// Attained service of a job at `now`, in device-milliseconds (running time x devices).
double AttainedService(const JobRecord& job, TimeMs now);

using OrderingFactory = std::function<std::unique_ptr<OrderingPolicy>()>;

class OrderingRegistry {
 public:
  void Register(std::string name, OrderingFactory factory);
  Result<std::unique_ptr<OrderingPolicy>> Create(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, OrderingFactory> factories_;
};

// fifo, las, hetero.
void RegisterBuiltinOrderings(OrderingRegistry& registry);

}  // namespace tessera
