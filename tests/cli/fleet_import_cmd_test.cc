// tessera fleet import: exit codes, the summary line, the written file, and located errors for
// malformed CSVs (written to a temporary directory by each test).
#include "cli/fleet_import_cmd.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/app.h"
#include "config/loader.h"

namespace tessera::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kData = TESSERA_TEST_DATA;  // the fixtures cut from the public traces
const std::string kOpenbGpu = kData + "/alibaba-gpu-v2023/openb_node_list_gpu_node.csv";

class FleetImportCmdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("tessera_fleet_import_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string WriteCsv(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
    return Path(name);
  }
  int Import(const std::string& format, const std::string& csv, const std::string& output) {
    out_.str("");
    err_.str("");
    FleetImportArgs args;
    args.format = format;
    args.csv = csv;
    args.file = output;
    return RunFleetImport(args, out_, err_);
  }

  std::filesystem::path dir_;
  std::ostringstream out_, err_;
};

TEST_F(FleetImportCmdTest, ImportsOpenbAndWritesYamlThatValidates) {
  std::string yaml = Path("openb.yaml");
  ASSERT_EQ(Import("openb", kOpenbGpu, yaml), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "wrote " + yaml +
                            ": 1 region, 1 cluster, 304 nodes, 1548 devices (A10 1, G2 1120, "
                            "G3 64, P100 61, T4 206, V100M16 60, V100M32 36)\n");
  EXPECT_EQ(err_.str(), "");
  EXPECT_FALSE(std::filesystem::exists(yaml + ".tmp"));
  LoadResult loaded = LoadSpecFiles({yaml});
  ASSERT_TRUE(loaded.spec) << loaded.diagnostics.ToString();
  size_t devices = 0;
  for (const Node& n : loaded.spec->nodes)
    devices += n.devices.size();
  EXPECT_EQ(loaded.spec->nodes.size(), 304u);
  EXPECT_EQ(devices, 1548u);
}

TEST_F(FleetImportCmdTest, FlagsNameRegionClusterAndTierAndDashWritesToStdout) {
  std::string csv = WriteCsv("n.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,1024,2,T4\n");
  FleetImportArgs args{"openb", csv, "-", "cn-hz", "pai-a", "elastic"};
  ASSERT_EQ(RunFleetImport(args, out_, err_), kExitOk) << err_.str();
  // Standard output carries the YAML only; the summary goes to standard error.
  EXPECT_THAT(out_.str(), StartsWith("# Imported by `tessera fleet import --format openb` from "));
  EXPECT_THAT(out_.str(), HasSubstr("  - name: pai-a\n    region: cn-hz\n    tier: elastic\n"));
  EXPECT_EQ(err_.str(), "wrote <stdout>: 1 region, 1 cluster, 1 node, 2 devices (T4 2)\n");
  LoadResult loaded = LoadSpecTexts({{"stdout.yaml", out_.str()}});
  EXPECT_TRUE(loaded.spec) << loaded.diagnostics.ToString();
}

TEST_F(FleetImportCmdTest, MalformedRowsGiveExit2WithEveryLine) {
  std::string csv = WriteCsv("bad.csv",
                             "sn,cpu_milli,memory_mib,gpu,model\n"
                             "n1,abc,1024,1,T4\n"
                             "n2,8000,1024,-2,T4\n"
                             "n3,8000,1024,1\n"
                             "n4,8000,1024,1,T4\n");
  std::string yaml = Path("out.yaml");
  EXPECT_EQ(Import("openb", csv, yaml), kExitInvalidInput);
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(), "tessera fleet import: " + csv + ": 3 malformed rows\n  " + csv +
                            ":2: column cpu_milli: expected a whole number, got \"abc\"\n  " + csv +
                            ":3: column gpu: expected a whole number from 0 to 1024, got -2\n  " +
                            csv +
                            ":4: expected 5 fields (sn,cpu_milli,memory_mib,gpu,model), got 4\n");
  EXPECT_FALSE(std::filesystem::exists(yaml));
}

TEST_F(FleetImportCmdTest, MissingColumnGivesExit2) {
  std::string csv = WriteCsv("cols.csv", "sn,cpu_milli,memory_mib,gpu\nn1,8000,1024,0\n");
  EXPECT_EQ(Import("openb", csv, Path("out.yaml")), kExitInvalidInput);
  EXPECT_THAT(err_.str(), HasSubstr(csv + ":1: missing column(s) model"));
}

TEST_F(FleetImportCmdTest, NonNumericCpuInSpotGivesExit2) {
  std::string csv =
      WriteCsv("spot.csv", "gpu_model,gpu_capacity_num,cpu_num,node_name\r\nA10,1,many,0\r\n");
  EXPECT_EQ(Import("spot2026", csv, Path("out.yaml")), kExitInvalidInput);
  EXPECT_THAT(err_.str(),
              HasSubstr(csv + ":2: column cpu_num: expected a whole number, got \"many\""));
}

TEST_F(FleetImportCmdTest, WrongColumnCountInPaiGivesExit2) {
  std::string csv = WriteCsv("pai.csv", "m1,T4,96,512,2\nm2,T4,96,512\nm3,T4,96,512,2,7\n");
  EXPECT_EQ(Import("pai2020", csv, Path("out.yaml")), kExitInvalidInput);
  EXPECT_THAT(err_.str(), HasSubstr(csv + ":2: expected 5 fields"));
  EXPECT_THAT(err_.str(), HasSubstr(csv + ":3: expected 5 fields"));
}

TEST_F(FleetImportCmdTest, EmptyFileGivesExit2) {
  std::string csv = WriteCsv("empty.csv", "");
  EXPECT_EQ(Import("openb", csv, Path("out.yaml")), kExitInvalidInput);
  EXPECT_EQ(err_.str(), "tessera fleet import: " + csv + ":1: empty file; expected a header row\n");
  EXPECT_EQ(Import("pai2020", csv, Path("out.yaml")), kExitInvalidInput);
  EXPECT_THAT(err_.str(), HasSubstr("no nodes"));
}

TEST_F(FleetImportCmdTest, UnknownFormatOrTierGivesExit2) {
  EXPECT_EQ(Import("openc", kOpenbGpu, Path("out.yaml")), kExitInvalidInput);
  EXPECT_EQ(err_.str(),
            "tessera fleet import: unknown format \"openc\"; expected one of \"openb\", "
            "\"pai2020\", \"spot2026\"\n");
  FleetImportArgs args{"openb", kOpenbGpu, Path("out.yaml"), "default", "", "gold"};
  EXPECT_EQ(RunFleetImport(args, out_, err_), kExitInvalidInput);
  EXPECT_FALSE(std::filesystem::exists(Path("out.yaml")));
}

TEST_F(FleetImportCmdTest, MissingInputGivesExit2) {
  EXPECT_EQ(Import("openb", Path("absent.csv"), Path("out.yaml")), kExitInvalidInput);
  EXPECT_THAT(err_.str(), HasSubstr("absent.csv: cannot open"));
}

TEST_F(FleetImportCmdTest, UnwritableOutputGivesExit1) {
  std::string csv = WriteCsv("n.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,1024,0,\n");
  std::string yaml = Path("no-such-dir/out.yaml");
  EXPECT_EQ(Import("openb", csv, yaml), kExitFailure);
  EXPECT_THAT(err_.str(), HasSubstr("cannot write " + yaml));
  EXPECT_EQ(out_.str(), "");
}

TEST_F(FleetImportCmdTest, FailedImportLeavesAnExistingOutputAlone) {
  std::string yaml = Path("fleet.yaml");
  std::ofstream(yaml) << "# the previous fleet\n";
  std::string csv = WriteCsv("bad.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,x,1,0,\n");
  EXPECT_EQ(Import("openb", csv, yaml), kExitInvalidInput);
  std::ifstream in(yaml);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "# the previous fleet\n");
}

}  // namespace
}  // namespace tessera::cli
