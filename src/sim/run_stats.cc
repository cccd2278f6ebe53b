#include "sim/run_stats.h"

#include <algorithm>
#include <cmath>

namespace tessera {

double Round3(double v) {
  return std::round(v * 1000.0) / 1000.0;
}

double NearestRank(const std::vector<double>& v, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

nlohmann::ordered_json Summary(std::vector<double> v) {
  nlohmann::ordered_json s = nlohmann::ordered_json::object();
  s["count"] = v.size();
  if (v.empty()) {
    for (const char* k : {"mean", "p50", "p95", "p99"})
      s[k] = nullptr;
    return s;
  }
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v)
    sum += x;
  s["mean"] = Round3(sum / static_cast<double>(v.size()));
  s["p50"] = Round3(NearestRank(v, 50));
  s["p95"] = Round3(NearestRank(v, 95));
  s["p99"] = Round3(NearestRank(v, 99));
  return s;
}

}  // namespace tessera
