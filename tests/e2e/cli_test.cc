// The command line's conventions through the real binary: unknown verbs and flags are named
// with the closest known one, `help` works as a verb, and errors point to the help of the
// subcommand that was being parsed.
#include <gtest/gtest.h>

#include <string>

#include "testutil/run_tessera.h"

namespace tessera {
namespace {

int Tessera(const std::string& args, std::string* out) {
  return testing::RunTessera(args, out);
}

TEST(Cli, AnUnknownVerbIsNamedWithTheClosestOne) {
  std::string text;
  EXPECT_EQ(Tessera("valdate examples/small", &text), 2);
  EXPECT_NE(text.find("unknown command 'valdate' (did you mean 'validate'?)"), std::string::npos)
      << text;
  EXPECT_EQ(Tessera("completion bash", &text), 2);
  EXPECT_NE(text.find("unknown command 'completion'"), std::string::npos) << text;
  EXPECT_EQ(Tessera("-v", &text), 2);
  EXPECT_NE(text.find("unknown flag '-v'"), std::string::npos) << text;
}

TEST(Cli, HelpIsAVerbToo) {
  std::string text;
  EXPECT_EQ(Tessera("help", &text), 0);
  EXPECT_NE(text.find("validate"), std::string::npos) << text;
  EXPECT_EQ(Tessera("help sim", &text), 0);
  EXPECT_NE(text.find("fgd"), std::string::npos) << text;
  EXPECT_NE(text.find("run"), std::string::npos) << text;
}

TEST(Cli, ErrorsPointToTheSubcommandsOwnHelp) {
  std::string text;
  EXPECT_EQ(Tessera("sim run --fleet examples/small", &text), 2);
  EXPECT_NE(text.find("--format is required"), std::string::npos) << text;
  EXPECT_NE(text.find("Run 'tessera sim run --help'"), std::string::npos) << text;
  EXPECT_EQ(Tessera("sim fgd --threads 1 --threads 2 --nodes a --pods b --out c", &text), 2);
  EXPECT_NE(text.find("--threads: given more than once"), std::string::npos) << text;
  EXPECT_NE(text.find("Run 'tessera sim fgd --help'"), std::string::npos) << text;
}

// A wrong path that is endless (/dev/zero) or huge is an error naming the file and the
// limit (common/file.h), with exit 2 — never an exhausted memory and an abort.
TEST(Cli, InputsBeyondTheirSizeLimitAreErrorsNotCrashes) {
  std::string text;
  EXPECT_EQ(Tessera("validate /dev/zero", &text), 2);
  EXPECT_NE(text.find("/dev/zero: larger than 64 MiB, the limit for this kind of input"),
            std::string::npos)
      << text;
  EXPECT_EQ(Tessera("sim fgd --nodes /dev/zero --pods /dev/zero --out /tmp/tessera-zero", &text),
            2);
  EXPECT_NE(text.find("/dev/zero: larger than 256 MiB"), std::string::npos) << text;
  EXPECT_EQ(Tessera("sim run --fleet " + std::string(TESSERA_SOURCE_DIR) +
                        "/examples/small --format jsonl --workload /dev/zero --out "
                        "/tmp/tessera-zero",
                    &text),
            2);
  EXPECT_NE(text.find("/dev/zero: larger than 256 MiB"), std::string::npos) << text;
}

}  // namespace
}  // namespace tessera
