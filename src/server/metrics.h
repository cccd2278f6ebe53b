// Prometheus metrics of the daemon (/metrics, text exposition format 0.0.4): the API's
// requests and latency per route, the scheduling cycle's latency, decisions by kind, and the
// gauges the daemon computes at scrape time (queue depth per class and tenant, jobs by state,
// allocation per model and cluster). Debian ships no Prometheus client library for C++; the
// format is a few lines of text.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "common/mutex.h"

namespace tessera {

// A cumulative histogram with fixed upper bounds (seconds).
class Histogram {
 public:
  static const std::vector<double>& LatencyBounds();
  void Observe(double seconds);
  // Appends the _bucket, _sum and _count lines of `name` with `labels` ("k=\"v\",...").
  void Write(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<uint64_t> buckets_ = std::vector<uint64_t>(LatencyBounds().size(), 0);
  uint64_t count_ = 0;
  double sum_ = 0;
};

// A metric family's samples, written by the daemon at scrape time.
struct Gauge {
  std::string name, help;
  std::vector<std::pair<std::string, double>> samples;  // labels, value
};

class Metrics {
 public:
  void ObserveRequest(const std::string& route, const std::string& method, int status,
                      double seconds);
  // A scheduling pass: its wall time, and the time the engine's thread was on a core during it
  // (the rest it waited for one).
  void ObserveCycle(double seconds, double cpu_seconds);
  void CountDecision(const std::string& kind);
  // A job with a deadline ended: it succeeded by it (met), or after it or failed (missed).
  void CountDeadline(bool met);
  // The whole exposition: the counters and histograms kept here, then `gauges`.
  std::string Render(const std::vector<Gauge>& gauges) const;

 private:
  // The API's workers and the engine's thread do not share a lock: the engine's cycle never
  // waits behind a request's bookkeeping.
  mutable Mutex mu_;         // requests
  mutable Mutex engine_mu_;  // cycles and decisions
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_ GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, Histogram> request_seconds_ GUARDED_BY(mu_);
  Histogram cycle_seconds_ GUARDED_BY(engine_mu_);
  uint64_t cycles_ GUARDED_BY(engine_mu_) = 0;
  double cycle_cpu_seconds_ GUARDED_BY(engine_mu_) = 0;
  std::map<std::string, uint64_t> decisions_ GUARDED_BY(engine_mu_);
  uint64_t deadlines_met_ GUARDED_BY(engine_mu_) = 0;
  uint64_t deadlines_missed_ GUARDED_BY(engine_mu_) = 0;
};

// A label value escaped for the exposition format.
std::string LabelValue(const std::string& v);

}  // namespace tessera
