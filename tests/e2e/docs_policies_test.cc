// The per-kind policy pages (docs/policies/) stay true: each page's example rule loads,
// in place of the example's own rules, with the enterprise fleet, as exactly one rule of the
// page's kind; and every kind has its page.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/loader.h"
#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::kSourceRoot;

// The first ```yaml block of a page.
std::string FirstYaml(const std::string& page) {
  const std::string open = "```yaml\n";
  size_t start = page.find(open);
  if (start == std::string::npos) return "";
  start += open.size();
  size_t end = page.find("```", start);
  return end == std::string::npos ? "" : page.substr(start, end - start);
}

std::string Indent(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    out += (line.empty() ? "" : "  ") + line + "\n";
  return out;
}

TEST(DocsPolicies, EveryPagesExampleLoadsOnTheEnterpriseFleet) {
  const fs::path example = kSourceRoot / "examples" / "enterprise";
  const std::string policies = testing::ReadText(example / "policies.yaml");
  const size_t rules = policies.find("\npolicies:");
  ASSERT_NE(rules, std::string::npos);
  const std::set<std::string> kinds = {"constrain",   "weights",  "preemption", "burst",
                                       "reservation", "fallback", "idleReclaim"};
  std::set<std::string> seen;
  for (const auto& entry : fs::directory_iterator(kSourceRoot / "docs" / "policies")) {
    const std::string snippet = FirstYaml(testing::ReadText(entry.path()));
    ASSERT_FALSE(snippet.empty()) << entry.path();
    std::vector<SourceText> sources;
    for (const auto& file : fs::directory_iterator(example)) {
      if (file.path().filename() == "policies.yaml") continue;
      sources.push_back({file.path().string(), testing::ReadText(file.path())});
    }
    // The example's priority classes and other keys stay; its rules give way to the page's.
    sources.push_back(
        {entry.path().string(), policies.substr(0, rules) + "\npolicies:\n" + Indent(snippet)});
    LoadResult loaded = LoadSpecTexts(sources);
    ASSERT_TRUE(loaded.spec.has_value()) << entry.path() << ":\n"
                                         << loaded.diagnostics.ToString() << "\n"
                                         << snippet;
    ASSERT_EQ(loaded.spec->policies.size(), 1u) << entry.path();
    const std::string kind =
        snippet.substr(snippet.find("kind: ") + 6,
                       snippet.find('\n', snippet.find("kind: ")) - snippet.find("kind: ") - 6);
    EXPECT_TRUE(kinds.count(kind)) << entry.path() << ": " << kind;
    // The example is one of the enterprise's rules, of the same kind.
    const std::string name = loaded.spec->policies[0].name;
    const size_t at = policies.find("- name: " + name + "\n");
    ASSERT_NE(at, std::string::npos) << entry.path() << ": " << name;
    const size_t kind_at = policies.find("kind: ", at);
    EXPECT_EQ(policies.substr(kind_at + 6, kind.size() + 1), kind + "\n") << entry.path();
    seen.insert(kind);
  }
  EXPECT_EQ(seen, kinds);
}

}  // namespace
}  // namespace tessera
