#include "cli/sim_report.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tessera::cli {

using json = nlohmann::ordered_json;

std::string EchartsPath() {
  const char* env = std::getenv("TESSERA_ECHARTS_JS");
  return env && *env ? env : TESSERA_ECHARTS_JS;
}

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

// Escapes "</" so inlined data and script cannot end the <script> element early.
std::string ScriptSafe(std::string s) {
  for (size_t p = s.find("</"); p != std::string::npos; p = s.find("</", p + 3))
    s.replace(p, 2, "<\\/");
  return s;
}

const char* kPage = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>@TITLE@</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px} h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:13px} td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}
.chart{width:100%;max-width:1100px;height:340px}
</style>
<script>
window.onerror = (message, source, line) => {
  document.getElementById("errors").textContent += message + " (line " + line + ")\n";
};
</script>
<script>@ECHARTS@</script></head><body>
<pre id="errors"></pre>
<h1>@TITLE@</h1>
<p>Each policy replayed the same workload on the same fleet through Tessera's engine; times
are simulated seconds. Metrics are defined in docs/simulation.md.</p>
<h2>Summary</h2><table id="summary"></table>
<h2>Job completion time</h2><div id="jct" class="chart"></div>
<div id="jct_cdf" class="chart"></div>
<h2>Queueing time</h2><div id="queue" class="chart"></div>
<div id="queue_cdf" class="chart"></div>
<h2>Mean JCT per class</h2><div id="classes" class="chart"></div>
<h2>GPU allocation over time</h2><div id="alloc" class="chart"></div>
<h2>Pending jobs over time</h2><div id="pending" class="chart"></div>
<h2>Per tenant</h2><table id="tenants"></table>
<script>
const runs = @DATA@;
const names = runs.map(r => r.policy);
const fmt = v => v == null ? "-" : (typeof v === "number" ? v.toLocaleString("en") : v);
const stat = (r, k, s) => (r.metrics[k] && r.metrics[k][s] != null) ? r.metrics[k][s] : null;
const rows = [["policy","completed","mean JCT s","p95 JCT s","mean queue s","GPU alloc","makespan s","preemptions","lost GPU-h","fairness"]]
  .concat(runs.map(r => [r.policy, r.metrics.jobs.completed, stat(r,"jct_s","mean"), stat(r,"jct_s","p95"),
    stat(r,"queue_s","mean"), r.metrics.gpu_alloc_ratio.mean, r.metrics.makespan_s, r.metrics.preemptions,
    r.metrics.lost_gpu_hours, r.metrics.fairness.value]));
document.getElementById("summary").innerHTML = rows.map((row, i) =>
  "<tr>" + row.map(c => i ? "<td>" + fmt(c) + "</td>" : "<th>" + c + "</th>").join("") + "</tr>").join("");
function bars(id, key) {
  echarts.init(document.getElementById(id)).setOption({
    tooltip: {}, legend: {}, xAxis: {type: "category", data: names}, yAxis: {type: "value", name: "s"},
    series: ["mean", "p50", "p95", "p99"].map(s => ({name: s, type: "bar", data: runs.map(r => stat(r, key, s))}))});
}
bars("jct", "jct_s");
bars("queue", "queue_s");
// CDFs from each run's percentiles 0..100, on a log time axis (zero plotted at 0.1 s).
function cdf(id, key, title) {
  echarts.init(document.getElementById(id)).setOption({
    title: {text: title, textStyle: {fontSize: 13}}, tooltip: {trigger: "axis"}, legend: {top: 20},
    xAxis: {type: "log", name: "s", min: 0.1}, yAxis: {type: "value", name: "fraction of jobs", max: 1},
    series: runs.map(r => ({name: r.policy, type: "line", showSymbol: false, step: "end",
      data: (r.metrics.cdf[key] || []).map((v, p) => [Math.max(v, 0.1), p / 100])}))});
}
cdf("jct_cdf", "jct_s", "CDF of job completion time");
cdf("queue_cdf", "queue_s", "CDF of queueing time");
const classes = [...new Set(runs.flatMap(r => Object.keys(r.metrics.per_class)))];
echarts.init(document.getElementById("classes")).setOption({
  tooltip: {}, legend: {}, xAxis: {type: "category", data: classes}, yAxis: {type: "value", name: "s"},
  series: runs.map(r => ({name: r.policy, type: "bar",
    data: classes.map(c => r.metrics.per_class[c] ? r.metrics.per_class[c].jct_s.mean : null)}))});
function lines(id, column, yname) {
  echarts.init(document.getElementById(id)).setOption({
    tooltip: {trigger: "axis"}, legend: {}, dataZoom: [{type: "inside"}, {}],
    xAxis: {type: "value", name: "time s"}, yAxis: {type: "value", name: yname},
    series: runs.map(r => ({name: r.policy, type: "line", showSymbol: false,
      data: r.series.time_s.map((t, i) => [t, r.series[column][i]])}))});
}
lines("alloc", "alloc_ratio", "allocated / healthy");
lines("pending", "pending_jobs", "jobs");
const tenantRows = [["tenant", "policy", "completed", "mean JCT s", "p95 JCT s", "mean queue s",
                     "mean slowdown", "GPU-h"]];
const tenantNames = [...new Set(runs.flatMap(r => Object.keys(r.metrics.per_tenant)))].sort();
for (const t of tenantNames) for (const r of runs) {
  const m = r.metrics.per_tenant[t];
  if (!m) continue;
  tenantRows.push([t, r.policy, m.completed, m.jct_s.mean, m.jct_s.p95, m.queue_s.mean,
                   m.mean_slowdown, m.gpu_hours]);
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
  std::string path = EchartsPath();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Unavailable("cannot read the chart library " + path +
                       " (the build installs echarts from npm; TESSERA_ECHARTS_JS overrides)");
  }
  std::ostringstream js;
  js << in.rdbuf();
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
  Replace(page, "@ECHARTS@", ScriptSafe(js.str()));
  return page;
}

}  // namespace tessera::cli
