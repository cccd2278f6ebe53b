// Diagnostics: every error found in the configuration, each naming file:line:column, the
// field path (`clusters[2].nodeGroups[0].devices.count`) and what was expected. Loading
// collects all of them rather than stopping at the first.
#pragma once

#include <string>
#include <vector>

namespace tessera {

struct SourcePos {
  std::string file;
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based; 0 = unknown
};

struct Diagnostic {
  SourcePos pos;
  std::string path;     // field path within the file, "" for file-level errors
  std::string message;  // what is wrong and what was expected

  // "fleet.yaml:12:7: clusters[0].nodeGroups[1].devices.count: expected ..."
  std::string ToString() const;
};

class Diagnostics {
 public:
  void Error(SourcePos pos, std::string path, std::string message);
  // A remark about the run as a whole (not an error; printed after the count).
  void Note(std::string text) { notes_.push_back(std::move(text)); }
  const std::vector<std::string>& notes() const { return notes_; }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  // Sorted by file, line, column, then message, for stable output.
  std::vector<Diagnostic> Sorted() const;
  // All diagnostics, one per line, sorted.
  std::string ToString() const;

 private:
  std::vector<Diagnostic> items_;
  std::vector<std::string> notes_;
};

}  // namespace tessera
