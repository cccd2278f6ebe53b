// The documentation stays navigable: every relative link in README.md, docs/ (with its
// subdirectories) and examples/README.md names a file of the repository, and every #anchor
// a heading of it (GitHub's slugs: lower case, punctuation dropped, spaces as hyphens).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testutil/run_tessera.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::kSourceRoot;

std::string Slug(const std::string& heading) {
  std::string slug;
  for (char c : heading) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (c == ' ' || c == '-') {
      slug += '-';
    } else if (c == '_') {
      slug += '_';
    }
  }
  return slug;
}

std::set<std::string> Anchors(const fs::path& file) {
  std::set<std::string> anchors;
  std::istringstream in(testing::ReadText(file));
  bool fenced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("```", 0) == 0) fenced = !fenced;
    if (fenced || line.empty() || line[0] != '#') continue;
    size_t start = line.find_first_not_of('#');
    if (start == std::string::npos) continue;
    anchors.insert(Slug(line.substr(line.find_first_not_of(' ', start))));
  }
  return anchors;
}

TEST(DocsLinks, EveryRelativeLinkAndAnchorResolves) {
  std::vector<fs::path> pages = {kSourceRoot / "README.md", kSourceRoot / "examples" / "README.md"};
  for (const auto& e : fs::recursive_directory_iterator(kSourceRoot / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  const std::regex link(R"(\]\(([^)\s]+)\))");
  int checked = 0;
  for (const fs::path& page : pages) {
    std::string text = testing::ReadText(page);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), link);
         it != std::sregex_iterator(); ++it) {
      std::string target = (*it)[1];
      if (target.rfind("http", 0) == 0 || target.rfind("mailto:", 0) == 0) continue;
      std::string anchor;
      if (size_t hash = target.find('#'); hash != std::string::npos) {
        anchor = target.substr(hash + 1);
        target = target.substr(0, hash);
      }
      fs::path file = target.empty() ? page : page.parent_path() / target;
      ++checked;
      ASSERT_TRUE(fs::exists(file)) << page.filename() << " links to missing " << target;
      if (!anchor.empty() && file.extension() == ".md") {
        EXPECT_TRUE(Anchors(file).count(anchor))
            << page.filename() << " links to #" << anchor << " which " << file.filename()
            << " has no heading for";
      }
    }
  }
  EXPECT_GT(checked, 20);
}

}  // namespace
}  // namespace tessera
