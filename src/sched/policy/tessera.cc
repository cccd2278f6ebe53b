// EXPERIMENTAL harness (research) — env knobs, to be replaced.
#include <cmath>
#include <cstdlib>

#include "sched/policy/builtin.h"

namespace tessera::policy {
namespace {

double Env(const char* n, double d) {
  const char* v = std::getenv(n);
  return v ? std::atof(v) : d;
}
struct P {
  double A = Env("TA", 1);           // fgd int weight
  double T = Env("TT", 1000);        // sigmoid temperature
  double B = Env("TB", 0);           // exact -growth weight (GPUs)
  double C = Env("TC", 1e-4);        // device fit weight (shares)
  double D = Env("TD", 0.1);         // node fit weight
  int devsel = (int)Env("TDEV", 0);  // 0 = by score, 1 = best fit device first
  double L = Env("TL", 0);       // remnant value weight
  double theta = Env("TTH", 0.02);  // share-type availability threshold
};
const P& Params() {
  static P p;
  return p;
}

class TesseraScorer final : public Scorer {
 public:
  explicit TesseraScorer(const TargetWorkload* w) : workload_(w) {
    std::vector<double> mass(1001, 0.0);
    double total = 0;
    if (w != nullptr) {
      for (const TypicalTask& t : w->tasks()) {
        total += t.weight;
        if (t.count == 1 && t.milli > 0 && t.milli < 1000) mass[t.milli] += t.weight;
      }
    }
    std::vector<int> sizes;
    for (int m = 1; m < 1000; ++m)
      if (total > 0 && mass[m] / total >= Params().theta) sizes.push_back(m);
    v_.assign(1001, 0.0);
    for (int r = 1; r < 1000; ++r) {
      double best = r;
      for (int m : sizes)
        if (m <= r) best = std::min(best, v_[r - m]);
      v_[r] = best;
    }
    v_[1000] = 0;
  }
  std::string_view name() const override { return "tessera"; }

  double Int(double growth) const {
    const P& p = Params();
    return static_cast<double>(static_cast<int64_t>(1.0 / (1.0 + std::exp(growth / p.T)) * 100.0));
  }

  double Score(const CellState& cell, uint32_t node, const TaskShape& shape,
               std::vector<DeviceUse>* pick) const override {
    const P& p = Params();
    pick->clear();
    if (scale_.max_cpu <= 1) scale_ = ComputeCellScale(cell);
    const NodeState& n = cell.node(node);
    uint16_t free[64];
    size_t count = FreeShares(cell, node, free);
    std::span<const uint16_t> shares(free, count);
    int64_t gpu_left = 0;
    for (size_t k = 0; k < count; ++k)
      gpu_left += free[k];
    double left = (static_cast<double>(n.cpu_free - shape.cpu_for_score) /
                       static_cast<double>(scale_.max_cpu) +
                   static_cast<double>(gpu_left - shape.total_milli()) /
                       static_cast<double>(scale_.max_device_milli)) /
                  2;
    double node_fit = p.D * (1 - left);
    if (workload_ == nullptr || workload_->empty()) {
      PickBestDevices(cell, node, shape, pick);
      return node_fit;
    }
    double before = workload_->Fragmentation(n.cpu_free, shares, n.models);
    Milli cpu_after = n.cpu_free - shape.cpu_for_score;
    if (shape.fractional()) {
      auto devs = cell.devices(node);
      double best = -INFINITY;
      for (size_t k = 0; k < count; ++k) {
        if (free[k] < shape.milli || !DeviceEligible(cell, devs[k], shape)) continue;
        uint16_t saved = free[k];
        free[k] = static_cast<uint16_t>(saved - shape.milli);
        double growth = workload_->Fragmentation(cpu_after, shares, n.models) - before;
        free[k] = saved;
        double device_fit = 1 - static_cast<double>(saved - shape.milli) / 1000;
        double dv = v_[saved - shape.milli] - v_[saved];
        double s = p.A * Int(growth) - p.B * growth / 1000 + p.C * device_fit - p.L * dv / 1000;
        if (s > best) {
          best = s;
          pick->assign({{static_cast<uint16_t>(k), shape.milli}});
        }
      }
      return best + node_fit;
    }
    if (!shape.cpu_only()) {
      PickWholeDevices(cell, node, shape, pick);
      for (const DeviceUse& u : *pick)
        free[u.index] = 0;
    }
    double growth = workload_->Fragmentation(cpu_after, shares, n.models) - before;
    return p.A * Int(growth) - p.B * growth / 1000 + node_fit;
  }

 private:
  const TargetWorkload* workload_;
  mutable CellScale scale_{};
  std::vector<double> v_;
};

}  // namespace

std::unique_ptr<Scorer> MakeTessera(const TargetWorkload* w) {
  return std::make_unique<TesseraScorer>(w);
}

}  // namespace tessera::policy
