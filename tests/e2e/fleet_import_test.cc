// tessera fleet import through the real binary, as docs/cli.md shows it: the imported openb
// fleet (the fixture cut from it) validates and the fleet view reports its totals. Also --help
// and --version.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using testing::RunTessera;

TEST(FleetImportCli, OpenbImportValidatesWithTheRightTotals) {
  fs::path yaml =
      fs::temp_directory_path() / ("tessera-openb-" + std::to_string(::getpid()) + ".yaml");
  std::string out;
  ASSERT_EQ(RunTessera("fleet import --format openb " + std::string(TESSERA_TEST_DATA) +
                           "/alibaba-gpu-v2023/openb_node_list_gpu_node.csv -f " + yaml.string(),
                       &out),
            0)
      << out;
  ASSERT_EQ(RunTessera("validate " + yaml.string(), &out), 0) << out;
  ASSERT_EQ(RunTessera("fleet " + yaml.string() + " -o json", &out), 0) << out;
  auto doc = nlohmann::json::parse(out);
  EXPECT_EQ(doc["totals"]["nodes"], 304);  // the fixture: every 4th node of the 1,213
  EXPECT_EQ(doc["totals"]["devices"], 1548);
  fs::remove(yaml);
  EXPECT_EQ(RunTessera("fleet import --format nope x.csv -f y.yaml", &out), 2);
}

TEST(Cli, HelpAndVersion) {
  std::string out;
  EXPECT_EQ(RunTessera("--help", &out), 0);
  for (const char* cmd : {"validate", "fleet", "place", "sim"}) {
    EXPECT_NE(out.find(cmd), std::string::npos) << cmd;
  }
  EXPECT_EQ(RunTessera("--version", &out), 0);
  EXPECT_NE(out.find("tessera 0.1.0"), std::string::npos);
  EXPECT_EQ(RunTessera("", &out), 2);  // a subcommand is required
}

}  // namespace
}  // namespace tessera
