// The figures the simulator reports a distribution by, shared by a run's metrics and the
// comparison of two runs: values rounded to three decimals, nearest-rank percentiles.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

namespace tessera {

double Round3(double v);
// The nearest-rank percentile `p` (0..100) of sorted, non-empty `v`.
double NearestRank(const std::vector<double>& v, double p);
// {count, mean, p50, p95, p99}; the figures null when `v` is empty.
nlohmann::ordered_json Summary(std::vector<double> v);

}  // namespace tessera
