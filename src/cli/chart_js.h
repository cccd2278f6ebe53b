// The one chart library of every HTML page Tessera writes (`sim fgd`'s chart.html, `sim run`'s
// report.html): Chart.js from Debian's libjs-chart.js, inlined so that each page works offline.
#pragma once

#include <string>

#include "common/status.h"

namespace tessera::cli {

// Where Chart.js is read from: $TESSERA_CHARTJS, else Debian's path.
std::string ChartJsPath();

// Chart.js's source, made safe to inline in a <script> element; Unavailable, naming the path
// and the package, when it cannot be read.
Result<std::string> ReadChartJs();

// Escapes "</" so that inlined data and script cannot end their <script> element early.
std::string ScriptSafe(std::string s);

}  // namespace tessera::cli
