#include "cli/sim_report.h"

#include <cstdlib>
#include <sstream>

#include "cli/chart_js.h"

namespace tessera::cli {

using json = nlohmann::ordered_json;

namespace {

// The time series as columns: {"time_s": [...], "alloc_ratio": [...], ...}.
json Columns(const std::string& csv) {
  json cols = json::object();
  std::istringstream in(csv);
  std::string header, line;
  std::getline(in, header);
  std::vector<std::string> names;
  std::stringstream hs(header);
  for (std::string name; std::getline(hs, name, ',');) {
    names.push_back(name);
    cols[name] = json::array();
  }
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    size_t i = 0;
    for (std::string v; std::getline(ls, v, ',') && i < names.size(); ++i)
      cols[names[i]].push_back(std::strtod(v.c_str(), nullptr));
  }
  return cols;
}

const char* kPage = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>@TITLE@</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px} h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}
.chart{position:relative;width:100%;max-width:1100px;height:340px}
</style>
<script>
window.onerror = (message, source, line) => {
  document.getElementById("errors").textContent += message + " (line " + line + ")\n";
};
</script>
<script>@CHARTJS@</script></head><body>
<pre id="errors"></pre>
<h1>@TITLE@</h1>
<p>Each policy replayed the same workload on the same fleet through Tessera's engine; times
are simulated seconds. Metrics are defined in docs/simulation.md.</p>
<h2>Summary</h2><table id="summary"></table>
<h2>Job completion time</h2><div class="chart"><canvas id="jct"></canvas></div>
<div class="chart"><canvas id="jct_cdf"></canvas></div>
<h2>Queueing time</h2><div class="chart"><canvas id="queue"></canvas></div>
<div class="chart"><canvas id="queue_cdf"></canvas></div>
<h2>Mean JCT per class</h2><div class="chart"><canvas id="classes"></canvas></div>
<h2>GPU allocation over time</h2><div class="chart"><canvas id="alloc"></canvas></div>
<h2>Pending jobs over time</h2><div class="chart"><canvas id="pending"></canvas></div>
<h2>Per tenant</h2><table id="tenants"></table>
<script>
const runs = @DATA@;
const names = runs.map(r => r.policy);
const fmt = v => v == null ? "-" : (typeof v === "number" ? v.toLocaleString("en") : v);
const stat = (r, k, s) => (r.metrics[k] && r.metrics[k][s] != null) ? r.metrics[k][s] : null;
const rows = [["policy","completed","mean JCT s","p95 JCT s","mean queue s","GPU alloc","makespan s","preemptions","per job","lost GPU-h","fairness"]]
  .concat(runs.map(r => [r.policy, r.metrics.jobs.completed, stat(r,"jct_s","mean"), stat(r,"jct_s","p95"),
    stat(r,"queue_s","mean"), r.metrics.gpu_alloc_ratio.mean, r.metrics.makespan_s, r.metrics.preemptions,
    r.metrics.preemptions_per_job, r.metrics.lost_gpu_hours, r.metrics.fairness.value]));
document.getElementById("summary").innerHTML = rows.map((row, i) =>
  "<tr>" + row.map(c => i ? "<td>" + fmt(c) + "</td>" : "<th>" + c + "</th>").join("") + "</tr>").join("");
const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"];
const colour = i => palette[i % palette.length];
const axis = (text, extra) => Object.assign({title: {display: true, text}}, extra || {});
function chart(id, config) {
  config.options = Object.assign({animation: false, maintainAspectRatio: false, responsive: true},
                                 config.options || {});
  return new Chart(document.getElementById(id), config);
}
function bars(id, key) {
  chart(id, {type: "bar", data: {labels: names,
    datasets: ["mean", "p50", "p95", "p99"].map((s, i) => ({label: s, backgroundColor: colour(i),
      data: runs.map(r => stat(r, key, s))}))},
    options: {scales: {y: axis("s", {beginAtZero: true})}}});
}
bars("jct", "jct_s");
bars("queue", "queue_s");
// CDFs from each run's percentiles 0..100, on a log time axis (zero plotted at 0.1 s).
function cdf(id, key, title) {
  chart(id, {type: "line", data: {datasets: runs.map((r, i) => ({label: r.policy,
      borderColor: colour(i), backgroundColor: colour(i), pointRadius: 0, stepped: "after",
      data: (r.metrics.cdf[key] || []).map((v, p) => ({x: Math.max(v, 0.1), y: p / 100}))}))},
    options: {plugins: {title: {display: true, text: title}},
      scales: {x: axis("s", {type: "logarithmic", min: 0.1}),
               y: axis("fraction of jobs", {min: 0, max: 1})}}});
}
cdf("jct_cdf", "jct_s", "CDF of job completion time");
cdf("queue_cdf", "queue_s", "CDF of queueing time");
const classes = [...new Set(runs.flatMap(r => Object.keys(r.metrics.per_class)))];
chart("classes", {type: "bar", data: {labels: classes, datasets: runs.map((r, i) => ({
    label: r.policy, backgroundColor: colour(i),
    data: classes.map(c => r.metrics.per_class[c] ? r.metrics.per_class[c].jct_s.mean : null)}))},
  options: {scales: {y: axis("s", {beginAtZero: true})}}});
// Time series as {x, y} points, thinned by Chart.js's decimation where a run has many.
function lines(id, column, yname) {
  chart(id, {type: "line", data: {datasets: runs.map((r, i) => ({label: r.policy,
      borderColor: colour(i), backgroundColor: colour(i), pointRadius: 0, borderWidth: 1.5,
      data: r.series.time_s.map((t, k) => ({x: t, y: r.series[column][k]}))}))},
    options: {parsing: false, interaction: {mode: "nearest", axis: "x", intersect: false},
      plugins: {decimation: {enabled: true, algorithm: "lttb", samples: 1000}},
      scales: {x: axis("time s", {type: "linear"}), y: axis(yname, {beginAtZero: true})}}});
}
lines("alloc", "alloc_ratio", "allocated / healthy");
lines("pending", "pending_jobs", "jobs");
const queueClasses = ["training", "finetune", "batch", "eval"];
const tenantRows = [["tenant", "policy", "completed", "mean JCT s", "p95 JCT s", "mean queue s"]
  .concat(queueClasses.map(c => "queue s: " + c),
          ["queue s: asked within guarantee (mean / p95)", "mean slowdown", "GPU-h"])];
const tenantNames = [...new Set(runs.flatMap(r => Object.keys(r.metrics.per_tenant)))].sort();
for (const t of tenantNames) for (const r of runs) {
  const m = r.metrics.per_tenant[t];
  if (!m) continue;
  const byClass = m.queue_s_by_class || {};
  const w = m.queue_s_within_guarantee;
  const owed = w && w.count ? fmt(w.mean) + " / " + fmt(w.p95) : null;
  tenantRows.push([t, r.policy, m.completed, m.jct_s.mean, m.jct_s.p95, m.queue_s.mean]
    .concat(queueClasses.map(c => byClass[c] ? byClass[c].mean : null), [owed, m.mean_slowdown, m.gpu_hours]));
}
document.getElementById("tenants").innerHTML = tenantRows.map((row, i) =>
  "<tr>" + row.map(c => i ? "<td>" + fmt(c) + "</td>" : "<th>" + c + "</th>").join("") + "</tr>").join("");
</script></body></html>
)HTML";

void Replace(std::string& s, const std::string& key, const std::string& value) {
  for (size_t p = s.find(key); p != std::string::npos; p = s.find(key, p + value.size()))
    s.replace(p, key.size(), value);
}

}  // namespace

Result<std::string> RenderSimReport(const std::string& title, const std::vector<PolicyRun>& runs) {
  auto chart_js = ReadChartJs();
  if (!chart_js.ok()) return chart_js.status();
  json data = json::array();
  for (const PolicyRun& r : runs)
    data.push_back(
        {{"policy", r.policy}, {"metrics", r.metrics}, {"series", Columns(r.timeseries_csv)}});
  std::string page = kPage;
  std::string safe_title;
  for (char c : title)
    safe_title += c == '<'   ? std::string("&lt;")
                  : c == '&' ? std::string("&amp;")
                             : std::string(1, c);
  Replace(page, "@TITLE@", safe_title);
  Replace(page, "@DATA@", ScriptSafe(data.dump()));
  Replace(page, "@CHARTJS@", *chart_js);
  return page;
}

}  // namespace tessera::cli
