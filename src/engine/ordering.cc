#include "engine/ordering.h"

#include <algorithm>

namespace tessera {

double AttainedService(const JobRecord& job, TimeMs now) {
  double a = job.attained_device_ms - job.forgiven_device_ms;
  if (job.running() && now > job.last_start) {
    a += static_cast<double>(now - job.last_start) * static_cast<double>(job.run_milli) /
         kMilliPerUnit;
  }
  return a;
}

void OrderingRegistry::Register(std::string name, OrderingFactory factory) {
  factories_[std::move(name)] = std::move(factory);
}

Result<std::unique_ptr<OrderingPolicy>> OrderingRegistry::Create(std::string_view name) const {
  auto it = factories_.find(std::string(name));
  if (it == factories_.end()) {
    std::string known;
    for (const auto& [n, f] : factories_)
      known += (known.empty() ? "" : ", ") + n;
    return InvalidArgument("unknown ordering policy '" + std::string(name) + "' (known: " + known +
                           ")");
  }
  return it->second();
}

std::vector<std::string> OrderingRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [n, f] : factories_)
    names.push_back(n);
  return names;
}

namespace {

// First come, first served: the key is the submission time. Never preempts for order's sake
// (priority classes and quota reclaim still preempt).
class FifoOrder final : public OrderingPolicy {
 public:
  std::string_view name() const override { return "fifo"; }
  int64_t Key(const JobRecord& job, TimeMs) const override { return job.arrival_order; }
};

// Least attained service, discretised as in Tiresias (NSDI'19): jobs fall into queues by the
// device-time they have received (thresholds below), FIFO within a queue; a waiting job in a
// lower queue preempts a running job in a higher one at the next quantum. Discretising keeps
// jobs of similar service from preempting each other back and forth; short jobs finish in
// the first queue without waiting behind long ones, which is where LAS wins on mean JCT when
// job sizes are unknown. Assumes jobs checkpoint (a preempted job loses its work since its
// last checkpoint) and that restarts are cheap against the quantum.
class LasOrder : public OrderingPolicy {
 public:
  std::string_view name() const override { return "las"; }
  int64_t Key(const JobRecord& job, TimeMs now) const override {
    // Queue first, then arrival within the queue.
    return Queue(job, now) * (int64_t{1} << 50) + job.submitted;
  }
  bool preemptive() const override { return true; }
  bool Displaces(const JobRecord& waiting, const JobRecord& running, TimeMs now) const override {
    return Queue(waiting, now) < Queue(running, now);
  }
  Millis quantum() const override { return 360 * 1000; }
  // Tiresias's starvation guard (2D-LAS): a job requeued after running waits at most
  // kPromoteKnob times the time it ran so far (at least a quantum) before it is promoted to the
  // first queue; otherwise a long job preempted by a stream of short ones could wait for ever.
  Millis PromoteAfter(const JobRecord& job) const override {
    return std::max(quantum(), kPromoteKnob * job.run_ms);
  }
  // Measured on Philly's five large virtual clusters (docs/queueing.md#preemption): 16 and 32
  // made mean JCT worse on some by 6-24% and preemptions 30-60% more; 64 made it better on four
  // (2-12%) with 13% more preemptions. Promoting by the last run rather than all of them was
  // worse still.
  static constexpr Millis kPromoteKnob = 64;

  static int64_t Queue(const JobRecord& job, TimeMs now) {
    double attained = AttainedService(job, now);
    int64_t queue = 0;
    for (double threshold : kThresholds) {
      if (attained < threshold) break;
      ++queue;
    }
    return queue;
  }

 private:
  // Device-hours of service: 1 device-hour, 10 device-hours.
  static constexpr double kThresholds[] = {3600.0 * 1000, 36000.0 * 1000};
};

// Heterogeneity-aware LAS (after Gavel, OSDI'20): the same queues, but each job is placed on
// the device model where it runs fastest among those with room, trying them in the order of
// its own per-model speed; so a job that gains 9x from a V100 gets one before a job that
// gains 2x when both are free. The agnostic policies leave the model to the packing scorer.
class HeteroOrder final : public LasOrder {
 public:
  std::string_view name() const override { return "hetero"; }
  bool speed_aware() const override { return true; }
};

}  // namespace

void RegisterBuiltinOrderings(OrderingRegistry& registry) {
  registry.Register("fifo", [] { return std::make_unique<FifoOrder>(); });
  registry.Register("las", [] { return std::make_unique<LasOrder>(); });
  registry.Register("hetero", [] { return std::make_unique<HeteroOrder>(); });
}

}  // namespace tessera
