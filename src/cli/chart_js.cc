#include "cli/chart_js.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tessera::cli {

std::string ChartJsPath() {
  const char* env = std::getenv("TESSERA_CHARTJS");
  return env && *env ? env : "/usr/share/javascript/chart.js/chart.min.js";
}

Result<std::string> ReadChartJs() {
  std::ifstream in(ChartJsPath(), std::ios::binary);
  if (!in) {
    return Unavailable("cannot read Chart.js at " + ChartJsPath() +
                       " (Debian package libjs-chart.js; scripts/bootstrap installs it; "
                       "TESSERA_CHARTJS overrides the path)");
  }
  std::ostringstream js;
  js << in.rdbuf();
  return ScriptSafe(js.str());
}

std::string ScriptSafe(std::string s) {
  for (size_t p = s.find("</"); p != std::string::npos; p = s.find("</", p + 3))
    s.replace(p, 2, "<\\/");
  return s;
}

}  // namespace tessera::cli
