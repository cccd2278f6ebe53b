#include "config/diagnostics.h"

#include <algorithm>
#include <tuple>

namespace tessera {

std::string Diagnostic::ToString() const {
  std::string out = pos.file;
  if (pos.line > 0) out += ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column);
  out += ": ";
  if (!path.empty()) out += path + ": ";
  out += message;
  return out;
}

void Diagnostics::Error(SourcePos pos, std::string path, std::string message) {
  items_.push_back({std::move(pos), std::move(path), std::move(message)});
}

std::vector<Diagnostic> Diagnostics::Sorted() const {
  std::vector<Diagnostic> out = items_;
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.pos.file, a.pos.line, a.pos.column, a.path, a.message) <
           std::tie(b.pos.file, b.pos.line, b.pos.column, b.path, b.message);
  });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const Diagnostic& a, const Diagnostic& b) {
                          return a.ToString() == b.ToString();
                        }),
            out.end());
  return out;
}

std::string Diagnostics::ToString() const {
  std::string out;
  for (const Diagnostic& d : Sorted())
    out += d.ToString() + "\n";
  return out;
}

}  // namespace tessera
