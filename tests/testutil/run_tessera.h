// Runs the tessera binary built with the tests (TESSERA_BINARY), for end-to-end tests, and
// reads back the files it wrote (or the repository's docs).
#pragma once

#include <filesystem>
#include <string>

namespace tessera::testing {

// The repository's root, and the example configurations the e2e tests run.
inline const std::filesystem::path kSourceRoot = TESSERA_SOURCE_DIR;
inline const std::string kEnterprise = std::string(TESSERA_SOURCE_DIR) + "/examples/enterprise";
inline const std::string kLocal = std::string(TESSERA_SOURCE_DIR) + "/examples/local";

// Runs `tessera ARGS` through the shell; stdout (and stderr when `with_stderr`) into `out`
// (null: dropped). `env` ("NAME=value ...") prefixes the command. Returns the exit status.
int RunTessera(const std::string& args, std::string* out = nullptr, bool with_stderr = true,
               const std::string& env = "");

// Runs `command` through the shell; stdout and stderr into `out`. Returns the exit status (-1
// when it did not exit).
int RunShell(const std::string& command, std::string* out);

// How many times `what` occurs in `text` (log lines, output).
int CountOf(const std::string& text, const std::string& what);

// The whole file's bytes; empty when it cannot be read.
std::string ReadText(const std::filesystem::path& path);

}  // namespace tessera::testing
