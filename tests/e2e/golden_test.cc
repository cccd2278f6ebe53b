// Goldens: what the scheduler decides, byte for byte, through the real binary, so that code
// can move between rooms (issue 40) with the behaviour unchanged. Three traces under the four
// queueing policies (`sim run`: every policy's metrics.json, decisions.jsonl and
// timeseries.csv), the FGD experiment's table and files, and `tessera place` on the examples.
//
// Small outputs are kept whole in tests/golden/ (a change shows as a diff in review); large
// ones by their size, line count and FNV-1a digest in a MANIFEST beside them. When a change
// of behaviour is intended, `scripts/golden` rewrites them (this test with
// TESSERA_UPDATE_GOLDENS=1), and the commit says why each differs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using testing::ReadText;
using testing::RunTessera;

const fs::path kGoldenDir = fs::path(TESSERA_SOURCE_DIR) / "tests" / "golden";
const std::string kGoldenExamples = std::string(TESSERA_SOURCE_DIR) + "/examples";
const std::string kGoldenFixtures = TESSERA_TEST_DATA;

bool Updating() {
  const char* v = std::getenv("TESSERA_UPDATE_GOLDENS");
  return v != nullptr && std::string(v) == "1";
}

// FNV-1a, 64 bits: a stable digest of a file's bytes (not a security boundary).
std::string DigestOf(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

std::string ManifestLineOf(const std::string& name, const std::string& bytes) {
  size_t lines = 0;
  for (char c : bytes)
    lines += c == '\n';
  return name + " " + std::to_string(bytes.size()) + " bytes " + std::to_string(lines) +
         " lines fnv1a64 " + DigestOf(bytes);
}

// The first line where two texts part, for the failure message.
std::string FirstDifference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool more_a = static_cast<bool>(std::getline(a, la));
    bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "they differ only in their last line's end";
    if (!more_a || !more_b || la != lb)
      return "line " + std::to_string(line) + ":\n  golden: " + (more_a ? la : "(none)") +
             "\n  now:    " + (more_b ? lb : "(none)");
  }
}

void WriteText(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// One command's outputs: `whole` kept as they are, `digested` in the case's MANIFEST.
struct Case {
  Case(std::string name_, std::string args_) : name(std::move(name_)), args(std::move(args_)) {}
  std::string name;
  std::string args;  // OUT stands for the output directory
  int exit_code = 0;
  std::vector<std::string> whole;
  std::vector<std::string> digested;
};

std::string Replace(std::string text, const std::string& what, const std::string& with) {
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + with.size()))
    text.replace(at, what.size(), with);
  return text;
}

// Runs the case; its stdout is the output "stdout.txt" (the output directory named OUT in
// it), with the lines that carry wall-clock times dropped.
void Check(const Case& c) {
  fs::path out =
      fs::temp_directory_path() / ("tessera-golden-" + c.name + "-" + std::to_string(::getpid()));
  fs::remove_all(out);
  fs::create_directories(out);
  std::string text;
  ASSERT_EQ(RunTessera(Replace(c.args, "OUT", out.string()), &text, false), c.exit_code) << text;
  std::string kept;
  std::istringstream lines(Replace(text, out.string(), "OUT"));
  for (std::string line; std::getline(lines, line);)
    if (line.find(" in ") == std::string::npos || line.find("runs (") == std::string::npos)
      kept += line + "\n";
  WriteText(out / "stdout.txt", kept);

  fs::path golden = kGoldenDir / c.name;
  std::string manifest;
  for (const auto& name : c.digested) {
    ASSERT_TRUE(fs::exists(out / name)) << c.name << ": the command wrote no " << name;
    manifest += ManifestLineOf(name, ReadText(out / name)) + "\n";
  }
  if (Updating()) {
    fs::remove_all(golden);
    for (const auto& name : c.whole)
      WriteText(golden / name, ReadText(out / name));
    if (!manifest.empty()) WriteText(golden / "MANIFEST", manifest);
  } else {
    for (const auto& name : c.whole) {
      ASSERT_TRUE(fs::exists(golden / name)) << "no golden " << (golden / name).string();
      std::string want = ReadText(golden / name), got = ReadText(out / name);
      EXPECT_TRUE(want == got) << c.name << "/" << name << " differs from its golden at "
                               << FirstDifference(want, got) << "\n(the output is kept in "
                               << out.string() << "; scripts/golden rewrites the goldens)";
    }
    std::string want = c.digested.empty() ? "" : ReadText(golden / "MANIFEST");
    EXPECT_TRUE(want == manifest) << c.name << "/MANIFEST differs at "
                                  << FirstDifference(want, manifest) << "\n(the output is kept in "
                                  << out.string() << ")";
    if (!::testing::Test::HasFailure()) fs::remove_all(out);
  }
  if (Updating()) fs::remove_all(out);
}

// `sim run` of a trace under every queueing policy.
Case SimRun(const std::string& name, const std::string& args) {
  Case c{name, "sim run " + args + " --policy fifo --compare backfill,las,hetero --out OUT " +
                   "--no-progress"};
  c.whole.push_back("stdout.txt");
  for (const char* policy : {"fifo", "backfill", "las", "hetero"}) {
    c.whole.push_back(std::string(policy) + "/metrics.json");
    c.digested.push_back(std::string(policy) + "/decisions.jsonl");
    c.digested.push_back(std::string(policy) + "/timeseries.csv");
  }
  c.digested.push_back("metrics.json");
  return c;
}

TEST(Goldens, SimRunGavelTraceUnderEveryPolicy) {
  Check(SimRun("sim-run-gavel", "--fleet " + kGoldenExamples +
                                    "/fleets/gavel-108.yaml --workload " + kGoldenFixtures +
                                    "/gavel/traces/msr_seed0/2869ce.trace " + "--format gavel"));
}

TEST(Goldens, SimRunPhillyVirtualClusterUnderEveryPolicy) {
  Check(SimRun("sim-run-philly", "--fleet " + kGoldenExamples +
                                     "/fleets/philly-64.yaml --workload " + kGoldenFixtures +
                                     "/philly/philly-jobs.csv --format philly " +
                                     "--cluster 2869ce"));
}

// The enterprise example's tenants, quotas, policy rules and clouds under a synthetic day.
TEST(Goldens, SimRunSyntheticEnterpriseUnderEveryPolicy) {
  Check(SimRun("sim-run-enterprise", "--fleet " + kGoldenExamples +
                                         "/enterprise --format synthetic " +
                                         "--jobs 400 --load 2 --seed 3"));
}

TEST(Goldens, SimFgdTableAndFiles) {
  Case c{"sim-fgd", "sim fgd --nodes " + kGoldenFixtures +
                        "/alibaba-gpu-v2023/openb_node_list_gpu_node.csv " + "--pods " +
                        kGoldenFixtures + "/alibaba-gpu-v2023/openb_pod_list_default.csv " +
                        "--policy all --seeds 42,43 --threads 2 --out OUT"};
  c.whole = {"stdout.txt"};
  c.digested = {"allo.csv", "frag.csv", "frag_ratio.csv", "placements.jsonl"};
  Check(c);
}

TEST(Goldens, PlaceOnTheExamples) {
  Case enterprise{"place-enterprise", "place --fleet " + kGoldenExamples + "/enterprise --jobs " +
                                          kGoldenExamples + "/enterprise"};
  enterprise.exit_code = 3;  // assistant-sft waits (place_test.cc says why)
  enterprise.whole = {"stdout.txt"};
  Check(enterprise);
  Case as_json{"place-enterprise-json", enterprise.args + " -o json"};
  as_json.exit_code = 3;
  as_json.digested = {"stdout.txt"};
  Check(as_json);
  Case small{"place-small", "place --fleet " + kGoldenExamples + "/small/fleet.yaml --jobs " +
                                kGoldenExamples + "/small/fleet.yaml -o json"};
  small.whole = {"stdout.txt"};
  Check(small);
  Case local{"place-local", "place --fleet " + kGoldenExamples + "/local/fleet.yaml --jobs " +
                                kGoldenExamples + "/local/jobs.yaml"};
  local.whole = {"stdout.txt"};
  Check(local);
}

}  // namespace
}  // namespace tessera
