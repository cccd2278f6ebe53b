// Curve post-processing of the FGD experiment, as its Python/pandas scripts do it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "sim/fgd_experiment.h"

namespace tessera {
namespace {

double PairwiseSum(const double* a, size_t n) {
  // numpy's pairwise_sum: 8 accumulators below 128 elements, halving above.
  if (n < 8) {
    double s = 0.;
    for (size_t i = 0; i < n; ++i)
      s += a[i];
    return s;
  }
  if (n <= 128) {
    double r[8];
    for (int k = 0; k < 8; ++k)
      r[k] = a[k];
    size_t i;
    for (i = 8; i < n - (n % 8); i += 8) {
      for (int k = 0; k < 8; ++k)
        r[k] += a[i + static_cast<size_t>(k)];
    }
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i)
      res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return PairwiseSum(a, n2) + PairwiseSum(a + n2, n - n2);
}

}  // namespace

double PyRound(double x, int digits) {
  if (!std::isfinite(x)) return x;
  if (digits == 0) return std::nearbyint(x);  // ties to even under the default mode
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return std::strtod(buf, nullptr);
}

double PandasMean(const std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  return PairwiseSum(v.data(), v.size()) / static_cast<double>(v.size());
}

std::vector<double> DiscreteCurve(const std::vector<double>& arrive_ratio,
                                  const std::vector<double>& value, bool round_mean) {
  std::vector<std::vector<double>> exact(kFgdCurvePoints);
  for (size_t i = 0; i < arrive_ratio.size(); ++i) {
    double x = arrive_ratio[i];
    if (x >= 0 && x < kFgdCurvePoints) exact[static_cast<size_t>(x)].push_back(value[i]);
  }
  std::vector<double> curve(kFgdCurvePoints);
  for (int x = 0; x < kFgdCurvePoints; ++x) {
    std::vector<double> pick = exact[static_cast<size_t>(x)];
    if (pick.empty()) {
      // Records in arrival order within x-1..x+1 (the original filters the record list).
      for (size_t i = 0; i < arrive_ratio.size(); ++i) {
        if (arrive_ratio[i] >= x - 1 && arrive_ratio[i] <= x + 1) pick.push_back(value[i]);
      }
    }
    double m = PandasMean(pick);
    curve[static_cast<size_t>(x)] = round_mean ? PyRound(m, 2) : m;
  }
  return curve;
}

}  // namespace tessera
