// Node failures for the simulator: from a schedule (CSV `time_s,node,down_s`, one failure per
// row, node by name) or drawn from MTBF/MTTR per device model: a node fails at the rate of the
// sum of its devices' failure rates (1/MTBF each) and stays down for an exponential time with
// mean MTTR. A failed node loses every task on it; gangs on it restart whole from their last
// checkpoint.
#pragma once

#include <map>
#include <queue>
#include <string>
#include <vector>

#include "common/rng.h"
#include "common/status.h"
#include "model/spec.h"
#include "sched/cell_state.h"

namespace tessera {

struct NodeOutage {
  TimeMs at = 0;
  uint32_t node = 0;  // CellState index
  Millis down = 0;
};

struct FailureModel {
  std::map<DeviceModelId, Millis> mtbf;  // per device; models not listed never fail
  Millis mttr = 4 * 3600 * 1000LL;
  std::vector<NodeOutage> schedule;
  bool empty() const { return mtbf.empty() && schedule.empty(); }
};

// Reads a schedule CSV against the cell's node names.
Result<std::vector<NodeOutage>> ParseOutageSchedule(const std::string& name, std::string_view text,
                                                    const CellState& cell);
// "V100=30d,K80=20d" against the catalog.
Result<std::map<DeviceModelId, Millis>> ParseMtbf(const Spec& spec, std::string_view text);

// Yields outages in time order: the schedule merged with random draws (one stream per node,
// all from one seeded generator, drawn lazily so the horizon need not be known).
class FailureInjector {
 public:
  FailureInjector(const FailureModel& model, const CellState& cell, uint64_t seed);
  bool empty() const { return heap_.empty(); }
  TimeMs next_time() const { return heap_.top().at; }
  NodeOutage Pop();

 private:
  struct Later {
    bool operator()(const NodeOutage& a, const NodeOutage& b) const {
      return a.at != b.at ? a.at > b.at : a.node > b.node;
    }
  };
  void Draw(uint32_t node, TimeMs after);
  std::priority_queue<NodeOutage, std::vector<NodeOutage>, Later> heap_;
  std::vector<double> rate_;  // failures per ms, by node
  const FailureModel& model_;
  SeededRng rng_;
};

}  // namespace tessera
