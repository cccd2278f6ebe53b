// The dependency rule of DESIGN.md §4, checked on the sources: every `#include "FOLDER/..."`
// in src/ names a folder its own may depend on, the pure layers include no I/O library, and
// the two backends share only what backends/ holds. CMake gives every library the whole src/
// as its include directory, so this test is what fails when an arrow runs back up.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace tessera {
namespace {

namespace fs = std::filesystem;

const fs::path kSources = fs::path(TESSERA_SOURCE_DIR) / "src";

// What each folder may include (itself and the folders beneath it, transitively), as the
// arrows of DESIGN.md §4 and the folders' target_link_libraries state them.
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const std::map<std::string, std::set<std::string>> allowed = {
      {"common", {"common"}},
      {"model", {"common", "model"}},
      {"config", {"common", "model", "config"}},
      {"sched", {"common", "model", "sched"}},
      {"engine", {"common", "model", "sched", "engine"}},
      {"sim", {"common", "model", "config", "sched", "engine", "sim"}},
      {"store", {"common", "model", "sched", "engine", "store"}},
      {"backends", {"common", "model", "sched", "engine", "backends"}},
      {"server", {"common", "model", "config", "sched", "engine", "store", "backends", "server"}},
      {"cli",
       {"common", "model", "config", "sched", "engine", "sim", "store", "backends", "server",
        "cli"}},
  };
  return allowed;
}

// Libraries the core (no I/O, no wall clock) must not reach for.
const std::vector<std::string> kIoHeaders = {
    "sqlite3.h", "httplib.h", "boost/", "yaml-cpp/", "nlohmann/", "CLI/",  "spdlog/",
    "unistd.h",  "sys/",      "thread", "mutex",     "fstream",   "chrono"};
const std::set<std::string> kPure = {"common", "model", "sched"};

struct Include {
  fs::path file;
  int line;
  std::string target;  // what is between the quotes or angle brackets
  bool quoted;
};

std::vector<Include> IncludesOf(const fs::path& file) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  std::vector<Include> found;
  std::ifstream in(file);
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    std::smatch m;
    if (std::regex_search(text, m, kInclude))
      found.push_back({file, line, m[2].str(), m[1].str() == "\""});
  }
  return found;
}

std::vector<fs::path> SourcesUnder(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".h" || ext == ".cc" || ext == ".in"))
      files.push_back(e.path());
  }
  return files;
}

std::string Where(const Include& inc) {
  return fs::relative(inc.file, kSources.parent_path()).string() + ":" + std::to_string(inc.line) +
         ": ";
}

TEST(Layering, EveryFolderIsOneOfTheRule) {
  for (const auto& e : fs::directory_iterator(kSources)) {
    if (!e.is_directory()) continue;
    EXPECT_TRUE(Allowed().count(e.path().filename().string()))
        << e.path().filename() << " is in no arrow of the dependency rule (add it to DESIGN "
        << "§4's table and to this test's)";
  }
}

TEST(Layering, NoIncludeRunsBackUpAnArrow) {
  size_t checked = 0;
  for (const auto& [folder, allowed] : Allowed()) {
    ASSERT_TRUE(fs::is_directory(kSources / folder)) << folder;
    for (const auto& file : SourcesUnder(kSources / folder))
      for (const auto& inc : IncludesOf(file)) {
        if (!inc.quoted) continue;
        auto slash = inc.target.find('/');
        if (slash == std::string::npos) continue;  // a generated file beside the source
        std::string to = inc.target.substr(0, slash);
        ++checked;
        EXPECT_TRUE(allowed.count(to)) << Where(inc) << folder << " may not include " << inc.target;
      }
  }
  EXPECT_GT(checked, 500u);  // the walk found the sources
}

// The mutex of common/ is for the layers with threads: the pure core runs on one.
TEST(Layering, ThePureCoreTakesNoMutex) {
  for (const std::string folder : {"model", "sched", "engine"})
    for (const auto& file : SourcesUnder(kSources / folder))
      for (const auto& inc : IncludesOf(file))
        EXPECT_NE(inc.target, "common/mutex.h") << Where(inc) << folder << " runs on one thread";
}

TEST(Layering, TheCoreIncludesNoIoLibrary) {
  for (const auto& folder : kPure)
    for (const auto& file : SourcesUnder(kSources / folder)) {
      if (folder == "common" && (file.filename() == "file.cc" || file.filename() == "clock.cc" ||
                                 file.filename() == "mutex.h"))
        continue;  // the ports' implementations (a file, the system clock), the threads' mutex
      for (const auto& inc : IncludesOf(file)) {
        if (inc.quoted) continue;
        for (const auto& io : kIoHeaders)
          EXPECT_FALSE(inc.target.rfind(io, 0) == 0)
              << Where(inc) << folder << " is pure and may not include <" << inc.target << ">";
      }
    }
}

// The agents' backend and Slurm's share backends/ (run_order.h, shell.h), not each other.
TEST(Layering, TheBackendsIncludeNotEachOther) {
  const std::map<std::string, std::string> kinds = {{"local", "slurm"}, {"slurm", "local"}};
  for (const auto& [kind, other] : kinds)
    for (const auto& file : SourcesUnder(kSources / "backends" / kind))
      for (const auto& inc : IncludesOf(file))
        EXPECT_NE(inc.target.rfind("backends/" + other + "/", 0), 0u)
            << Where(inc) << "backends/" << kind << " may not include " << inc.target;
}

}  // namespace
}  // namespace tessera
