#include "server/metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace tessera {

const std::vector<double>& Histogram::LatencyBounds() {
  static const std::vector<double> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                              0.05,   0.1,   0.25,   0.5,   1,    2.5};
  return kBounds;
}

void Histogram::Observe(double seconds) {
  const auto& bounds = LatencyBounds();
  auto it = std::lower_bound(bounds.begin(), bounds.end(), seconds);
  if (it != bounds.end()) ++buckets_[static_cast<size_t>(it - bounds.begin())];
  ++count_;
  sum_ += seconds;
}

void Histogram::Write(std::string& out, const std::string& name, const std::string& labels) const {
  const auto& bounds = LatencyBounds();
  std::string sep = labels.empty() ? "" : ",";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += buckets_[i];
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, bounds[i], cumulative);
  }
  out += fmt::format("{}_bucket{{{}{}le=\"+Inf\"}} {}\n", name, labels, sep, count_);
  std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, braces, sum_, name, braces, count_);
}

std::string LabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Metrics::ObserveRequest(const std::string& route, const std::string& method, int status,
                             double seconds) {
  MutexLock lock(mu_);
  ++requests_[{route, method, status}];
  request_seconds_[{route, method}].Observe(seconds);
}

void Metrics::ObserveCycle(double seconds, double cpu_seconds) {
  MutexLock lock(engine_mu_);
  ++cycles_;
  cycle_seconds_.Observe(seconds);
  cycle_cpu_seconds_ += cpu_seconds;
}

void Metrics::CountDecision(const std::string& kind) {
  MutexLock lock(engine_mu_);
  ++decisions_[kind];
}

void Metrics::CountDeadline(bool met) {
  MutexLock lock(engine_mu_);
  ++(met ? deadlines_met_ : deadlines_missed_);
}

std::string Metrics::Render(const std::vector<Gauge>& gauges) const {
  std::string out;
  {
    MutexLock lock(mu_);
    out += "# HELP tessera_http_requests_total API requests by route, method and status.\n";
    out += "# TYPE tessera_http_requests_total counter\n";
    for (const auto& [key, n] : requests_) {
      const auto& [route, method, status] = key;
      out += fmt::format(
          "tessera_http_requests_total{{route=\"{}\",method=\"{}\",status=\"{}\"}} {}\n",
          LabelValue(route), method, status, n);
    }
    out += "# HELP tessera_http_request_duration_seconds API latency by route and method.\n";
    out += "# TYPE tessera_http_request_duration_seconds histogram\n";
    for (const auto& [key, h] : request_seconds_) {
      h.Write(out, "tessera_http_request_duration_seconds",
              fmt::format("route=\"{}\",method=\"{}\"", LabelValue(key.first), key.second));
    }
  }
  {
    MutexLock lock(engine_mu_);
    out += "# HELP tessera_scheduling_cycle_seconds Time the engine took per scheduling pass.\n";
    out += "# TYPE tessera_scheduling_cycle_seconds histogram\n";
    cycle_seconds_.Write(out, "tessera_scheduling_cycle_seconds", "");
    out +=
        "# HELP tessera_scheduling_cycle_cpu_seconds_total Time the engine's thread was on a core "
        "during its scheduling passes (the rest of their time it waited for one).\n";
    out += "# TYPE tessera_scheduling_cycle_cpu_seconds_total counter\n";
    out += fmt::format("tessera_scheduling_cycle_cpu_seconds_total {}\n", cycle_cpu_seconds_);
    out += "# HELP tessera_decisions_total Scheduling decisions by kind (start, preempt, ...).\n";
    out += "# TYPE tessera_decisions_total counter\n";
    for (const auto& [kind, n] : decisions_)
      out += fmt::format("tessera_decisions_total{{kind=\"{}\"}} {}\n", LabelValue(kind), n);
    out +=
        "# HELP tessera_job_deadlines_total Jobs with a deadline that ended, by whether they "
        "succeeded by it (met) or not (missed: late, or failed).\n";
    out += "# TYPE tessera_job_deadlines_total counter\n";
    out += fmt::format("tessera_job_deadlines_total{{outcome=\"met\"}} {}\n", deadlines_met_);
    out += fmt::format("tessera_job_deadlines_total{{outcome=\"missed\"}} {}\n", deadlines_missed_);
  }
  for (const Gauge& g : gauges) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", g.name, g.help, g.name);
    for (const auto& [labels, v] : g.samples) {
      out += labels.empty() ? fmt::format("{} {}\n", g.name, v)
                            : fmt::format("{}{{{}}} {}\n", g.name, labels, v);
    }
  }
  return out;
}

}  // namespace tessera
