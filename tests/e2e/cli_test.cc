// The command line's conventions through the real binary: unknown verbs and flags are named
// with the closest known one, `help` works as a verb, and errors point to the help of the
// subcommand that was being parsed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

using testing::RunTessera;

TEST(Cli, AnUnknownVerbIsNamedWithTheClosestOne) {
  std::string text;
  EXPECT_EQ(RunTessera("valdate examples/small", &text), 2);
  EXPECT_NE(text.find("unknown command 'valdate' (did you mean 'validate'?)"), std::string::npos)
      << text;
  EXPECT_EQ(RunTessera("completon bash", &text), 2);
  EXPECT_NE(text.find("unknown command 'completon' (did you mean 'completion'?)"),
            std::string::npos)
      << text;
  EXPECT_EQ(RunTessera("-v", &text), 2);
  EXPECT_NE(text.find("unknown flag '-v'"), std::string::npos) << text;
}

TEST(Cli, TheAgentsBadFlagsAreErrorsBeforeItStarts) {
  std::string text;
  // Without TESSERA_TOKEN from the environment (HOME has no config either).
  const std::string env = "env -u TESSERA_TOKEN -u TESSERA_SERVER HOME=/nonexistent ";
  EXPECT_EQ(testing::RunTessera("agent --node n1 --server http://127.0.0.1:1", &text, true, env),
            2);
  EXPECT_NE(text.find("the agent needs the token of an agent principal bound to its node"),
            std::string::npos)
      << text;
  // The token comes from TESSERA_TOKEN (or --token-file) in the cases below.
  const std::string with_token = env + "TESSERA_TOKEN=t ";
  EXPECT_EQ(testing::RunTessera("agent --node n1 --server ftp://x", &text, true, with_token), 2);
  EXPECT_NE(text.find("expected http://HOST:PORT or https://"), std::string::npos) << text;
  EXPECT_EQ(testing::RunTessera("agent --node n1 --grace soon", &text, true, with_token), 2);
  EXPECT_NE(text.find("--grace: expected a duration"), std::string::npos) << text;
  EXPECT_EQ(testing::RunTessera("agent", &text, true, with_token), 2);
  EXPECT_NE(text.find("--node"), std::string::npos) << text;
  EXPECT_EQ(testing::RunTessera("agent --node n1 --devices 0,0", &text, true, with_token), 2);
  EXPECT_NE(text.find("--devices: device 0 is listed twice"), std::string::npos) << text;
  EXPECT_EQ(testing::RunTessera("agent --node n1 --device-tool rocm-smi", &text, true, with_token),
            2);
  EXPECT_NE(text.find("--device-tool: expected auto, nvidia-smi, npu-smi or none, got "
                      "\"rocm-smi\""),
            std::string::npos)
      << text;
  EXPECT_EQ(testing::RunTessera("agent --node n1 --containment jail", &text, true, with_token), 2);
  EXPECT_NE(text.find("--containment: expected auto, cgroup or process-group, got \"jail\""),
            std::string::npos)
      << text;
  // Told to use cgroups where it cannot make them, it says why and does not start.
  EXPECT_EQ(testing::RunTessera("agent --node n1 --work-dir /tmp/tessera-cli-containment "
                                "--containment cgroup --cgroup-root /nonexistent",
                                &text, true, with_token),
            2);
  EXPECT_NE(text.find("--containment cgroup: cannot make /nonexistent/tessera-n1-"),
            std::string::npos)
      << text;
  std::filesystem::remove_all("/tmp/tessera-cli-containment");
  // Never on the command line; a token file others may read is refused; a missing one named.
  EXPECT_EQ(testing::RunTessera("agent --node n1 --token t", &text, true, env), 2);
  EXPECT_NE(text.find("--token: the agent's token on its command line is readable by every "
                      "process on the host"),
            std::string::npos)
      << text;
  EXPECT_EQ(testing::RunTessera("agent --node n1 --token-file /nonexistent/t", &text, true, env),
            2);
  EXPECT_NE(text.find("--token-file /nonexistent/t: No such file or directory"), std::string::npos)
      << text;
  EXPECT_EQ(RunTessera("logs", &text), 2);
}

TEST(Cli, HelpIsAVerbToo) {
  std::string text;
  EXPECT_EQ(RunTessera("help", &text), 0);
  EXPECT_NE(text.find("validate"), std::string::npos) << text;
  EXPECT_EQ(RunTessera("help sim", &text), 0);
  EXPECT_NE(text.find("fgd"), std::string::npos) << text;
  EXPECT_NE(text.find("run"), std::string::npos) << text;
}

TEST(Cli, ErrorsPointToTheSubcommandsOwnHelp) {
  std::string text;
  EXPECT_EQ(RunTessera("sim run --fleet examples/small", &text), 2);
  EXPECT_NE(text.find("--format is required"), std::string::npos) << text;
  EXPECT_NE(text.find("Run 'tessera sim run --help'"), std::string::npos) << text;
  EXPECT_EQ(RunTessera("sim fgd --threads 1 --threads 2 --nodes a --pods b --out c", &text), 2);
  EXPECT_NE(text.find("--threads: given more than once"), std::string::npos) << text;
  EXPECT_NE(text.find("Run 'tessera sim fgd --help'"), std::string::npos) << text;
}

// Missing arguments are named as the usage line names them, never by internal names.
TEST(Cli, MissingArgumentsAreNamedAsInTheUsage) {
  std::string text;
  EXPECT_EQ(RunTessera("validate", &text), 2);
  EXPECT_NE(text.find("FILE_OR_DIR is required"), std::string::npos) << text;
  EXPECT_EQ(text.find("files"), std::string::npos) << text;
  EXPECT_EQ(RunTessera("fleet import --format openb", &text), 2);
  EXPECT_NE(text.find("CSV is required"), std::string::npos) << text;
  EXPECT_EQ(RunTessera("sim fgd --nodes a --pods b --out c --threads 1 --threads 2", &text), 2);
  EXPECT_NE(text.find("--threads: given more than once; give it once"), std::string::npos) << text;
}

// -o is the output format in every command; fleet import writes its file with -f.
TEST(Cli, DashOIsAlwaysTheFormat) {
  std::string text;
  const std::string csv =
      std::string(TESSERA_TEST_DATA) + "/alibaba-gpu-v2023/openb_node_list_gpu_node.csv";
  EXPECT_EQ(RunTessera("fleet import --format openb " + csv + " -o json", &text), 2);
  EXPECT_NE(text.find("--output: json not in {yaml}"), std::string::npos) << text;
  EXPECT_FALSE(std::ifstream("json").good()) << "a file named json was written";
  std::string yaml;
  ASSERT_EQ(testing::RunTessera("fleet import --format openb " + csv, &yaml, false), 0);
  EXPECT_EQ(yaml.rfind("# Imported by", 0), 0u) << yaml.substr(0, 200);
}

// validate -o json: one document for editors and CI, for a good and a bad configuration.
TEST(Cli, ValidateSpeaksJson) {
  std::string text;
  const std::string small = std::string(TESSERA_SOURCE_DIR) + "/examples/small";
  ASSERT_EQ(testing::RunTessera("validate -o json " + small, &text, false), 0) << text;
  auto ok = nlohmann::json::parse(text);
  EXPECT_EQ(ok["ok"], true);
  EXPECT_EQ(ok["counts"]["nodes"], 10);
  fs::path bad =
      fs::temp_directory_path() / ("tessera-bad-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(bad) << "regions:\n  - name: r\n    colour: blue\n";
  ASSERT_EQ(testing::RunTessera("validate -o json " + bad.string(), &text, false), 2) << text;
  auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["ok"], false);
  ASSERT_EQ(doc["errors"].size(), 1u) << doc.dump();
  EXPECT_EQ(doc["errors"][0]["file"], bad.string());
  EXPECT_EQ(doc["errors"][0]["line"], 3);
  EXPECT_EQ(doc["errors"][0]["column"], 5);
  EXPECT_EQ(doc["errors"][0]["field"], "regions[0].colour");
  fs::remove(bad);
}

// The completion scripts come from the command tree: bash completes subcommands, flags and
// the values of flags with fixed choices; zsh registers the same function with compsys.
TEST(Cli, ShellCompletionForBashAndZsh) {
  std::string script;
  ASSERT_EQ(testing::RunTessera("completion bash", &script, false), 0);
  fs::path file = fs::temp_directory_path() / ("tessera-comp-" + std::to_string(::getpid()));
  std::ofstream(file) << script;
  auto complete = [&](const std::string& words, int cword) {
    std::string cmd = "bash -c 'source " + file.string() + "; COMP_WORDS=(" + words +
                      "); COMP_CWORD=" + std::to_string(cword) +
                      "; _tessera; echo \"${COMPREPLY[*]}\"' 2>&1";
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    while (p != nullptr && ::fgets(buf, sizeof buf, p) != nullptr)
      out += buf;
    if (p != nullptr) ::pclose(p);
    return out;
  };
  EXPECT_EQ(complete("tessera sim f", 2), "fgd\n");
  EXPECT_EQ(complete("tessera fleet x.yaml -o \"\"", 4), "table json yaml\n");
  EXPECT_EQ(complete("tessera fleet import --tier e", 4), "elastic\n");
  EXPECT_EQ(complete("tessera place --o", 2), "--output\n");
  EXPECT_EQ(complete("tessera sim fgd --tune \"\"", 4), "\n");  // a number: no file names

  ASSERT_EQ(testing::RunTessera("completion zsh", &script, false), 0);
  std::ofstream(file) << script;
  std::string zsh;
  // compinit replaces its dump file: never /dev/null (as root that turns the device into a
  // plain file for everything on the machine).
  const fs::path dump = file.string() + ".zcompdump";
  std::string cmd = "zsh -f -c 'autoload -U compinit && compinit -u -d " + dump.string() +
                    "; source " + file.string() + " && print -r -- ${_comps[tessera]}' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  while (::fgets(buf, sizeof buf, p) != nullptr)
    zsh += buf;
  EXPECT_EQ(::pclose(p), 0) << zsh;
  EXPECT_NE(zsh.find("_tessera"), std::string::npos) << zsh;
  fs::remove(file);
  fs::remove(dump);
}

// A wrong path that is endless (/dev/zero) or huge is an error naming the file and the
// limit (common/file.h), with exit 2 — never an exhausted memory and an abort.
TEST(Cli, InputsBeyondTheirSizeLimitAreErrorsNotCrashes) {
  std::string text;
  EXPECT_EQ(RunTessera("validate /dev/zero", &text), 2);
  EXPECT_NE(text.find("/dev/zero: larger than 64 MiB, the limit for this kind of input"),
            std::string::npos)
      << text;
  EXPECT_EQ(RunTessera("sim fgd --nodes /dev/zero --pods /dev/zero --out /tmp/tessera-zero", &text),
            2);
  EXPECT_NE(text.find("/dev/zero: larger than 256 MiB"), std::string::npos) << text;
  EXPECT_EQ(RunTessera("sim run --fleet " + std::string(TESSERA_SOURCE_DIR) +
                           "/examples/small --format jsonl --workload /dev/zero --out "
                           "/tmp/tessera-zero",
                       &text),
            2);
  EXPECT_NE(text.find("/dev/zero: larger than 256 MiB"), std::string::npos) << text;
}

}  // namespace
}  // namespace tessera
