// Events that drive the engine, and the ordered queue that holds them. Events at equal times
// are handled in the order they were posted (a sequence number), so a run is deterministic.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"

namespace tessera {

enum class EventKind : uint8_t {
  kSubmit,         // job: a new job (the engine already holds its record)
  kFinish,         // job + generation: the run completed
  kFail,           // job + generation: the run failed on its own (not the node)
  kCancel,         // job: the user cancelled it
  kNodeLost,       // node: the node (and everything on it) is gone
  kNodeRecovered,  // node: back in service
  kTick,           // periodic re-evaluation (preemptive policies, time-based rules)
  kUtilization,    // job + generation + value: the run's device utilization changed
  kCordon,         // node: no new work on it; what runs there goes on
  kUncordon,       // node: takes new work again
  kDrain,          // node: cordoned, and its running jobs requeued (restart elsewhere)
  kPromote,        // job + generation: a requeued job waited long enough to be promoted (LAS)
};

struct Event {
  TimeMs time = 0;
  EventKind kind = EventKind::kTick;
  JobId job;
  uint32_t node = 0;        // CellState node index
  uint64_t generation = 0;  // the run an event of a job refers to
  Milli value = 0;          // kUtilization: busy fraction of the run's devices, in milli
  uint64_t seq = 0;         // set by the queue
};

// Thread-safety: none; owned by the engine's thread.
class EventQueue {
 public:
  void Push(Event e) {
    e.seq = next_seq_++;
    heap_.push(e);
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.top(); }
  Event Pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
};

// Where backends report what happened to the work they run.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void Post(const Event& e) = 0;
};

}  // namespace tessera
