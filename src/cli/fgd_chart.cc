#include "cli/fgd_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tessera::cli {
namespace {

double Median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// {"policy": [median at 0, ..., median at 130]} for one curve.
nlohmann::json Medians(const std::vector<std::string>& policies, const std::vector<FgdRun>& runs,
                       std::vector<double> FgdRun::*curve) {
  nlohmann::json out = nlohmann::json::object();
  for (const std::string& p : policies) {
    nlohmann::json series = nlohmann::json::array();
    for (int x = 0; x < kFgdCurvePoints; ++x) {
      std::vector<double> at;
      for (const FgdRun& r : runs) {
        if (r.policy == p) at.push_back((r.*curve)[static_cast<size_t>(x)]);
      }
      double m = Median(at);
      series.push_back(std::isnan(m) ? nlohmann::json(nullptr) : nlohmann::json(m));
    }
    out[p] = series;
  }
  return out;
}

}  // namespace

std::string ChartJsPath() {
  const char* env = std::getenv("TESSERA_CHARTJS");
  return env && *env ? env : "/usr/share/javascript/chart.js/chart.min.js";
}

Status WriteFgdChart(const std::string& path, const std::string& workload,
                     const std::vector<std::string>& policies, const std::vector<FgdRun>& runs) {
  std::ifstream lib(ChartJsPath(), std::ios::binary);
  if (!lib) {
    return Unavailable("cannot read Chart.js at " + ChartJsPath() +
                       " (Debian package libjs-chart.js; scripts/bootstrap installs it)");
  }
  std::ostringstream js;
  js << lib.rdbuf();
  nlohmann::json data = {{"workload", workload},
                         {"allo", Medians(policies, runs, &FgdRun::allo)},
                         {"frag", Medians(policies, runs, &FgdRun::frag)},
                         {"frag_ratio", Medians(policies, runs, &FgdRun::frag_ratio)}};
  std::ofstream out(path, std::ios::binary);
  out << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>FGD experiment: " << workload
      << "</title>\n<style>body{font-family:sans-serif;margin:2em}"
      << "canvas{max-width:900px;max-height:420px;margin-bottom:2em}</style>\n"
      << "<script>" << js.str() << "</script></head><body>\n"
      << "<h1>FGD experiment: " << workload << "</h1>\n"
      << "<p>Median over seeds of each policy, against arrived GPU demand (% of capacity).</p>\n"
      << "<canvas id=\"allo\"></canvas><canvas id=\"frag\"></canvas>"
      << "<canvas id=\"frag_ratio\"></canvas>\n<script>\nconst data = " << data.dump() << ";\n"
      << R"JS(const titles = {allo: 'GPU allocation ratio (%)', frag: 'Fragmented GPUs (% of all GPUs)',
  frag_ratio: 'Fragmentation rate (% of idle GPUs)'};
const xs = Array.from({length: 131}, (_, i) => i);
const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                 '#7f7f7f', '#bcbd22', '#17becf'];
for (const key of ['allo', 'frag', 'frag_ratio']) {
  const datasets = Object.entries(data[key]).map(([policy, ys], i) =>
      ({label: policy, data: ys, pointRadius: 0, borderWidth: 2, spanGaps: true,
        borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length]}));
  new Chart(document.getElementById(key), {type: 'line', data: {labels: xs, datasets},
    options: {animation: false, plugins: {title: {display: true, text: titles[key]}},
      scales: {x: {title: {display: true, text: 'arrived GPU demand (% of capacity)'}}}}});
}
</script></body></html>
)JS";
  if (!out) return Unavailable("cannot write " + path);
  return Status::Ok();
}

}  // namespace tessera::cli
