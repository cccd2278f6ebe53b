// The data suite (label `data`, TESSERA_DATA): the queue's policies on whole public traces.
// hetero lowers mean JCT against fifo and las on every whole Gavel trace; EASY backfill and LAS
// lower it against strict fifo on Philly's large virtual clusters. tests/e2e/sim_run_test.cc runs
// the same commands on cuts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "testutil/data_dir.h"
#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kSource = TESSERA_SOURCE_DIR;

json RunCompare(const std::string& tag, const std::string& args) {
  fs::path out =
      fs::temp_directory_path() / ("tessera-data-" + tag + "-" + std::to_string(::getpid()));
  fs::remove_all(out);
  std::string text;
  int code = testing::RunTessera(args + " --no-progress --out " + out.string(), &text);
  EXPECT_EQ(code, 0) << text;
  json m = code == 0 ? json::parse(testing::ReadText(out / "metrics.json")) : json::object();
  fs::remove_all(out);
  return m;
}

double MeanJct(const json& m) {
  return m["jct_s"]["mean"].get<double>();
}

// Every trace of Gavel's msr_seed0 (ten; docs/simulation.md's table, bench/gavel-jct).
TEST(DataQueueing, HeteroBeatsFifoAndLasOnEveryWholeGavelTrace) {
  TESSERA_WHOLE_DATA_OR_FAIL(data);
  std::vector<fs::path> traces;
  for (const auto& e : fs::directory_iterator(data + "/gavel/traces/msr_seed0"))
    if (e.path().extension() == ".trace") traces.push_back(e.path());
  std::sort(traces.begin(), traces.end());
  ASSERT_EQ(traces.size(), 10u);
  for (const fs::path& trace : traces) {
    SCOPED_TRACE(trace.filename().string());
    json m = RunCompare(
        "gavel", "sim run --fleet " + kSource + "/examples/fleets/gavel-108.yaml --workload " +
                     trace.string() + " --format gavel --policy fifo " + "--compare las,hetero");
    ASSERT_FALSE(m.empty());
    for (const char* p : {"fifo", "las", "hetero"}) {
      EXPECT_GT(m[p]["jobs"]["submitted"].get<int>(), 0) << p;
      EXPECT_EQ(m[p]["jobs"]["completed"], m[p]["jobs"]["submitted"]) << p;
    }
    EXPECT_LT(MeanJct(m["hetero"]), MeanJct(m["fifo"]));
    EXPECT_LT(MeanJct(m["hetero"]), MeanJct(m["las"]));
    // Where jobs contend (traces of hundreds), hetero moves running jobs to faster models; on
    // the tiny ones (3 and 18 jobs) each starts on its fastest model and never moves.
    if (m["hetero"]["jobs"]["submitted"].get<int>() > 100) {
      EXPECT_GT(m["hetero"]["engine"]["migrations"].get<int>(), 0);
    }
  }
}

// Philly's large virtual clusters but the largest two (docs/queueing.md's table,
// bench/queueing-jct runs those too).
TEST(DataQueueing, BackfillAndLasBeatFifoOnPhillyVirtualClusters) {
  TESSERA_WHOLE_DATA_OR_FAIL(data);
  for (const auto& [vc, jobs] : {std::pair{"0e4a51", 1435}, {"7f04ca", 723}, {"2869ce", 422}}) {
    SCOPED_TRACE(vc);
    json m =
        RunCompare("philly", "sim run --fleet " + kSource +
                                 "/examples/fleets/philly-64.yaml --format philly --workload " +
                                 data + "/philly/philly-jobs.csv --cluster " + vc +
                                 " --policy fifo --compare backfill,las");
    ASSERT_FALSE(m.empty());
    for (const char* p : {"fifo", "backfill", "las"})
      EXPECT_EQ(m[p]["jobs"]["completed"], jobs) << p;
    EXPECT_LT(MeanJct(m["backfill"]), MeanJct(m["fifo"]));
    EXPECT_LT(MeanJct(m["las"]), MeanJct(m["fifo"]));
  }
}

}  // namespace
}  // namespace tessera
