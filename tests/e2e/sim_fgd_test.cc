// tessera sim fgd through the real binary, on the fixtures cut from the openb trace (tests/data:
// every 4th node, every 20th pod): the output files have the shape of fgd-expected/,
// placements.jsonl has one line per pod, and bad flags and inputs exit 2. Reproducing the
// published medians on the whole trace is the data suite's (tests/data_suite/fgd_test.cc).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using testing::RunTessera;

std::vector<std::string> Lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);)
    lines.push_back(l);
  return lines;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string f; std::getline(ss, f, ',');)
    out.push_back(f);
  return out;
}

const std::string kData = std::string(TESSERA_TEST_DATA) + "/alibaba-gpu-v2023/";

TEST(SimFgd, WritesCurvesInThePublishedShapeAndOneLinePerPod) {
  fs::path out = fs::temp_directory_path() / ("tessera-fgd-" + std::to_string(::getpid()));
  std::string text;
  int code = RunTessera(
      "sim fgd --nodes " + kData + "openb_node_list_gpu_node.csv --pods " + kData +
          "openb_pod_list_default.csv --policy best-fit,fgd --seeds 42 --out " + out.string(),
      &text);
  ASSERT_EQ(code, 0) << text;
  std::string expected = std::string(TESSERA_TEST_DATA) + "/fgd-expected/";
  for (std::string f : {"allo", "frag", "frag_ratio"}) {
    std::vector<std::string> mine = Lines(out / (f + ".csv"));
    std::vector<std::string> theirs =
        Lines(expected + "analysis_" + std::string(f) + "_discrete.csv");
    ASSERT_EQ(mine.size(), 3u) << f;  // header + 2 policies x 1 seed
    EXPECT_EQ(mine[0], theirs[0]) << f;
    EXPECT_EQ(Split(mine[1]).size(), Split(theirs[1]).size()) << f;
    EXPECT_EQ(Split(mine[1])[0], "openb_pod_list_default");
    EXPECT_EQ(Split(mine[1])[1], "best-fit");
    EXPECT_EQ(Split(mine[1])[2], "1.3");
  }
  // The chart: a self-contained page with Chart.js inlined; per curve each policy's median
  // and band, FGD's published median for this workload, and a zoomed 85-130% chart.
  std::ifstream chart(out / "chart.html");
  std::string html((std::istreambuf_iterator<char>(chart)), {});
  for (const char* id : {"allo", "allo_zoom", "frag", "frag_zoom", "frag_ratio", "frag_ratio_zoom"})
    EXPECT_NE(html.find("<canvas id=\"" + std::string(id) + "\">"), std::string::npos) << id;
  EXPECT_NE(html.find("\"best-fit\":{\"hi\":["), std::string::npos);
  EXPECT_NE(html.find("\"median\":["), std::string::npos);
  EXPECT_NE(html.find("\"lo\":["), std::string::npos);
  EXPECT_NE(html.find("\"published\":["), std::string::npos);
  EXPECT_NE(html.find("seeds 42 (1 per policy)"), std::string::npos);
  EXPECT_NE(html.find("tune 1.3"), std::string::npos);
  EXPECT_NE(html.find("FGD's published median (06-FGD, 10 seeds)"), std::string::npos);
  EXPECT_NE(html.find("allocated GPUs (% of all GPUs)"), std::string::npos) << "y-axis title";
  EXPECT_EQ(html.find("<script src="), std::string::npos) << "no external scripts";
  EXPECT_GT(html.size(), 100000u) << "Chart.js is inlined";
  // A real browser draws all six charts without a script error.
  std::string dom;
  FILE* browser = ::popen(("chromium --headless --no-sandbox --disable-gpu --dump-dom file://" +
                           (out / "chart.html").string() + " 2>/dev/null")
                              .c_str(),
                          "r");
  ASSERT_NE(browser, nullptr);
  char buf[65536];
  while (size_t n = ::fread(buf, 1, sizeof buf, browser))
    dom.append(buf, n);
  ASSERT_EQ(::pclose(browser), 0) << "chromium (scripts/bootstrap installs it) did not run";
  EXPECT_NE(dom.find("<pre id=\"errors\"></pre>"), std::string::npos)
      << dom.substr(dom.find("<pre id=\"errors\">"), 400);
  size_t drawn = 0;
  for (size_t at = dom.find("<canvas"); at != std::string::npos; at = dom.find("<canvas", at + 1))
    drawn += dom.substr(at, dom.find('>', at) - at).find("box-sizing") != std::string::npos;
  EXPECT_EQ(drawn, 6u) << "Chart.js sizes every canvas it draws";
  // Allocation grows with arrived demand and stays within the cluster.
  std::vector<std::string> allo = Lines(out / "allo.csv");
  for (size_t row : {1u, 2u}) {
    double at50 = std::stod(Split(allo[row])[5 + 50]), at130 = std::stod(Split(allo[row])[5 + 130]);
    EXPECT_GT(at50, 40.0) << allo[row].substr(0, 40);
    EXPECT_GE(at130, at50) << allo[row].substr(0, 40);
    EXPECT_LE(at130, 100.0) << allo[row].substr(0, 40);
  }
  // placements.jsonl: one line per pod and policy, names from the trace.
  std::vector<std::string> placements = Lines(out / "placements.jsonl");
  ASSERT_GT(placements.size(), 2000u);  // 1.3 x 1,548 GPUs of pods, twice
  size_t per_policy[2] = {0, 0};
  auto first = nlohmann::json::parse(placements.front());
  EXPECT_EQ(first["policy"], "best-fit");
  EXPECT_EQ(first["seed"], 42);
  EXPECT_EQ(first["pod"].get<std::string>().rfind("openb-pod-", 0), 0u);
  size_t failed = 0;
  for (const std::string& l : placements) {
    auto j = nlohmann::json::parse(l);
    ++per_policy[j["policy"] == "best-fit" ? 0 : 1];
    if (j["node"].is_null()) {
      ++failed;
      EXPECT_TRUE(j["devices"].empty());
    } else {
      EXPECT_EQ(j["node"].get<std::string>().rfind("openb-node-", 0), 0u);
    }
  }
  EXPECT_GT(failed, 0u);
  EXPECT_EQ(per_policy[0], per_policy[1]) << "one seed draws the same pods for both policies";
  // Arrival indices count 0, 1, 2, ... within each (policy, seed) run.
  EXPECT_EQ(first["arrival"], 0);
  EXPECT_EQ(nlohmann::json::parse(placements[1])["arrival"], 1);
  // A rerun without placements into the same folder leaves no stale placements.jsonl.
  ASSERT_EQ(RunTessera("sim fgd --nodes " + kData + "openb_node_list_gpu_node.csv --pods " + kData +
                       "openb_pod_list_default.csv --policy best-fit --seeds 42 " +
                       "--no-placements --out " + out.string()),
            0);
  EXPECT_FALSE(fs::exists(out / "placements.jsonl"));
  fs::remove_all(out);
}

TEST(SimFgd, BadFlagsAndInputsExitTwo) {
  std::string nodes = kData + "openb_node_list_gpu_node.csv";
  std::string pods = kData + "openb_pod_list_default.csv";
  std::string text;
  EXPECT_EQ(
      RunTessera("sim fgd --nodes " + nodes + " --pods " + pods + " --policy nope --out /tmp/x",
                 &text),
      2);
  EXPECT_NE(text.find("unknown policy \"nope\""), std::string::npos) << text;
  EXPECT_EQ(RunTessera("sim fgd --nodes " + nodes + " --pods " + pods +
                           " --published /nonexistent --out /tmp/tessera-never",
                       &text),
            2);
  EXPECT_NE(text.find("--published: /nonexistent is not a directory"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists("/tmp/tessera-never")) << "nothing runs before the flags are checked";
  EXPECT_EQ(RunTessera("sim fgd --nodes " + nodes + " --pods " + pods + " --seeds 9-1 --out /tmp/x",
                       &text),
            2);
  EXPECT_NE(text.find("the range 9-1 is reversed (write 1-9)"), std::string::npos) << text;
  // Each flag problem is named for what it is, before any file is read.
  const std::pair<std::string, std::string> cases[] = {
      {"--seeds 42,42", "seed 42 is given twice"},
      {"--seeds 40-45,44", "seed 44 is given twice"},
      {"--seeds 1-100000000", "asks for too many seeds (at most 10000)"},
      {"--seeds 4x", "expected a seed, a range such as 42-51"},
      {"--policy ''", "--policy: an empty policy name"},
      {"--policy fgd,", "--policy: an empty policy name"},
      {"--policy fgd,fgd", "--policy: fgd is named twice"},
  };
  for (const auto& [flags, message] : cases) {
    EXPECT_EQ(
        RunTessera("sim fgd --nodes /nonexistent --pods /nonexistent " + flags + " --out /tmp/x",
                   &text),
        2)
        << flags;
    EXPECT_NE(text.find(message), std::string::npos) << flags << ": " << text;
  }
  EXPECT_EQ(RunTessera("sim fgd --help", &text), 0);
  EXPECT_NE(text.find("gpu-clustering"), std::string::npos) << "--help lists the policies";
  EXPECT_EQ(RunTessera("sim fgd --nodes /nonexistent.csv --pods " + pods + " --out /tmp/x", &text),
            2);
  EXPECT_EQ(
      RunTessera("sim fgd --nodes " + nodes + " --pods " + pods + " --threads -1 --out /tmp/x",
                 &text),
      2);
  EXPECT_EQ(
      RunTessera("sim fgd --nodes " + nodes + " --pods " + pods + " --tune 0 --out /tmp/x", &text),
      2);
  fs::path bad = fs::temp_directory_path() / ("tessera-badpods-" + std::to_string(::getpid()));
  std::ofstream(bad) << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                        "creation_time,deletion_time,scheduled_time\n"
                        "p1,abc,1024,1,1000,,LS,Running,0,10,0\n";
  EXPECT_EQ(
      RunTessera("sim fgd --nodes " + nodes + " --pods " + bad.string() + " --out /tmp/x", &text),
      2);
  EXPECT_NE(text.find(":2: column cpu_milli"), std::string::npos) << text;
  fs::remove(bad);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(SimFgd, SameInputsAndSeedGiveByteIdenticalOutput) {
  fs::path a = fs::temp_directory_path() / ("tessera-det-a-" + std::to_string(::getpid()));
  fs::path b = fs::temp_directory_path() / ("tessera-det-b-" + std::to_string(::getpid()));
  std::string common = "sim fgd --nodes " + kData + "openb_node_list_gpu_node.csv --pods " + kData +
                       "openb_pod_list_gpushare40.csv --policy random,tessera --seeds 7 ";
  std::string text;
  ASSERT_EQ(RunTessera(common + "--threads 2 --out " + a.string(), &text), 0) << text;
  ASSERT_EQ(RunTessera(common + "--threads 1 --out " + b.string(), &text), 0) << text;
  for (const char* f : {"allo.csv", "frag.csv", "frag_ratio.csv", "placements.jsonl"}) {
    std::ifstream x(a / f, std::ios::binary), y(b / f, std::ios::binary);
    std::string sx((std::istreambuf_iterator<char>(x)), {}),
        sy((std::istreambuf_iterator<char>(y)), {});
    EXPECT_FALSE(sx.empty()) << f;
    EXPECT_TRUE(sx == sy) << f << " differs between two runs";
  }
  fs::remove_all(a);
  fs::remove_all(b);
}

}  // namespace
}  // namespace tessera
