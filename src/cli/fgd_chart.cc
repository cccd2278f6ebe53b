#include "cli/fgd_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/chart_js.h"
#include "config/csv.h"

namespace tessera::cli {
namespace {

const char* const kCurves[] = {"allo", "frag", "frag_ratio"};

double Median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

nlohmann::json Number(double v) {
  return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(std::round(v * 1000) / 1000);
}

std::vector<double>* CurveOf(FgdRun& r, const std::string& key) {
  if (key == "allo") return &r.allo;
  if (key == "frag") return &r.frag;
  return &r.frag_ratio;
}

// {"policy": {"median": [...], "lo": [...], "hi": [...]}} for one curve, over the seeds.
nlohmann::json Series(const std::vector<std::string>& policies, const std::vector<FgdRun>& runs,
                      const std::string& key) {
  nlohmann::json out = nlohmann::json::object();
  for (const std::string& p : policies) {
    nlohmann::json median = nlohmann::json::array(), lo = nlohmann::json::array(),
                   hi = nlohmann::json::array();
    for (int x = 0; x < kFgdCurvePoints; ++x) {
      std::vector<double> at;
      for (const FgdRun& r : runs) {
        if (r.policy != p) continue;
        double v = (*CurveOf(const_cast<FgdRun&>(r), key))[static_cast<size_t>(x)];
        if (!std::isnan(v)) at.push_back(v);
      }
      median.push_back(Number(Median(at)));
      lo.push_back(at.empty() ? nlohmann::json(nullptr)
                              : Number(*std::min_element(at.begin(), at.end())));
      hi.push_back(at.empty() ? nlohmann::json(nullptr)
                              : Number(*std::max_element(at.begin(), at.end())));
    }
    out[p] = {{"median", median}, {"lo", lo}, {"hi", hi}};
  }
  return out;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

Result<PublishedCurves> ReadPublishedCurves(const std::string& dir, const std::string& workload,
                                            const std::string& policy) {
  PublishedCurves out;
  out.policy = policy;
  for (const char* key : kCurves) {
    std::string file =
        (std::filesystem::path(dir) / ("analysis_" + std::string(key) + "_discrete.csv")).string();
    if (!std::filesystem::exists(file)) return NotFound(file + ": no published results there");
    auto table = CsvTable::ReadFile(file);
    if (!table.ok()) return table.status();
    TESSERA_RETURN_IF_ERROR(table->RequireColumns({"workload", "sc_policy", "0", "130"}));
    size_t first = *table->Column("0");
    std::vector<std::vector<double>> seeds;
    for (size_t i = 0; i < table->size(); ++i) {
      CsvRow r = table->row(i);
      if (*r.Text("workload") != workload || *r.Text("sc_policy") != policy) continue;
      std::vector<double> curve;
      for (int x = 0; x < kFgdCurvePoints; ++x) {
        auto text = r.Text(first + static_cast<size_t>(x));
        if (!text.ok()) return text.status();
        std::string s(*text);
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        if (s.empty() || end != s.c_str() + s.size()) {
          return r.ErrorAt(first + static_cast<size_t>(x), "expected a number, got \"" + s + "\"");
        }
        curve.push_back(v);
      }
      seeds.push_back(std::move(curve));
    }
    if (seeds.empty()) return NotFound(file + ": no " + policy + " results for " + workload);
    out.seeds = seeds.size();
    std::vector<double>& median = out.median[key];
    for (int x = 0; x < kFgdCurvePoints; ++x) {
      std::vector<double> at;
      for (const auto& s : seeds)
        at.push_back(s[static_cast<size_t>(x)]);
      median.push_back(Median(at));
    }
  }
  return out;
}

Status WriteFgdChart(const std::string& path, const FgdChartInput& in) {
  auto chart_js = ReadChartJs();
  if (!chart_js.ok()) return chart_js.status();
  nlohmann::json data = {{"workload", in.workload}};
  for (const char* key : kCurves) {
    nlohmann::json entry = {{"policies", Series(in.policies, *in.runs, key)}};
    if (in.published) {
      nlohmann::json published = nlohmann::json::array();
      for (double v : in.published->median.at(key))
        published.push_back(Number(v));
      entry["published"] = published;
    }
    data[key] = entry;
  }
  std::string overlay =
      in.published ? fmt::format("Dashed: FGD's published median ({}, {} seeds) for this workload.",
                                 in.published->policy, in.published->seeds)
                   : "No published curve overlaid: " + in.published_note + ".";
  std::string caption = fmt::format(
      "Workload {}, tune {} (arrived demand up to {:.0f}% of GPU capacity), seeds {} ({} "
      "per policy). Lines: the median over the seeds; shaded band: from the lowest to the "
      "highest seed. {}",
      in.workload, in.tune, in.tune * 100, in.seeds, in.seed_count, overlay);
  std::ofstream out(path, std::ios::binary);
  out << "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>FGD experiment: "
      << Escape(in.workload) << "</title>\n<style>body{font-family:sans-serif;margin:2em}"
      << ".row{display:flex;flex-wrap:wrap;gap:2em}"
      << ".row div{width:600px;height:380px;margin-bottom:2em}</style>\n"
      // Script errors are shown on the page (and so in a headless browser's DOM).
      << "<script>const pageErrors = [];\n"
      << "window.addEventListener('error', (e) => pageErrors.push(e.message));\n"
      << "window.addEventListener('load', () => {\n"
      << "  document.getElementById('errors').textContent = pageErrors.join('\\n'); });\n"
      << "</script>\n"
      << "<script>" << *chart_js << "</script></head><body>\n"
      << "<h1>FGD experiment: " << Escape(in.workload) << "</h1>\n<pre id=\"errors\"></pre>\n"
      << "<p id=\"caption\">" << Escape(caption) << "</p>\n";
  for (const char* key : kCurves) {
    out << "<div class=\"row\"><div><canvas id=\"" << key << "\"></canvas></div>"
        << "<div><canvas id=\"" << key << "_zoom\"></canvas></div></div>\n";
  }
  out << "<script>\nconst data = " << ScriptSafe(data.dump()) << ";\n"
      << R"JS(const titles = {allo: 'GPU allocation ratio', frag: 'Fragmented GPUs',
  frag_ratio: 'Fragmentation rate'};
const yTitles = {allo: 'allocated GPUs (% of all GPUs)', frag: 'fragmented GPUs (% of all GPUs)',
  frag_ratio: 'fragmented GPUs (% of idle GPUs)'};
const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                 '#7f7f7f', '#bcbd22', '#17becf'];
function draw(id, key, from) {
  const xs = Array.from({length: 131 - from}, (_, i) => i + from);
  const cut = (ys) => ys.slice(from);
  const datasets = [];
  Object.entries(data[key].policies).forEach(([policy, s], i) => {
    const c = palette[i % palette.length];
    datasets.push({label: policy, data: cut(s.median), borderColor: c, backgroundColor: c,
                   pointRadius: 0, borderWidth: 2, spanGaps: true});
    datasets.push({label: policy + ' lowest seed', band: true, data: cut(s.lo), borderWidth: 0,
                   pointRadius: 0, spanGaps: true, fill: false});
    datasets.push({label: policy + ' highest seed', band: true, data: cut(s.hi), borderWidth: 0,
                   pointRadius: 0, spanGaps: true, fill: '-1', backgroundColor: c + '33'});
  });
  if (data[key].published) {
    datasets.push({label: 'FGD (published)', data: cut(data[key].published), borderColor: '#000',
                   backgroundColor: '#000', borderDash: [6, 4], pointRadius: 0, borderWidth: 1.5,
                   spanGaps: true});
  }
  const title = titles[key] + (from > 0 ? ' (zoom: ' + from + '-130% arrived)' : '');
  new Chart(document.getElementById(id), {type: 'line', data: {labels: xs, datasets},
    options: {animation: false, maintainAspectRatio: false,
      plugins: {title: {display: true, text: title},
                legend: {labels: {filter: (item, d) => !d.datasets[item.datasetIndex].band}}},
      scales: {x: {title: {display: true, text: 'arrived GPU demand (% of GPU capacity)'}},
               y: {beginAtZero: from === 0, title: {display: true, text: yTitles[key]}}}}});
}
for (const key of ['allo', 'frag', 'frag_ratio']) {
  draw(key, key, 0);
  draw(key + '_zoom', key, 85);
}
</script></body></html>
)JS";
  if (!out) return Unavailable("cannot write " + path);
  return Status::Ok();
}

}  // namespace tessera::cli
